#!/usr/bin/env bash
# A local formation with no single point of failure, on loopback ports and one throwaway
# directory (nothing is written outside it):
#   book        PostgreSQL 15 on three data nodes under pg_auto_failover (a monitor and a keeper
#               per node): synchronous commit to at least one of the two standbys, automatic
#               failover; the book URL names all three (target_session_attrs=read-write)
#   gate        Redis Cluster, three masters with a replica each
#   storefront  three flashstock-server processes behind HAProxy 2.6, which checks /readyz and
#               limits requests per client address (resources/haproxy/flashstock.cfg)
#
# Usage: scripts/ha-lab.sh up     [--dir DIR] [--build-dir DIR] [--failover tuned|defaults]
#                                 [--rate-limit N]
#        scripts/ha-lab.sh status [--dir DIR] [--json]
#        scripts/ha-lab.sh kill-primary [--dir DIR]
#        scripts/ha-lab.sh down   [--dir DIR]
#
#   up            brings it all up (about 20-30 s here) and prints the status; a failed up
#                 stops what it started and says why
#   status        what a client needs; --json prints one object: {"storefront", "book", "gate",
#                 "token_file", "book_password_file", "primary": "host:port", "synchronous",
#                 "servers": [URL...], "dir"}
#   kill-primary  a lost machine: SIGKILL to the primary node's keeper (pg_autoctl) and
#                 postmaster at once; prints {"node", "primary", "killed_at_ms"}
#   down          stops everything the lab started and removes DIR
#
#   --dir         the lab's directory (default: $FLASHSTOCK_HA_LAB_DIR, else
#                 ${TMPDIR:-/tmp}/flashstock-ha-lab-$UID)
#   --build-dir   where flashstock-server and flashstock-cli are (default: build/, else PATH)
#   --failover    tuned (default): the monitor declares a node unhealthy after 2 s and waits
#                 5 s for a lost primary to demote itself, keepers give up on a partition after
#                 3 s; defaults: pg_auto_failover's own (20 s, 30 s, 20 s). docs/deployment.md
#                 has the write outage each gives.
#   --rate-limit  requests per 10 s from one address before HAProxy answers 429 (default
#                 1000000: a load test from one machine is one address)
#
# Needs (scripts/install-deps.sh): postgresql-15, pg-auto-failover-cli,
# postgresql-15-auto-failover, redis-server, redis-tools, haproxy, curl, jq. As root, the
# PostgreSQL processes run as the postgres user (pg_autoctl refuses root).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

