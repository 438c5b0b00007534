#!/usr/bin/env bash
# Installs every Debian 12 package FlashStock needs to build, test and run, and the extra
# packages named as arguments (e.g. the packaging checks' lintian). Safe to run again. Keeps apt from starting system-wide redis/postgresql
# services: the tests and the CLI start their own throwaway servers.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache
  qt6-base-dev libqt6opengl6-dev qt6-charts-dev
  libqt6sql6-sqlite libqt6sql6-psql
  libhiredis-dev redis-server postgresql-15
  xvfb xauth imagemagick fonts-dejavu-core sqlite3
  libmicrohttpd-dev prometheus-cpp-dev libjemalloc-dev curl
  wrk apache2-utils redis-tools jq
  help2man librsvg2-bin dpkg-dev file
  spin prometheus zsh iproute2 util-linux
  pg-auto-failover-cli postgresql-15-auto-failover haproxy
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# No default PostgreSQL cluster on 5432, no service starts during install.
$sudo mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.d/flashstock.conf >/dev/null
policy=/usr/sbin/policy-rc.d
had_policy=0
[ -e "$policy" ] && had_policy=1
if [ $had_policy -eq 0 ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q "${missing[@]}"
