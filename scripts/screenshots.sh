#!/usr/bin/env bash
# Renders each main view of the console, offscreen, on seeded data into docs/screenshots/.
# Builds nothing: expects the binaries in $BUILD_DIR (default: build/).
#
#   scripts/screenshots.sh            # -> docs/screenshots/{live,sales,skus,sku-restock,drill,reconciliation,ledger,servers,launch-wizard}.png
#   BUILD_DIR=build-ui scripts/screenshots.sh
#   scripts/screenshots.sh --installed  # -> docs/screenshots/installed.png, see below
#
# --installed: the console as a desktop user meets it, with flashstock-console installed
# (apt-get install ./build/packages/*.deb): started as a launcher does, by the installed
# desktop entry's Exec line, on Xvfb under openbox, which draws the window's icon in its
# title bar; the whole screen is grabbed. Installs openbox if missing.
#
# Seeds a throwaway data dir through flashstock-cli (embedded redis-server, stopped at the
# end): SKUs in every sale state (open, scheduled, book-only, stopped, none, one paused by a
# discrepancy), an open sale with paid, pending and released orders, one negative drift
# (approved once, waiting for a second approver) and one gate excess for the reconciler. Two
# flashstock-servers work on the book; one is killed (servers.png shows it stopped). A crowd
# of buyers reserves through the other while the console samples (some over the per-user
# limit), so the live chart and rates move. The console reads the servers' /metrics with a
# read token (FLASHSTOCK_TOKEN). The console runs a small scratch drill for drill.png.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [[ "${1:-}" == --installed ]]; then
  entry=/usr/share/applications/io.flashstock.Console.desktop
  [[ -f "$entry" ]] || { echo "install flashstock-console first: $entry is missing" >&2; exit 2; }
  bash "$ROOT/scripts/install-deps.sh" openbox >&2
  DATA="$(mktemp -d /tmp/fs-shots.XXXXXX)"
  export FLASHSTOCK_DATA_DIR="$DATA" DISPLAY=":$(( 90 + RANDOM % 100 ))"
  unset QT_QPA_PLATFORM
  PIDS=()
  cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    /usr/bin/flashstock-cli embedded stop >/dev/null 2>&1 || true
    rm -rf "$DATA"
  }
  trap cleanup EXIT
  /usr/bin/flashstock-cli sku add PHONE-X --stock 500 >/dev/null
  /usr/bin/flashstock-cli sku add EARBUDS --stock 2000 >/dev/null
  Xvfb "$DISPLAY" -screen 0 1440x900x24 -nolisten tcp >/dev/null 2>&1 & PIDS+=($!)
  sleep 1
  openbox >/dev/null 2>&1 & PIDS+=($!)
  sleep 1
  exec_line=$(sed -n 's/^Exec=//p' "$entry")
  $exec_line & PIDS+=($!)
  for _ in $(seq 50); do
    xwininfo -root -tree 2>/dev/null | grep -q 'FlashStock console' && break
    sleep 0.2
  done
  sleep 4   # the first samples arrive and the window settles
  mkdir -p "${OUT:-$ROOT/docs/screenshots}"
  import -window root "${OUT:-$ROOT/docs/screenshots}/installed.png"
  ls -1 "${OUT:-$ROOT/docs/screenshots}/installed.png"
  exit 0
fi
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
CLI="$BUILD_DIR/app/flashstock-cli"
CONSOLE="$BUILD_DIR/app/flashstock"
SERVER="$BUILD_DIR/app/flashstock-server"
OUT="${OUT:-$ROOT/docs/screenshots}"
for bin in "$CLI" "$CONSOLE" "$SERVER"; do
  [[ -x "$bin" ]] || { echo "missing $bin: build first (cmake --build $BUILD_DIR)" >&2; exit 2; }
done

DATA="$(mktemp -d /tmp/fs-shots.XXXXXX)"
export FLASHSTOCK_DATA_DIR="$DATA"
printf "[approval]\napprovers=ops,alice\n" > "$DATA/flashstock.ini"   # seeds the book's approver policy
export QT_QPA_PLATFORM=offscreen
BG=""
SERVERS=()
cleanup() {
  [[ -n "$BG" ]] && kill "$BG" 2>/dev/null || true
  for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$CLI" embedded stop >/dev/null 2>&1 || true
  rm -rf "$DATA"
}
trap cleanup EXIT
cli() { "$CLI" --operator ops "$@" >/dev/null; }