command=${1:-}
[ $# -gt 0 ] && shift
dir=${FLASHSTOCK_HA_LAB_DIR:-${TMPDIR:-/tmp}/flashstock-ha-lab-$(id -u)}
build_dir="" failover=tuned json=0 rate_limit=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=${2:?--dir needs a directory}; shift ;;
    --build-dir) build_dir=${2:?--build-dir needs a directory}; shift ;;
    --failover) failover=${2:?--failover needs tuned or defaults}; shift
                [[ "$failover" =~ ^(tuned|defaults)$ ]] || { echo "--failover: tuned or defaults, got '$failover'" >&2; exit 2; } ;;
    --rate-limit) rate_limit=${2:?--rate-limit needs a number}; shift
                  [[ "$rate_limit" =~ ^[1-9][0-9]*$ ]] || { echo "--rate-limit: a whole number from 1, got '$rate_limit'" >&2; exit 2; } ;;
    --json) json=1 ;;
    *) echo "unknown argument '$1' (see the head of $0)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$dir" = /* ]] || dir="$PWD/$dir"

pgbin=/usr/lib/postgresql/15/bin
say() { echo "ha-lab: $*" >&2; }
die() { say "$*"; exit 1; }

# --- the PostgreSQL side runs as postgres when we are root ----------------------------------
pg_user=$(id -un)
[ "$(id -u)" -eq 0 ] && pg_user=postgres
# pg_autoctl keeps its config, state and pid files under the XDG dirs and HOME: all inside.
pgenv=(env -i HOME="$dir/pg/home" XDG_RUNTIME_DIR="$dir/pg/run" XDG_CONFIG_HOME="$dir/pg/config"
       XDG_DATA_HOME="$dir/pg/data" PATH="$pgbin:/usr/bin:/bin" PGHOST="$dir/pg/sock" LANG=C.UTF-8)
[ "$(id -u)" -eq 0 ] && pgenv=(runuser -u postgres -- "${pgenv[@]}")
as_pg() { "${pgenv[@]}" "$@"; }
autoctl() { as_pg pg_autoctl "$@"; }

# Every long-running process starts in a session of its own (setsid): `up` returns while they
# run on, and `down` stops each whole group by the id recorded here.
started() { echo "$2" > "$dir/pids/$1.pgid"; }
spawn() { # NAME LOG COMMAND...
  local name=$1 log=$2
  shift 2
  setsid "$@" </dev/null >"$log" 2>&1 &
  started "$name" $!
}

# A loopback port nothing answers on, with port+10000 free too (Redis Cluster's bus port).
free_port() {
  local port
  while :; do
    port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 25000 ))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    (exec 3<>"/dev/tcp/127.0.0.1/$((port + 10000))") 2>/dev/null && continue
    grep -qx "$port" "$dir/ports.used" 2>/dev/null && continue
    echo "$port" >> "$dir/ports.used"
    echo "$port"
    return
  done
}

wait_for() { # SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what did not happen within $seconds s"
    sleep 0.1
  done
}

load_env() {
  [ -f "$dir/lab.env" ] || die "no lab in $dir (scripts/ha-lab.sh up first)"
  # shellcheck disable=SC1091
  . "$dir/lab.env"
}

monitor_state() { autoctl show state --pgdata "$dir/pg/monitor" --json 2>/dev/null; }
# Data nodes in a state: `count_state primary` etc.
count_state() { monitor_state | jq --arg s "$1" '[.[] | select(.current_group_state == $s and .assigned_group_state == $s)] | length'; }
single_ready() { [ "$(count_state single)" = 1 ]; }
formation_ready() {
  [ "$(count_state primary)" = 1 ] && [ "$(count_state secondary)" = 2 ]
}

book_psql() { # SQL: on the primary, as the book's role
  PGPASSWORD=$(cat "$dir/book.password") PGCONNECT_TIMEOUT=2 \
    psql -X -At "postgresql://flashstock@$pg_hosts/flashstock?target_session_attrs=read-write" -c "$1"
}

# --- up --------------------------------------------------------------------------------------
start_monitor() {
  for n in monitor node1; do
    as_pg "$pgbin/initdb" -N -D "$dir/pg/$n" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/log/initdb-$n.log" 2>&1 \
      || { cat "$dir/log/initdb-$n.log" >&2; die "initdb $n failed"; }
    # postgresql.auto.conf wins over the settings pg_auto_failover writes: the socket stays in
    # the lab, the memory small (four servers on one machine), a base backup's checkpoint quick.
    as_pg tee -a "$dir/pg/$n/postgresql.auto.conf" >/dev/null <<EOF
unix_socket_directories = '$dir/pg/sock'
shared_buffers = '128MB'
max_connections = 300
checkpoint_completion_target = 0
EOF
  done
  # The book's role signs in with a password; pg_auto_failover's own roles stay on trust over
  # loopback (the lab is for one user's machine). Standbys copy these files from the primary.
  as_pg sh -c "printf 'host flashstock flashstock 127.0.0.1/32 scram-sha-256\n' | cat - '$dir/pg/node1/pg_hba.conf' > '$dir/pg/node1/hba.tmp' && mv '$dir/pg/node1/hba.tmp' '$dir/pg/node1/pg_hba.conf'"
  spawn monitor "$dir/log/monitor.log" "${pgenv[@]}" pg_autoctl create monitor --pgdata "$dir/pg/monitor" \
    --pgport "$monitor_port" --auth trust --no-ssl --hostname 127.0.0.1 --listen 127.0.0.1 --run
  # The monitor restarts its PostgreSQL once it has set itself up: a node that registers
  # during that restart fails. Ready is the listener's start.
  wait_for 60 "the pg_auto_failover monitor" grep -q "Contacting the monitor to LISTEN" "$dir/log/monitor.log"
  wait_for 30 "the monitor's database" as_pg psql -X -p "$monitor_port" -d pg_auto_failover -c "SELECT 1"
  if [ "$failover" = tuned ]; then
    as_pg psql -X -q -p "$monitor_port" -d pg_auto_failover \
      -c "ALTER SYSTEM SET pgautofailover.health_check_period = 1000" \
      -c "ALTER SYSTEM SET pgautofailover.health_check_timeout = 1000" \
      -c "ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1" \
      -c "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500" \
      -c "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 2000" \
      -c "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 5000" \
      -c "SELECT pg_reload_conf()" >/dev/null
  fi
}

start_node() { # N
  local n=$1
  spawn "node$n" "$dir/log/node$n.log" "${pgenv[@]}" pg_autoctl create postgres --pgdata "$dir/pg/node$n" \
    --pgport "${node_ports[$((n - 1))]}" --pghost "$dir/pg/sock" --listen 127.0.0.1 --hostname 127.0.0.1 \
    --name "node$n" --auth trust --no-ssl --monitor "$monitor_url" --run
}

start_book() {
  start_monitor
  start_node 1
  wait_for 60 "node1 as the first (single) node" single_ready
  start_node 2
  start_node 3
  wait_for 90 "a primary with two secondaries" formation_ready
  if [ "$failover" = tuned ]; then
    # The keeper of a primary cut off from the monitor and its standbys demotes itself after
    # network_partition_timeout: shorter than the monitor's primary_demote_timeout.
    for n in 1 2 3; do
      autoctl config set --pgdata "$dir/pg/node$n" timeout.network_partition_timeout 3 >/dev/null
    done
  fi
  as_pg psql -X -q -p "${node_ports[0]}" -d postgres \
    -c "CREATE ROLE flashstock LOGIN PASSWORD '$(cat "$dir/book.password")'" \
    -c "CREATE DATABASE flashstock OWNER flashstock" \
    -c "GRANT pg_monitor TO flashstock" >/dev/null # pg_stat_replication's states, for status
}

start_gate() {
  local ports=() p
  for i in 1 2 3 4 5 6; do
    # A free port may be taken by someone else before redis-server binds it: then another.
    for attempt in 1 2 3 4 5; do
      p=$(free_port)
      mkdir -m 700 "$dir/redis/$p"
      redis-server --bind 127.0.0.1 --port "$p" --dir "$dir/redis/$p" --save '' --appendonly no \
        --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 \
        --cluster-require-full-coverage no --repl-diskless-sync-delay 0 \
        --daemonize yes --pidfile "$dir/redis/$p/redis.pid" --logfile "$dir/redis/$p/redis.log"
      local deadline=$((SECONDS + 10))
      until redis-cli -p "$p" ping >/dev/null 2>&1 || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
      redis-cli -p "$p" ping >/dev/null 2>&1 && break
      say "redis-server on $p did not answer: $(tail -n 2 "$dir/redis/$p/redis.log" 2>/dev/null | tr '\n' ' ')"
      [ -f "$dir/redis/$p/redis.pid" ] && kill "$(cat "$dir/redis/$p/redis.pid")" 2>/dev/null
      [ $attempt = 5 ] && die "no redis-server answered after 5 ports"
    done
    ports+=("$p")
  done
  local endpoints=()
  for p in "${ports[@]}"; do endpoints+=("127.0.0.1:$p"); done
  redis-cli --cluster create "${endpoints[@]}" --cluster-replicas 1 --cluster-yes >"$dir/log/redis-cluster.log" 2>&1 \
    || { cat "$dir/log/redis-cluster.log" >&2; die "redis-cli --cluster create failed"; }
  for p in "${ports[@]}"; do
    wait_for 30 "cluster_state:ok on $p" sh -c "redis-cli -p $p cluster info | grep -q cluster_state:ok"
  done
  echo "redis-cluster://$(IFS=,; echo "${endpoints[*]}")" > "$dir/gate.url"
}

# The environment of our own binaries: HOME and the XDG dirs inside the lab.
fsenv=(env HOME="$dir/home" XDG_DATA_HOME="$dir/home/data" XDG_CONFIG_HOME="$dir/home/config"
       XDG_CACHE_HOME="$dir/home/cache" XDG_RUNTIME_DIR="$dir/home/run")

start_servers() {
  local token
  token=$("${fsenv[@]}" PGPASSWORD="$(cat "$dir/book.password")" "$cli" --data-dir "$dir/cli" --db "$book_url" \
            --redis "$gate_url" --operator ha-lab --json token add storefront --scope reserve,pay,read | jq -r .token)
  [ -n "$token" ] && [ "$token" != null ] || die "could not add the storefront token"
  (umask 077; printf '%s\n' "$token" > "$dir/token")
  for i in 0 1 2; do
    local d="$dir/server$((i + 1))"
    mkdir -m 700 "$d"
    spawn "server$((i + 1))" "$d/server.log" "${fsenv[@]}" PGPASSWORD="$(cat "$dir/book.password")" \
      "$server" --data-dir "$d" --db "$book_url" --redis "$gate_url" --operator ha-lab \
      --listen "127.0.0.1:${server_ports[$i]}" --pid-file "$d/server.pid"
  done
  for i in 0 1 2; do
    wait_for 60 "flashstock-server on ${server_ports[$i]} ready" curl -sf "http://127.0.0.1:${server_ports[$i]}/readyz"
  done
}

start_haproxy() {
  # The example with the lab's ports, rate and connection limit (what the open-files limit
  # allows), one substitution per line it names.
  local fds maxconn=8000
  fds=$(ulimit -Hn)
  [ "$fds" != unlimited ] && [ $(((fds - 100) / 2)) -lt $maxconn ] && maxconn=$(((fds - 100) / 2))
  sed -e "s|^\(    maxconn \)[0-9]*|\1$maxconn|" \
      -e "s|^\(    bind \)127.0.0.1:8080|\1127.0.0.1:$haproxy_port|" \
      -e "s|\(server app1 \)127.0.0.1:8081|\1127.0.0.1:${server_ports[0]}|" \
      -e "s|\(server app2 \)127.0.0.1:8082|\1127.0.0.1:${server_ports[1]}|" \
      -e "s|\(server app3 \)127.0.0.1:8083|\1127.0.0.1:${server_ports[2]}|" \
      -e "/# flashstock_rate_limit/s|gt [0-9]*|gt $rate_limit|" \
      "$repo/resources/haproxy/flashstock.cfg" > "$dir/haproxy.cfg"
  local expect
  for expect in "maxconn $maxconn" "bind 127.0.0.1:$haproxy_port" "127.0.0.1:${server_ports[2]} check" "gt $rate_limit"; do
    grep -qF "$expect" "$dir/haproxy.cfg" || die "resources/haproxy/flashstock.cfg no longer has the line for '$expect'"
  done
  haproxy -q -c -f "$dir/haproxy.cfg" || die "haproxy refused $dir/haproxy.cfg"
  haproxy -f "$dir/haproxy.cfg" -D -p "$dir/haproxy.pid"
  wait_for 20 "HAProxy with a server up" curl -sf "http://127.0.0.1:$haproxy_port/readyz"
}

up() {
  for tool in pg_autoctl haproxy redis-server redis-cli psql curl jq setsid; do
    command -v "$tool" >/dev/null || die "$tool is not installed (run scripts/install-deps.sh)"
  done
  [ -x "$pgbin/initdb" ] || die "PostgreSQL 15 is not installed (run scripts/install-deps.sh)"
  if [ -n "$build_dir" ]; then
    server="$build_dir/app/flashstock-server" cli="$build_dir/app/flashstock-cli"
  elif [ -x build/app/flashstock-server ] && [ -x build/app/flashstock-cli ]; then
    server="$repo/build/app/flashstock-server" cli="$repo/build/app/flashstock-cli"
  else
    server=$(command -v flashstock-server || true) cli=$(command -v flashstock-cli || true)
  fi
  [ -x "$server" ] && [ -x "$cli" ] || die "flashstock-server and flashstock-cli not found in build/app or on PATH (build first)"
  server=$(realpath "$server") cli=$(realpath "$cli")
  [ -e "$dir" ] && die "$dir exists: a lab is up there (scripts/ha-lab.sh down --dir $dir), or remove it"

  local began=$SECONDS
  mkdir -p "$dir"
  chmod 755 "$dir" # the postgres user walks through to its own dir
  mkdir -m 700 "$dir/pids" "$dir/redis" "$dir/log" "$dir/cli" "$dir/home"
  as_pg test -x "$dir" || die "$pg_user cannot reach $dir (a parent directory is closed to it): choose another --dir"
  mkdir -m 700 "$dir/pg"
  [ "$pg_user" != "$(id -un)" ] && chown "$pg_user" "$dir/pg"
  as_pg mkdir -m 700 "$dir/pg/home" "$dir/pg/run" "$dir/pg/config" "$dir/pg/data" "$dir/pg/sock"
  # pg_autoctl's services of one node create these at once at start, and the one that loses
  # the race stops ("Failed to create state directory ...: File exists"): made beforehand.
  for n in monitor node1 node2 node3; do
    for root in run config data; do as_pg mkdir -p -m 700 "$dir/pg/$root/pg_autoctl$dir/pg/$n"; done
  done
  (umask 077; od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$dir/book.password")
  up_ok=0
  trap 'if [ $up_ok = 0 ]; then say "up failed; stopping what it started"; tail_logs; down_now; fi' EXIT
  trap 'exit 130' INT TERM

  monitor_port=$(free_port)
  node_ports=("$(free_port)" "$(free_port)" "$(free_port)")
  server_ports=("$(free_port)" "$(free_port)" "$(free_port)")
  haproxy_port=$(free_port)
  monitor_url="postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable"
  pg_hosts="127.0.0.1:${node_ports[0]},127.0.0.1:${node_ports[1]},127.0.0.1:${node_ports[2]}"
  book_url="postgresql://flashstock@$pg_hosts/flashstock?target_session_attrs=read-write"

  # The gate comes up while the book does (it is ready long before).
  start_gate > "$dir/log/gate.out" 2>&1 &
  local gate_pid=$!
  start_book
  wait "$gate_pid" || { cat "$dir/log/gate.out" >&2; die "the Redis Cluster did not come up"; }
  gate_url=$(cat "$dir/gate.url" 2>/dev/null || true)
  [ -n "$gate_url" ] || die "the Redis Cluster's URL is missing"
  start_servers
  start_haproxy
  cat > "$dir/lab.env" <<EOF
monitor_port=$monitor_port
pg_hosts=$pg_hosts
book_url='$book_url'
gate_url='$gate_url'
storefront=http://127.0.0.1:$haproxy_port
servers='http://127.0.0.1:${server_ports[0]} http://127.0.0.1:${server_ports[1]} http://127.0.0.1:${server_ports[2]}'
failover=$failover
EOF
  up_ok=1
  trap - INT TERM
  say "up in $((SECONDS - began)) s (failover settings: $failover)"
  status
}

tail_logs() {
  local f
  for f in "$dir"/log/*.log "$dir"/server*/server.log; do
    [ -s "$f" ] || continue
    echo "--- $f (last lines)" >&2
    tail -n 8 "$f" >&2
  done
}

