#!/usr/bin/env bash
# The server benchmark: a throwaway PostgreSQL with durable commits, a real redis-server,
# flashstock-server on them, and wrk with scripts/wrk-reserve.lua (a fresh order id per
# request). Each layer's cost shows beside its own baseline, measured
# in the same run on the same servers:
#   crowd    N buyers for N/100 units of one SKU over 256 connections: answers/s, p50/p99,
#            beside redis-benchmark (50 clients, not pipelined) running the gate's reserve
#            script with the same keys on the sold-out SKU (the call comes from
#            `flashstock-cli gate script-keys`, the gate's own code); oversold from the book.
#            In rounds (3; --quick 1), each a fresh SKU: the crowd, then redis-benchmark on
#            it, so the two alternate; the figure is the round with the median ratio, and
#            every round's figures are printed and in the JSON (crowd.rounds)
#   healthz  GET /healthz per second (the HTTP floor)
#   engine   the same crowd through the in-process engine (`flashstock-cli bench`, its crowd)
#   winners  stock larger than the buyers, 32 connections, one hot SKU: committed
#            reservations/s beside pgbench's single-order transaction at 32 clients
#            (`flashstock-cli bench`'s pgbench case, the same script the book bench runs)
# Prints a table and one JSON object (with --json: only the JSON on stdout, the table on
# stderr). Exit 0 when every answer came and nothing was oversold or lost; 1 otherwise.
#
# Usage: scripts/bench-server.sh [--quick] [--json] [--rounds N] [--build-dir DIR]
#   --quick      small numbers (CI: a few thousand buyers, 1-2 s phases; under a minute)
#   --rounds     crowd rounds (default 3, with --quick 1)
#   --build-dir  use the binaries of DIR (default: build/, set up and built first)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 json_only=0 build_dir="" rounds=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --json) json_only=1 ;;
    --build-dir) build_dir="${2:?--build-dir needs a directory}"; shift ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift
              [[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "--rounds: a whole number from 1, got '$rounds'" >&2; exit 2; } ;;
    *) echo "usage: $0 [--quick] [--json] [--rounds N] [--build-dir DIR]" >&2; exit 2 ;;
  esac
  shift
done

# Outside the throwaway servers: build (unless told where the binaries are), then run this
# script again inside scripts/with-test-servers.sh with durable commits.
if [ -z "${FLASHSTOCK_BENCH_SERVER_INSIDE:-}" ]; then
  args=()
  [ $quick = 1 ] && args+=(--quick)
  [ $json_only = 1 ] && args+=(--json)
  [ -n "$rounds" ] && args+=(--rounds "$rounds")
  if [ -z "$build_dir" ]; then
    bash scripts/setup.sh >&2
    build_dir=build
  fi
  args+=(--build-dir "$(cd "$build_dir" && pwd)")
  FLASHSTOCK_BENCH_SERVER_INSIDE=1 DURABLE=1 exec bash scripts/with-test-servers.sh bash "$0" "${args[@]}"
fi

for tool in wrk redis-benchmark redis-cli jq curl; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (run scripts/install-deps.sh)" >&2; exit 1; }
done
cli="$build_dir/app/flashstock-cli"
server="$build_dir/app/flashstock-server"
lua="$PWD/scripts/wrk-reserve.lua"

if [ $quick = 1 ]; then
  buyers=3000 conns=64 winners_seconds=2 healthz_seconds=1 rb_requests=20000 bench_seconds=2 wrk_limit=40
  rounds=${rounds:-1}
else
  buyers=100000 conns=256 winners_seconds=10 healthz_seconds=5 rb_requests=200000 bench_seconds=5 wrk_limit=600
  rounds=${rounds:-3}
fi
units=$((buyers / 100))
winners_conns=32 rb_clients=50 threads=2