cli sku add PHONE-X --stock 500 --buckets 4
cli sku add EARBUDS --stock 2000
cli sku add CHARGER --stock 300
cli sku add TABLET --stock 80
cli sku add CASE --stock 120
sale() { "$CLI" --operator ops --json sale create "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sale"])'; }
cli sale start "$(sale --sku CASE --hold-seconds 120)"
cli sale stop 1
SALE="$(sale --sku PHONE-X --hold-seconds 120 --per-user-limit 2)"
cli sale start "$SALE"
sale --sku CHARGER --hold-seconds 300 --per-user-limit 0 >/dev/null
TABLET_SALE="$(sale --sku TABLET --hold-seconds 120 --per-user-limit 1)"
cli sale start "$TABLET_SALE"
cli sale book-only "$TABLET_SALE" on
for i in $(seq 1 40); do
  cli reserve --order "o$i" --sku PHONE-X --qty 1 --user "u$i"
  if (( i % 3 == 0 )); then cli release --order "o$i" --reason cancel
  elif (( i % 2 == 0 )); then cli confirm --order "o$i" --payment "pay-$i"; fi
done
for i in $(seq 1 15); do cli reserve --order "e$i" --sku EARBUDS --qty 2; cli confirm --order "e$i" --payment "epay-$i"; done

# Discrepancies: units the ledger cannot explain (waits for approval) and a gate above the book (healed).
sqlite3 "$DATA/flashstock.db" "UPDATE buckets SET available = available + 6, total = total + 6 WHERE sku = 'CHARGER' AND bucket = 0;"
redis-cli -s "$DATA/redis.sock" HINCRBY 'fs:{EARBUDS}:gate' available 7 >/dev/null
"$CLI" reconcile --grace 0 --unsafe-grace >/dev/null || true   # exit 3: pending approval, as intended
# Four eyes above 5 units: ops approves the 6 units once; the discrepancy waits for alice.
cli approver policy --four-eyes-units 5
read -r PENDING SEEN < <("$CLI" --json discrepancy list --status pending_approval | python3 -c '
import json, sys
d = [d for d in json.load(sys.stdin)["discrepancies"] if d["sku"] == "CHARGER"][0]
print(d["id"], d["fingerprint"])')
cli discrepancy approve "$PENDING" --seen "$SEEN" --reason "recounted: 6 units arrived unbooked"

# Two servers on the book and gate; the second is killed once it has beaten a few times.
token="$("$CLI" --operator ops --json token add shots --scope reserve,pay,read | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
serve() { # LOG: starts a server on a free port; its port in SERVED_PORT, its pid in SERVERS
  "$SERVER" --data-dir "$DATA" --listen 127.0.0.1:0 --operator ops --expire-every 1 2>"$1" & SERVERS+=($!)
  SERVED_PORT=""
  for _ in $(seq 100); do
    SERVED_PORT="$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1")"
    [[ -n "$SERVED_PORT" ]] && return
    sleep 0.1
  done
  echo "flashstock-server did not start: $(cat "$1")" >&2; exit 1
}
serve "$DATA/server-a.log"
PORT="$SERVED_PORT"
serve "$DATA/server-b.log"
sleep 3
kill -9 "${SERVERS[1]}"

# A crowd through the first server while the console samples: bursts of 20 buyers at once,
# one in three asking for more than the per-user limit, half of the others paying a burst later. The token goes in a file only the
# user can read, never on a command line.
CURLCFG="$DATA/crowd.curl"
(
  umask 077
  b=0
  while true; do
    b=$((b + 1))
    for i in $(seq 1 20); do
      q=1; (( i % 3 == 0 )) && q=3
      (( i > 1 )) && echo next
      echo "url = \"http://127.0.0.1:$PORT/v1/reservations\""
      echo "header = \"Authorization: Bearer $token\""
      echo 'header = "Content-Type: application/json"'
      echo "data = \"{\\\"order\\\":\\\"c$b-$i\\\",\\\"user\\\":\\\"buyer$b-$i\\\",\\\"lines\\\":[{\\\"sku\\\":\\\"PHONE-X\\\",\\\"qty\\\":$q}]}\""
      echo 'output = "/dev/null"'
      # and half of the last burst's buyers pay
      if (( b > 1 && i % 2 == 0 && i % 3 != 0 )); then
        echo next
        echo "url = \"http://127.0.0.1:$PORT/v1/orders/c$((b - 1))-$i/confirm\""
        echo "header = \"Authorization: Bearer $token\""
        echo 'header = "Content-Type: application/json"'
        echo "data = \"{\\\"payment\\\":\\\"pay-$((b - 1))-$i\\\"}\""
        echo 'output = "/dev/null"'
      fi
    done > "$CURLCFG"
    curl -s --parallel --parallel-max 20 --config "$CURLCFG" >/dev/null 2>&1 || true
    sleep 0.4
  done
) &
BG=$!
export FLASHSTOCK_TOKEN="$token"

mkdir -p "$OUT"
"$CONSOLE" --operator ops --screenshot "$OUT"
ls -1 "$OUT"/*.png
