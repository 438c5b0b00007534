#!/usr/bin/env bash
# Sets up (packages, build) and runs every test against real servers: a throwaway
# PostgreSQL and redis-server on 127.0.0.1, stopped on exit. Extra arguments go to ctest
# (e.g. -R book).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Suites run side by side (one per core): each starts its own redis-server and creates its
# own PostgreSQL database, so they share nothing but the PostgreSQL server.
exec bash scripts/with-test-servers.sh ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
