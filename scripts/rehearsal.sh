#!/usr/bin/env bash
# The main job: sets up (packages, build) and runs the rehearsal drill on the embedded
# defaults (the SQLite book and the private redis-server of the data dir): 20 000 buyers
# race for 1 000 units with every fault kind on (crash after the gate, lost, duplicate and
# late payments, a Redis restart, SCRIPT FLUSH, a failing book transaction); then every
# hold expires, the reconciler runs to quiescence and I1-I6 are checked against the book
# and the gate. Exit 0 only if every invariant holds with nothing oversold or stuck.
#   FLASHSTOCK_DATA_DIR  data dir to use (default: ~/.local/share/flashstock)
#   BUYERS, STOCK, CONCURRENCY, HOLD_SECONDS, FAULTS, SEED   size and shape of the drill
# Extra arguments go to the drill (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
cli="$PWD/build/app/flashstock-cli"
export FLASHSTOCK_DATA_DIR=${FLASHSTOCK_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/flashstock}
# A fresh SKU each run: the drill creates its SKU and refuses one that exists.
sku="drill-$(date -u +%Y%m%d-%H%M%S)-$$"
exec "$cli" drill --sku "$sku" \
  --stock "${STOCK:-1000}" --buyers "${BUYERS:-20000}" --concurrency "${CONCURRENCY:-8}" \
  --pay-ratio 0.7 --hold-seconds "${HOLD_SECONDS:-2}" --faults "${FAULTS:-all}" --seed "${SEED:-1}" "$@"
