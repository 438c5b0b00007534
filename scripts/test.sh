#!/usr/bin/env bash
# Sets up (packages, build) and runs every test against real servers: a throwaway
# PostgreSQL and redis-server on 127.0.0.1, stopped on exit. Extra arguments go to ctest
# (e.g. -R book).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec bash scripts/with-test-servers.sh ctest --test-dir build --output-on-failure "$@"