say() { echo "bench-server: $*" >&2; }
# A figure a tool printed, as a JSON number (0 when it printed none).
num() { if [[ "${1:-}" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then echo "$1"; else echo 0; fi; }
work=$(mktemp -d /tmp/flashstock-bench-server.XXXXXX)
server_pid=""
cleanup() {
  set +e
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# The password goes through the environment only; the URLs carry none.
export PGPASSWORD="$FLASHSTOCK_TEST_PG_PASSWORD"
db="${FLASHSTOCK_TEST_PG_URL/:$PGPASSWORD@/@}"
redis="$FLASHSTOCK_TEST_REDIS_URL"
redis_host_port="${redis#redis://}"
redis_host="${redis_host_port%:*}" redis_port="${redis_host_port##*:}"
mkdir -m 700 "$work/data"
fs() { "$cli" --data-dir "$work/data" --db "$db" --redis "$redis" --operator bench "$@"; }
run_id=$(date -u +%H%M%S)
winners_sku="winners-$run_id"

fs sku add "$winners_sku" --stock 100000000 >/dev/null
token=$(fs --json token add "bench-$run_id" --scope reserve,read | jq -r .token)
(umask 077; printf 'Authorization: Bearer %s\n' "$token" > "$work/token.header")

"$server" --data-dir "$work/data" --db "$db" --redis "$redis" --operator bench --listen 127.0.0.1:0 \
  --pid-file "$work/server.pid" 2>"$work/server.log" &
server_pid=$!
url=""
for _ in $(seq 200); do
  url=$(grep -o 'listening on http://[0-9.:]*' "$work/server.log" | head -1 | sed 's/listening on //') || true
  [ -n "$url" ] && curl -sf "$url/readyz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.05
done
[ -n "$url" ] || { echo "flashstock-server did not become ready:" >&2; cat "$work/server.log" >&2; exit 1; }
say "server at $url (book $db, gate $redis); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# One book reserve metric of the server: sum or count of its reserve jobs.
book_metric() {
  curl -s -H @"$work/token.header" "$url/metrics" \
    | awk -v m="flashstock_book_round_trip_seconds_$1" '$1 ~ "^"m"\\{" && $1 ~ /operation="reserve"/ { v += $2 } END { print v + 0 }'
}

# wrk with the buyers' script; its JSON line on stdout.
buyers_run() { # SKU RUN BUYERS CONNECTIONS SECONDS
  : > "$work/$2.done"
  FLASHSTOCK_TOKEN="$token" wrk -t"$threads" -c"$4" -d"$5"s --timeout 30s -s "$lua" "$url" \
    -- "$1" "$2" "$3" "$work/$2.done" "$threads" > "$work/$2.out" 2>&1 || true
  grep '^{' "$work/$2.out" | tail -1 | jq -c . 2>/dev/null \
    || { echo "wrk gave no result:" >&2; cat "$work/$2.out" >&2; echo '{}'; }
}

failures=()

# --- the crowd through the server, beside redis-benchmark, in rounds ----------------------
# Each round: a fresh SKU of N/100 units, the crowd through the server, then redis-benchmark
# on that sold-out SKU (so the two alternate: crowd, rb, crowd, rb, ...). redis-benchmark
# alone swings 50 000-72 000/s between runs on a 2-core machine, so one pair says little;
# the round with the median ratio is the crowd's figure, every round is in the JSON.
crowd_round() { # ROUND: prints the round's JSON line; appends to failures (not in a subshell)
  local sku="crowd-$run_id-$1" run="c$run_id-$1"
  fs sku add "$sku" --stock "$units" >/dev/null
  say "crowd round $1 of $rounds: $buyers buyers for $units units of $sku, $conns connections; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  local sum0 count0 sum1 count1 wrk_out book held reserved answers oversold lost
  sum0=$(book_metric sum) count0=$(book_metric count)
  buyers_run "$sku" "$run" "$buyers" "$conns" "$wrk_limit" > "$work/$run.json"
  wrk_out=$(cat "$work/$run.json")
  sum1=$(book_metric sum) count1=$(book_metric count)
  book=$(fs --json sku show "$sku")
  answers=$(jq '.answers // 0' <<<"$wrk_out") reserved=$(jq '.reserved // 0' <<<"$wrk_out")
  held=$(jq '.book.locked + .book.sold' <<<"$book")
  oversold=$(jq -n --argjson h "$held" --argjson r "$reserved" --argjson u "$units" '[0, $h - $u, $r - $u] | max')
  lost=$(jq -n --argjson h "$held" --argjson r "$reserved" '[0, $r - $h] | max')
  [ "$answers" -eq "$buyers" ] || failures+=("crowd round $1: $answers of $buyers buyers answered")
  [ "$oversold" -eq 0 ] || failures+=("crowd round $1: oversold $oversold")
  [ "$lost" -eq 0 ] || failures+=("crowd round $1: $lost answered reservations not in the book")
  [ "$(jq '.gate.available // -1' <<<"$book")" -ge 0 ] || failures+=("crowd round $1: the gate is below zero or absent")

  # redis-benchmark: the same reserve script and keys on this round's sold-out SKU.
  local call probe rb
  read -r -a call <<<"$(fs gate script-keys "$sku" --order 'rb-__rand_int__' --user 'rb-__rand_int__')"
  probe=$(redis-cli -h "$redis_host" -p "$redis_port" "${call[@]/__rand_int__/probe}" | head -1)
  [ "$probe" = "-1" ] || failures+=("redis-benchmark round $1: the reserve script answered '$probe' on the sold-out SKU, not -1 (out_of_stock)")
  say "redis-benchmark round $1: ${call[0]} of the reserve script on $sku, $rb_clients clients, $rb_requests calls"
  rb=$(num "$(redis-benchmark -h "$redis_host" -p "$redis_port" -c "$rb_clients" -n "$rb_requests" -r 1000000000 --csv \
    "${call[@]}" | tail -1 | cut -d, -f2 | tr -d '"')")
  [ "$(fs --json sku show "$sku" | jq '.gate.available')" -eq "$(jq '.gate.available' <<<"$book")" ] \
    || failures+=("redis-benchmark round $1: the sold-out SKU's gate moved")
  jq -cn --argjson w "$wrk_out" --argjson rb "$rb" --argjson oversold "$oversold" --argjson lost "$lost" \
    --argjson round "$1" --arg at "$(date -u +%H:%M:%S)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
    --argjson jobs "$(jq -n --argjson a "$count0" --argjson b "$count1" '$b - $a')" \
    --argjson jobs_s "$(jq -n --argjson a "$sum0" --argjson b "$sum1" '$b - $a')" '
    $w + {round: $round, at: $at, load: $load, redis_benchmark_per_s: $rb,
          ratio: (if $rb > 0 then (($w.answers_per_s // 0) / $rb * 100 | round / 100) else null end),
          oversold: $oversold, lost: $lost, winners_book_jobs: $jobs,
          winners_book_job_mean_ms: (if $jobs > 0 then ($jobs_s / $jobs * 1000 * 10 | round / 10) else null end)}' \
    >> "$work/rounds.jsonl"
}
: > "$work/rounds.jsonl"
for round in $(seq "$rounds"); do crowd_round "$round"; done
rounds_json=$(jq -s -c . "$work/rounds.jsonl")
# The round whose ratio is the median (the lower middle one of an even number).
crowd=$(jq -c 'sort_by(.ratio // 0) | .[(length - 1) / 2 | floor]' <<<"$rounds_json")
oversold=$(jq '[.[].oversold] | max' <<<"$rounds_json") lost=$(jq '[.[].lost] | max' <<<"$rounds_json")

# --- the HTTP floor ----------------------------------------------------------------------
say "healthz: GET /healthz, $conns connections, $healthz_seconds s"
healthz_per_s=$(num "$(wrk -t"$threads" -c"$conns" -d"$healthz_seconds"s "$url/healthz" | awk '/^Requests\/sec:/ { print $2 }')")

# --- winners: every buyer gets a unit ----------------------------------------------------
say "winners: $winners_conns connections, $winners_seconds s, $winners_sku (stock larger than the buyers)"
winners=$(buyers_run "$winners_sku" "w$run_id" 0 "$winners_conns" "$winners_seconds")
winners_book=$(fs --json sku show "$winners_sku")
w_reserved=$(jq '.reserved // 0' <<<"$winners")
w_held=$(jq '.book.locked + .book.sold' <<<"$winners_book")
[ "$w_reserved" -gt 0 ] || failures+=("winners: no reservation answered")
[ "$w_held" -ge "$w_reserved" ] || failures+=("winners: $w_reserved answered reserved, $w_held in the book")
[ "$(jq '(.other // 0) + (.non_200 // 0)' <<<"$winners")" -eq 0 ] || failures+=("winners: answers other than reserved: $winners")

kill -TERM "$server_pid"; wait "$server_pid" || failures+=("flashstock-server did not drain and exit 0")
server_pid=""

# --- the in-process engine's crowd and pgbench at 32 clients -----------------------------
say "engine: the same crowd in process (flashstock-cli bench), then pgbench and batched_row at 32 clients"
mkdir -m 700 "$work/benchdata"
"$cli" --data-dir "$work/benchdata" --redis "$redis" --json bench --backends postgresql --cases batched_row \
  --clients 32 --seconds "$bench_seconds" --crowd "$buyers" --crowd-paths gate_book --bench-pg "$db" \
  > "$work/bench.json" || failures+=("flashstock-cli bench failed: $(jq -c '.failures // .error' "$work/bench.json")")
bench=$(cat "$work/bench.json")
pgbench_tps=$(jq '[.cases[] | select(.name == "pgbench" and .clients == 32) | .ops_per_s][0] // 0' <<<"$bench")
batched_32=$(jq '[.cases[] | select(.name == "batched_row" and .clients == 32) | .ops_per_s][0] // 0' <<<"$bench")
engine_crowd=$(jq -c '[.crowd[] | select(.path == "gate_book")][0] // {}' <<<"$bench")

result=$(jq -n \
  --argjson crowd "$crowd" --argjson rounds "$rounds_json" --argjson winners "$winners" --argjson engine "$engine_crowd" \
  --argjson hz "$healthz_per_s" --argjson pgb "$pgbench_tps" \
  --argjson batched "$batched_32" --argjson oversold "$oversold" --argjson lost "$lost" \
  --argjson buyers "$buyers" --argjson units "$units" --argjson conns "$conns" --argjson wc "$winners_conns" \
  --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --argjson quick "$quick" --arg failures "$(printf '%s\n' "${failures[@]}")" '
  def r2: . * 100 | round / 100;
  def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
                     else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  {
    mode: (if $quick == 1 then "quick" else "full" end),
    machine: {cpus: '"$(nproc)"', load_at_end: $load},
    crowd: {
      buyers: $buyers, units: $units, connections: $conns,
      round: $crowd.round, rounds_run: ($rounds | length),
      answers: $crowd.answers, reserved: $crowd.reserved, out_of_stock: $crowd.out_of_stock,
      other: $crowd.other, non_200: $crowd.non_200, seconds: $crowd.seconds,
      answers_per_s: $crowd.answers_per_s, p50_ms: $crowd.p50_ms, p99_ms: $crowd.p99_ms,
      redis_benchmark_per_s: $crowd.redis_benchmark_per_s,
      ratio: $crowd.ratio,
      oversold: $oversold, lost: $lost,
      sold_out_after_s: $crowd.last_reserved_s,
      winners_book_jobs: $crowd.winners_book_jobs,
      winners_book_job_mean_ms: $crowd.winners_book_job_mean_ms,
      medians: {answers_per_s: ([$rounds[].answers_per_s] | median), p99_ms: ([$rounds[].p99_ms] | median),
                redis_benchmark_per_s: ([$rounds[].redis_benchmark_per_s] | median),
                ratio: ([$rounds[].ratio // 0] | median | r2)},
      rounds: [$rounds[] | {round, at, load, answers, answers_per_s, p50_ms, p99_ms, redis_benchmark_per_s, ratio,
                            oversold, lost}]
    },
    healthz_per_s: $hz,
    engine_crowd: ($engine + {answers_per_s: (if ($engine.seconds // 0) > 0 then ($engine.buyers / $engine.seconds | round) else null end)}),
    winners: {
      connections: $wc, seconds: $winners.seconds, reserved: $winners.reserved,
      reserved_per_s: $winners.reserved_per_s, p50_ms: $winners.p50_ms, p99_ms: $winners.p99_ms,
      pgbench_tps_32: $pgb, ratio: (if $pgb > 0 then ($winners.reserved_per_s / $pgb | r2) else null end),
      batched_row_32_per_s: $batched
    },
    failures: ($failures | split("\n") | map(select(. != "")))
  }')

table=$(jq -r '
  def f: if . == null then "n/a" else tostring end;
  "FlashStock server benchmark (\(.mode)): durable PostgreSQL, redis-server, flashstock-server, wrk; \(.machine.cpus) CPUs, load \(.machine.load_at_end) at the end",
  "",
  "crowd: \(.crowd.buyers) buyers for \(.crowd.units) units, \(.crowd.connections) connections; \(.crowd.rounds_run) rounds (each: the crowd on a fresh SKU, then redis-benchmark on it sold out)",
  (.crowd.rounds[] | "  round \(.round) at \(.at) (load \(.load))  \(.answers_per_s | f) answers/s  p99 \(.p99_ms | f) ms  redis-benchmark \(.redis_benchmark_per_s | f)/s  ratio \(.ratio | f)"),
  "  the median round (\(.crowd.round | f)):",
  "  through the server        \(.crowd.answers_per_s | f) answers/s  p50 \(.crowd.p50_ms | f) ms  p99 \(.crowd.p99_ms | f) ms  (\(.crowd.seconds | f) s; reserved \(.crowd.reserved | f), out_of_stock \(.crowd.out_of_stock | f), other \(.crowd.other | f))",
  "  redis-benchmark           \(.crowd.redis_benchmark_per_s | f) calls/s of the reserve script, same keys, sold out, 50 clients",
  "  ratio                     \(.crowd.ratio | f) (target >= 0.5); medians over the rounds: \(.crowd.medians.answers_per_s | f) answers/s, redis-benchmark \(.crowd.medians.redis_benchmark_per_s | f)/s, ratio \(.crowd.medians.ratio | f)",
  "  in-process engine         \(.engine_crowd.answers_per_s | f) answers/s (\(.engine_crowd.clients | f) threads, \(.engine_crowd.seconds | f) s)",
  "  HTTP floor (GET /healthz) \(.healthz_per_s | f) answers/s",
  "  sold out after            \(.crowd.sold_out_after_s | f) s (the last reserved answer); the winners'"'"' book jobs: \(.crowd.winners_book_jobs | f), \(.crowd.winners_book_job_mean_ms | f) ms each on average (queue and transaction)",
  "  oversold                  \(.crowd.oversold) in any round (book checked with flashstock-cli sku show); answered but not in the book \(.crowd.lost)",
  "",
  "winners: one hot SKU, stock larger than the buyers, \(.winners.connections) connections, \(.winners.seconds | f) s",
  "  through the server        \(.winners.reserved_per_s | f) committed reservations/s  p50 \(.winners.p50_ms | f) ms  p99 \(.winners.p99_ms | f) ms",
  "  pgbench single-order txn  \(.winners.pgbench_tps_32 | f) transactions/s at 32 clients",
  "  ratio                     \(.winners.ratio | f) (target >= 3)",
  "  batched_row in process    \(.winners.batched_row_32_per_s | f) reserves/s at 32 clients",
  (if (.failures | length) > 0 then "\nFAILED:\n  " + (.failures | join("\n  ")) else "\nPASSED (oversold 0, every answer came, every answered reservation is in the book)" end)
' <<<"$result")

if [ $json_only = 1 ]; then
  echo "$table" >&2
  echo "$result"
else
  echo "$table"
  echo
  jq -c . <<<"$result"
fi
[ ${#failures[@]} -eq 0 ]