# --- status ----------------------------------------------------------------------------------
status() {
  load_env
  local primary="" synchronous=false
  primary=$(book_psql "SELECT inet_server_addr() || ':' || inet_server_port()" 2>/dev/null | sed 's|/32||') || primary=""
  # Synchronous right now: the primary names standbys to wait for, and one of them is
  # streaming as a synchronous (or quorum) standby.
  if [ -n "$primary" ] && [ "$(book_psql "SELECT current_setting('synchronous_standby_names') <> '' AND EXISTS (SELECT 1 FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum'))" 2>/dev/null)" = t ]; then
    synchronous=true
  fi
  if [ $json = 1 ]; then
    jq -n --arg storefront "$storefront" --arg book "$book_url" --arg gate "$gate_url" --arg token "$dir/token" \
      --arg password "$dir/book.password" --arg primary "$primary" --argjson synchronous "$synchronous" \
      --arg servers "$servers" --arg dir "$dir" --arg failover "$failover" \
      '{storefront: $storefront, book: $book, gate: $gate, token_file: $token, book_password_file: $password,
        primary: (if $primary == "" then null else $primary end), synchronous: $synchronous,
        servers: ($servers | split(" ")), failover: $failover, dir: $dir}'
  else
    cat <<EOF
storefront  $storefront  (bearer token in $dir/token)
book        $book_url  (password in $dir/book.password; PGPASSWORD=\$(cat $dir/book.password))
            primary ${primary:-none reachable}, commits synchronous: $synchronous, failover settings: $failover
gate        $gate_url
servers     $servers
monitor     PGHOST=$dir/pg/sock psql -p $monitor_port -d pg_auto_failover (pg_autoctl show state)
EOF
  fi
}

# --- kill-primary ----------------------------------------------------------------------------
descendants() { local p; for p in $(ps -o pid= --ppid "$1"); do echo "$p"; descendants "$p"; done; }

kill_primary() {
  load_env
  local node port pgdata top pids
  node=$(monitor_state | jq -r '[.[] | select(.current_group_state == "primary")][0] | "\(.nodename) \(.nodeport)"')
  read -r node port <<<"$node"
  [ -n "$node" ] && [ "$node" != null ] || die "no primary to kill (pg_autoctl show state)"
  pgdata="$dir/pg/$node"
  top=$(head -1 "$dir/pg/run/pg_autoctl$pgdata/pg_autoctl.pid" 2>/dev/null) || die "$node's keeper is not running"
  pids="$top $(descendants "$top") $(head -1 "$pgdata/postmaster.pid" 2>/dev/null || true)"
  # The node's whole session (runuser, pg_autoctl and its services) and its postmaster: frozen
  # first, so no process of the node sees another die and reacts; then all gone at once.
  local group
  group=$(cat "$dir/pids/$node.pgid")
  # shellcheck disable=SC2086
  kill -STOP -- "-$group" $pids 2>/dev/null || true
  local at
  at=$(date +%s%3N)
  # shellcheck disable=SC2086
  kill -KILL -- "-$group" $pids 2>/dev/null || true
  jq -nc --arg node "$node" --arg primary "127.0.0.1:$port" --argjson at "$at" '{node: $node, primary: $primary, killed_at_ms: $at}'
}

# --- down ------------------------------------------------------------------------------------
lab_processes() { # pids whose command line or working directory is inside the lab
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' ' ' < "$p/cmdline"; echo; readlink "$p/cwd"; } 2>/dev/null | grep -qF "$dir/" && echo "${p#/proc/}"
  done
  return 0
}

down_now() {
  set +e
  [ -d "$dir/pids" ] || { rm -rf "$dir"; return 0; }
  [ -f "$dir/haproxy.pid" ] && kill "$(cat "$dir/haproxy.pid")" 2>/dev/null
  for f in "$dir"/server*/server.pid; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
  for f in "$dir"/redis/*/redis.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  for n in node1 node2 node3 monitor; do
    [ -f "$dir/pg/run/pg_autoctl$dir/pg/$n/pg_autoctl.pid" ] && autoctl stop --pgdata "$dir/pg/$n" >/dev/null 2>&1
  done
  local deadline=$((SECONDS + 20)) left
  while :; do
    left=$(lab_processes)
    [ -z "$left" ] || [ $SECONDS -ge $deadline ] && break
    sleep 0.2
  done
  # Whatever is left of the sessions the lab started (a wrapper stopped with its node, a
  # process that did not stop in time), then anything still running inside the lab.
  for f in "$dir"/pids/*.pgid; do kill -KILL -- "-$(cat "$f")" 2>/dev/null; done
  left=$(lab_processes)
  if [ -n "$left" ]; then
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null
    sleep 0.5
    left=$(lab_processes)
    [ -n "$left" ] && say "still running after SIGKILL: $left"
  fi
  rm -rf "$dir"
  say "down: $dir removed"
}

case "$command" in
  up) up ;;
  status) status ;;
  kill-primary) kill_primary ;;
  down) down_now ;;
  *) echo "usage: $0 up|status|kill-primary|down [--dir DIR] [--json] (see the head of this file)" >&2; exit 2 ;;
esac
