#!/usr/bin/env bash
# The acceptance test of the formation (issue 34, short mode): scripts/ha-lab.sh brings up the
# book on three PostgreSQL nodes (pg_auto_failover, synchronous standby), Redis Cluster and
# three flashstock-server behind HAProxy; `flashstock-cli drill --via` sells through HAProxy
# and, told the formation (`--formation`, from `ha-lab.sh status --json`), acts out its
# faults during the sale, once each: book-failover (the primary's keeper and postmaster
# SIGKILLed: a lost machine), standby-loss (a synchronous standby lost the same way) and
# server-kill (one server behind HAProxy). Passes when every reservation answered `reserved`
# and every payment answered `paid` is in the book afterwards (acknowledged and lost 0),
# nothing is oversold, I1-I6 hold after the wind-down, no commit was acknowledged while the
# primary wrote alone after the standby's loss, and the writes came back after each fault
# (the drill's own checks, exit 0). Prints each fault's write outage (the drill's probe
# reserves through HAProxy every 0.1 s). Before the sale, a server's /readyz must say the
# book's commits are synchronous.
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
cleanup() {
  set +e
  bash "$repo/scripts/ha-lab.sh" down --dir "$lab" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "ha-failover-sale: $*" >&2; }
began=$SECONDS

bash "$repo/scripts/ha-lab.sh" up --dir "$lab" --build-dir "$build" >/dev/null
bash "$repo/scripts/ha-lab.sh" status --json --dir "$lab" > "$work/formation.json"
status=$(cat "$work/formation.json")
say "$(echo "$status" | jq -c '{primary, synchronous}') after $((SECONDS - began)) s"
[ "$(echo "$status" | jq -r .synchronous)" = true ] || { say "commits are not synchronous before the sale"; exit 1; }
ready=$(curl -s "$(echo "$status" | jq -r '.servers[0]')/readyz")
[ "$(echo "$ready" | jq -r .book_replication.state)" = synchronous ] \
  || { say "a server's /readyz does not say the commits are synchronous: $ready"; exit 1; }
export PGPASSWORD
PGPASSWORD=$(cat "$(echo "$status" | jq -r .book_password_file)")
mkdir -m 700 "$work/data" "$work/home"

# The sale: 3000 buyers for 600 units, 4 at a time, through HAProxy, the faults once each.
rc=0
HOME="$work/home" XDG_DATA_HOME="$work/home" "$cli_bin" --data-dir "$work/data" --db "$(echo "$status" | jq -r .book)" \
  --redis "$(echo "$status" | jq -r .gate)" --operator ha-test --json drill --sku "sale-$$" --stock 600 --buyers 3000 \
  --concurrency 4 --pay-ratio 0.7 --hold-seconds 3 --faults book-failover=once,standby-loss=once,server-kill=once \
  --seed 1 --via "$(echo "$status" | jq -r .storefront)" --token-file "$(echo "$status" | jq -r .token_file)" \
  --formation "$work/formation.json" > "$work/drill.json" 2> "$work/drill.err" || rc=$?
after=$(bash "$repo/scripts/ha-lab.sh" status --json --dir "$lab")
say "after: $(echo "$after" | jq -c '{primary, synchronous}')"

report=$(cat "$work/drill.json")
echo "$report" | jq -c '{passed, sold, paid_units, oversold, stuck, lost_reservations, lost_payments, acknowledged_lost,
  invariants, reserve: .outcomes, payments}' >&2 || true
for fault in book-failover standby-loss server-kill; do
  say "$fault: $(echo "$report" | jq -c --arg f "$fault" '.faults[$f] | {injected, healed, outage_s, writing_alone_s, acknowledged_lost}')"
done
ok=1
[ "$rc" = 0 ] && [ "$(echo "$report" | jq -r .passed)" = true ] || { say "the drill failed (exit $rc)"; ok=0; }
for field in oversold stuck lost_reservations lost_payments acknowledged_lost; do
  [ "$(echo "$report" | jq -r ".$field")" = 0 ] || { say "$field is $(echo "$report" | jq -r ".$field")"; ok=0; }
done
[ "$(echo "$report" | jq '[.invariants[]] | all')" = true ] || { say "an invariant failed"; ok=0; }
for fault in book-failover standby-loss server-kill; do
  [ "$(echo "$report" | jq --arg f "$fault" '.faults[$f] | .injected == 1 and .healed == 1 and .outage_s != null')" = true ] \
    || { say "$fault was not injected once and healed, with the writes back after it"; ok=0; }
done
say "$((SECONDS - began)) s in all"
if [ $ok = 0 ]; then
  say "drill stderr (last lines):"
  tail -n 20 "$work/drill.err" >&2
  echo "$report" | jq '.notes // empty' >&2
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
