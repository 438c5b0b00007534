#!/usr/bin/env bash
# The full benchmark suite as docs/benchmarks.md quotes it: builds, starts a throwaway PostgreSQL
# with durable commits (and a redis-server), and runs `flashstock-cli bench` on scratch
# databases. Extra arguments go to the bench (e.g. --quick, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
DURABLE=1 exec bash scripts/with-test-servers.sh \
  bash -c 'exec build/app/flashstock-cli bench --bench-pg "$FLASHSTOCK_TEST_PG_URL" --redis "$FLASHSTOCK_TEST_REDIS_URL" "$@"' bench "$@"
