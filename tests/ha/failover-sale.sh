#!/usr/bin/env bash
# The acceptance test of the formation (issue 34, short mode): scripts/ha-lab.sh brings up the
# book on three PostgreSQL nodes (pg_auto_failover, synchronous standby), Redis Cluster and
# three flashstock-server behind HAProxy; `flashstock-cli drill --via` sells through HAProxy;
# during the sale the book's primary is lost (its keeper and postmaster SIGKILLed: a lost
# machine). Passes when every reservation answered `reserved` and every payment answered
# `paid` is in the book afterwards, nothing is oversold and I1-I6 hold after the wind-down
# (the drill's own checks, exit 0). Prints the write outage: from the kill to the first
# successful reserve of a probe that reserves through HAProxy every 0.1 s.
#
# Usage: tests/ha/failover-sale.sh BUILD_DIR   (ctest: ha_failover_sale)
# Exit 77 (skipped) when a tool is missing on a developer machine; under CI a missing tool fails.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
cli_bin="$build/app/flashstock-cli"
for tool in pg_autoctl haproxy redis-server redis-cli psql curl jq; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is not installed (scripts/install-deps.sh)" >&2
    [ -n "${CI:-}" ] && exit 1
    exit 77
  fi
done

work=$(mktemp -d /tmp/flashstock-ha-test.XXXXXX)
chmod 755 "$work" # the lab's PostgreSQL runs as postgres when we are root
lab="$work/lab"
probe_pid=""
cleanup() {
  set +e
  [ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null && wait "$probe_pid" 2>/dev/null
  bash "$repo/scripts/ha-lab.sh" down --dir "$lab" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "ha-failover-sale: $*" >&2; }

bash "$repo/scripts/ha-lab.sh" up --dir "$lab" --build-dir "$build" >/dev/null
status=$(bash "$repo/scripts/ha-lab.sh" status --json --dir "$lab")
say "$(echo "$status" | jq -c '{primary, synchronous}')"
[ "$(echo "$status" | jq -r .synchronous)" = true ] || { say "commits are not synchronous before the sale"; exit 1; }
storefront=$(echo "$status" | jq -r .storefront)
token_file=$(echo "$status" | jq -r .token_file)
export PGPASSWORD
PGPASSWORD=$(cat "$(echo "$status" | jq -r .book_password_file)")
mkdir -m 700 "$work/data" "$work/home"
cli() {
  HOME="$work/home" XDG_DATA_HOME="$work/home" "$cli_bin" --data-dir "$work/data" --db "$(echo "$status" | jq -r .book)" \
    --redis "$(echo "$status" | jq -r .gate)" --operator ha-test "$@"
}

# The probe: one fresh order of one unit every 0.1 s through HAProxy; a line per answer.
probe_sku=probe-$$
cli sku add "$probe_sku" --stock 1000000 >/dev/null
(
  umask 077
  printf 'header = "Authorization: Bearer %s"\n' "$(head -1 "$token_file")" > "$work/curl.cfg"
  i=0
  while :; do
    i=$((i + 1))
    sent=$(date +%s%3N)
    answer=$(curl -s -m 3 -K "$work/curl.cfg" -H 'Content-Type: application/json' \
      -d "{\"order\":\"probe-$i\",\"user\":\"p$i\",\"lines\":[{\"sku\":\"$probe_sku\",\"qty\":1}]}" \
      "$storefront/v1/reservations" | jq -r '.result // "error"' 2>/dev/null || echo none)
    echo "$sent $answer"
    sleep 0.1
  done
) > "$work/probe.log" &
probe_pid=$!

# The sale: 3000 buyers for 600 units, 4 at a time, through HAProxy.
buyers=3000
cli --json drill --sku "sale-$$" --stock 600 --buyers $buyers --concurrency 4 --pay-ratio 0.7 --hold-seconds 3 \
  --faults none --seed 1 --via "$storefront" --token-file "$token_file" > "$work/drill.json" 2> "$work/drill.err" &
drill_pid=$!

# The kill, once a tenth of the buyers are answered (the drill prints its progress each second).
answered=0
for _ in $(seq 1200); do
  answered=$(grep -o 'drill \[sale\] [0-9]*' "$work/drill.err" | tail -1 | awk '{print $3}' || true)
  answered=${answered:-0}
  [ "$answered" -ge $((buyers / 10)) ] && break
  kill -0 $drill_pid 2>/dev/null || break
  sleep 0.1
done
[ "$answered" -lt "$buyers" ] || { say "the sale ended before the kill; more buyers are needed"; exit 1; }
killed=$(bash "$repo/scripts/ha-lab.sh" kill-primary --dir "$lab")
killed_at=$(echo "$killed" | jq .killed_at_ms)
say "primary lost with $answered of $buyers buyers answered: $killed"

rc=0
wait $drill_pid || rc=$?
kill "$probe_pid" 2>/dev/null; wait "$probe_pid" 2>/dev/null || true
probe_pid=""
after=$(bash "$repo/scripts/ha-lab.sh" status --json --dir "$lab")
say "after: $(echo "$after" | jq -c '{primary, synchronous}')"

# The write outage: from the kill to the first probe reserve answered `reserved` that was sent
# after it (the probe's own resolution, 0.1 s plus one round trip).
outage=$(awk -v k="$killed_at" '$1 > k && $2 == "reserved" { printf "%.1f", ($1 - k) / 1000; exit }' "$work/probe.log")
failed_probes=$(awk -v k="$killed_at" '$1 > k && $2 != "reserved" { n++ } END { print n + 0 }' "$work/probe.log")
say "write outage: ${outage:-no reserve succeeded after the kill} s ($failed_probes probes without a reservation)"

report=$(cat "$work/drill.json")
echo "$report" | jq -c '{passed, sold, paid_units, oversold, stuck, lost_reservations, lost_payments, invariants,
  reserve: .outcomes, payments}' >&2 || true
ok=1
[ "$rc" = 0 ] && [ "$(echo "$report" | jq -r .passed)" = true ] || { say "the drill failed (exit $rc)"; ok=0; }
for field in oversold stuck lost_reservations lost_payments; do
  [ "$(echo "$report" | jq -r ".$field")" = 0 ] || { say "$field is $(echo "$report" | jq -r ".$field")"; ok=0; }
done
[ "$(echo "$report" | jq '[.invariants[]] | all')" = true ] || { say "an invariant failed"; ok=0; }
[ -n "$outage" ] || { say "no reserve succeeded through HAProxy after the kill"; ok=0; }
if [ $ok = 0 ]; then
  say "drill stderr (last lines):"
  tail -n 20 "$work/drill.err" >&2
  echo "$report" | jq '.notes // empty' >&2
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
