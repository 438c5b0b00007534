#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL 15 and redis-server on 127.0.0.1, in a
# temporary directory, stopped and removed on exit (also on failure or Ctrl-C).
# Exports for the command:
#   FLASHSTOCK_TEST_PG_URL     postgresql://flashstock:...@127.0.0.1:PORT/postgres (a superuser)
#   FLASHSTOCK_TEST_PG_PASSWORD  its password alone (to pass as PGPASSWORD, off command lines)
#   FLASHSTOCK_TEST_REDIS_URL  redis://127.0.0.1:PORT
# Usage: scripts/with-test-servers.sh COMMAND [ARGS...]
# DURABLE=1 keeps PostgreSQL's durable commits (fsync, synchronous_commit) for benchmarks;
# by default the tests trade them for speed.
set -euo pipefail

pgbin=/usr/lib/postgresql/15/bin
[ -x "$pgbin/initdb" ] || { echo "PostgreSQL 15 is not installed (run scripts/install-deps.sh)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is not installed (run scripts/install-deps.sh)" >&2; exit 1; }

work=$(mktemp -d /tmp/flashstock-servers.XXXXXX)
chmod 755 "$work"
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  as_pg=(runuser -u postgres --)
  chown postgres "$work"
fi

# A random port in 20000-49999 that nothing answers on (bash's /dev/tcp, no extra tools).
free_port() {
  local port
  while :; do
    port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 30000 ))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

pg_port=$(free_port)
redis_port=$(free_port)
password="fs-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

cleanup() {
  set +e
  [ -f "$work/redis.pid" ] && kill "$(cat "$work/redis.pid")" 2>/dev/null
  [ -d "$work/pg" ] && "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

pg_speed="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
[ "${DURABLE:-0}" = 1 ] && pg_speed=""
echo "$password" > "$work/pwfile"
chmod 644 "$work/pwfile"
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U flashstock --pwfile="$work/pwfile" \
  --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$work/initdb.log" 2>&1 \
  || { cat "$work/initdb.log" >&2; exit 1; }
# A port found free can be taken before the server binds it (other tests pick ports too):
# a server that could not bind its port is started again on another one, up to 5 times.
for attempt in 1 2 3 4 5; do
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
    -o "-k $work -c listen_addresses=127.0.0.1 -p $pg_port -c max_connections=200 $pg_speed" \
    start >/dev/null && break
  if [ "$attempt" -eq 5 ] || ! grep -q "could not bind" "$work/pg.log"; then
    cat "$work/pg.log" >&2
    exit 1
  fi
  pg_port=$(free_port)
done

for attempt in 1 2 3 4 5; do
  rm -f "$work/redis.pid"
  redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
    --daemonize yes --pidfile "$work/redis.pid" --dir "$work" --logfile "$work/redis.log"
  for _ in $(seq 100); do
    # Answered by the server started here (its pid), not by another one on that port.
    [ -s "$work/redis.pid" ] && redis-cli -p "$redis_port" info server 2>/dev/null \
      | grep -q "^process_id:$(cat "$work/redis.pid")"$'\r'"\?$" && break 2
    sleep 0.05
  done
  if [ "$attempt" -eq 5 ]; then
    cat "$work/redis.log" >&2
    exit 1
  fi
  [ -f "$work/redis.pid" ] && kill "$(cat "$work/redis.pid")" 2>/dev/null
  redis_port=$(free_port)
done

export FLASHSTOCK_TEST_PG_URL="postgresql://flashstock:$password@127.0.0.1:$pg_port/postgres"
export FLASHSTOCK_TEST_PG_PASSWORD="$password"
export FLASHSTOCK_TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
echo "test servers: PostgreSQL on 127.0.0.1:$pg_port, Redis on 127.0.0.1:$redis_port" >&2
"$@"
