#!/usr/bin/env bash
# The main job: sets up (packages, build) and runs a rehearsal flash sale on the embedded
# defaults (the SQLite book in the data dir), then prints the report: the SKU as the book
# holds it, what each buyer got, and the ledger's totals.
#   FLASHSTOCK_DATA_DIR  data dir to use (default: ~/.local/share/flashstock)
#   BUYERS, STOCK        size of the rehearsal (default 300 buyers for 100 units)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
cli="$PWD/build/app/flashstock-cli"
buyers=${BUYERS:-300}
stock=${STOCK:-100}
sku="rehearsal-$(date -u +%Y%m%d-%H%M%S)"
export FLASHSTOCK_DATA_DIR=${FLASHSTOCK_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/flashstock}

echo "== rehearsal: $buyers buyers race for $stock units of $sku (book: $FLASHSTOCK_DATA_DIR/flashstock.db)"
"$cli" sku add "$sku" --stock "$stock" --redis none >/dev/null
results=$(mktemp)
trap 'rm -f "$results"' EXIT
# Every buyer reserves one unit at once (8 at a time); two in three of the winners pay,
# the rest cancel.
seq 1 "$buyers" | xargs -P 8 -I{} sh -c '
  out=$("$0" reserve --order "$1-o{}" --sku "$1" --qty 1 --user "u{}" --redis none --json)
  case "$out" in
    *\"reserved\"*)
      if [ $(( {} % 3 )) -ne 0 ]; then "$0" confirm --order "$1-o{}" --payment "pay-{}" --redis none --json
      else "$0" release --order "$1-o{}" --reason cancel --redis none --json; fi ;;
    *) echo "$out" ;;
  esac' "$cli" "$sku" >"$results"
"$cli" expire --redis none >/dev/null

echo "== answers by result word"
grep -o '"result":"[a-z_]*"' "$results" | sort | uniq -c
echo "== the book"
"$cli" sku show "$sku" --redis none
echo "== ledger of $sku: rows by operation"
"$cli" ledger --sku "$sku" --redis none --json | grep -o '"operation":"[A-Z]*"' | sort | uniq -c
sold=$("$cli" sku show "$sku" --redis none --json | grep -o '"sold":[0-9]*' | head -1 | cut -d: -f2)
paid=$(grep -c '"paid"' "$results" || true)
echo "== oversold: $(( sold > stock ? sold - stock : 0 ))   sold: $sold   payments answered paid: $paid"
[ "$sold" -le "$stock" ] && [ "$sold" -eq "$paid" ]
