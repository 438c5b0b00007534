#!/usr/bin/env bash
# The packages' acceptance, run by CI after the tests (as root on a Debian 12 machine; it
# installs and removes packages): builds them (scripts/package.sh: reuses build/, lintian
# errors fail), installs them with apt, checks what a user of the installed programs meets
# (from /usr/bin, outside the source tree), then purges them and checks nothing of ours is
# left under /usr. Exit 0 only if every check passed; the packages are purged either way.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "package-check: run as root (it installs and purges packages)" >&2; exit 2; }
bash scripts/install-deps.sh lintian desktop-file-utils appstream man-db devscripts systemd
bash scripts/package.sh

debs=()
names=()
for deb in build/packages/*.deb; do
  debs+=("./$deb")
  names+=("$(dpkg-deb --field "$deb" Package)")
done
work=$(mktemp -d /tmp/fs-package-check.XXXXXX)
purge() {
  set +e
  FLASHSTOCK_DATA_DIR="$work/data" /usr/bin/flashstock-cli embedded stop >/dev/null 2>&1
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${names[@]}" >/dev/null
  rm -rf "$work"
}
trap purge EXIT
step() { echo "== package-check: $*"; }

step "install ${names[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debs[@]}" >"$work/apt.log" || { cat "$work/apt.log"; exit 1; }
for name in "${names[@]}"; do dpkg-query --listfiles "$name"; done | sort -u >"$work/files"

# From /usr/bin, started elsewhere than the source tree.
cd "$work"
step "--version and --help from /usr/bin"
for bin in flashstock-cli flashstock-server flashstock; do
  [ "$(command -v "$bin")" = "/usr/bin/$bin" ] || { echo "$bin is not /usr/bin/$bin" >&2; exit 1; }
  # Not `tee /dev/stderr`: tee truncates it, and with stderr sent to a file that erased the log.
  version=$("/usr/bin/$bin" --version)
  echo "$version"
  grep -Eq "^$bin [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{7,}(-dirty)?\)$" <<<"$version" \
    || { echo "$bin --version does not say version and git revision" >&2; exit 1; }
done
/usr/bin/flashstock-cli --help >/dev/null
/usr/bin/flashstock-server --help | grep -q -- '--listen' || { echo "flashstock-server --help lacks --listen" >&2; exit 1; }

step "hardened binaries (hardening-check)"
# PIE, stack protector, _FORTIFY_SOURCE, full RELRO (BIND_NOW): what Debian 12's
# dpkg-buildflags gives with hardening=+all (cmake/Hardening.cmake). Not control-flow
# protection (-fcf-protection), which Debian 12's dpkg-buildflags (1.21) does not give.
# flashstock-cli and flashstock are built alike but link no glibc checked function (their
# lintian overrides say why), so _FORTIFY_SOURCE shows only in the server.
hardening-check --nocfprotection /usr/bin/flashstock-server
hardening-check --nocfprotection --nofortify /usr/bin/flashstock-cli /usr/bin/flashstock

step "man pages"
for page in flashstock-cli flashstock-server flashstock; do
  man -w "$page"
  man "$page" 2>&1 >/dev/null | grep . && { echo "man $page warns" >&2; exit 1; }
done
man flashstock-cli | grep -q 'sku add' || { echo "flashstock-cli(1) lacks the commands" >&2; exit 1; }

step "desktop entry and AppStream metainfo"
desktop-file-validate /usr/share/applications/io.flashstock.Console.desktop
appstreamcli validate --no-net /usr/share/metainfo/io.flashstock.Console.metainfo.xml
[ -f /usr/share/icons/hicolor/scalable/apps/io.flashstock.Console.svg ]
[ -f /usr/share/icons/hicolor/48x48/apps/io.flashstock.Console.png ]

step "bash completion"
completion=/usr/share/bash-completion/completions/flashstock-cli
bash -n "$completion"
# It completes: the words after "sku", and the options of "sku add".
got=$(bash -c 'source "$1"; COMP_WORDS=(flashstock-cli sku ""); COMP_CWORD=2; _flashstock_cli; echo "${COMPREPLY[*]}"' _ "$completion")
[[ " $got " == *" add "* ]] || { echo "completion after 'sku': '$got'" >&2; exit 1; }
got=$(bash -c 'source "$1"; COMP_WORDS=(flashstock-cli sku add X --st); COMP_CWORD=4; _flashstock_cli; echo "${COMPREPLY[*]}"' _ "$completion")
[ "$got" = "--stock" ] || { echo "completion of 'sku add X --st': '$got'" >&2; exit 1; }

step "systemd units installed, none enabled"
for unit in flashstock-server.service flashstock-reconcile.service flashstock-reconcile.timer; do
  grep -qx "/usr/lib/systemd/system/$unit" "$work/files" || { echo "$unit not installed" >&2; exit 1; }
done
if ls /etc/systemd/system/*.wants/flashstock-* >/dev/null 2>&1; then
  echo "a FlashStock unit is enabled after install" >&2
  exit 1
fi
getent passwd flashstock >/dev/null || { echo "no flashstock system user" >&2; exit 1; }

step "systemd units sandboxed: exposure 2.5 or better (systemd-analyze security --offline=yes)"
# Every service unit the packages install, as systemd loads it here (with its drop-ins).
# systemd-analyze rates services only: a timer runs nothing itself, the service it starts
# is rated. --threshold counts in tenths of the exposure it prints (25: 2.5).
services=$(sed -n 's|^/usr/lib/systemd/system/\([^/]*\.service\)$|\1|p' "$work/files")
[ -n "$services" ] || { echo "no service unit installed" >&2; exit 1; }
for unit in $services; do
  verdict=$(systemd-analyze security --offline=yes --threshold=25 "$unit" 2>&1) \
    || { echo "$verdict" >&2; echo "$unit is exposed above 2.5 (or could not be rated)" >&2; exit 1; }
  grep 'Overall exposure level' <<<"$verdict"
done

step "rehearsal drill from the installed CLI on a fresh data dir"
FLASHSTOCK_DATA_DIR="$work/data" /usr/bin/flashstock-cli drill --sku drill-package-check --stock 100 \
  --buyers 1000 --concurrency 4 --pay-ratio 0.7 --hold-seconds 1 --faults all --seed 1 | tail -4
FLASHSTOCK_DATA_DIR="$work/data" /usr/bin/flashstock-cli embedded stop >/dev/null

step "purge ${names[*]}"
cd /
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${names[@]}" >/dev/null
trap 'rm -rf "$work"' EXIT
left=$(while read -r f; do [ "$f" != "${f#/usr/}" ] && [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done <"$work/files"
       find /usr -name '*flashstock*' -o -name '*FlashStock*' 2>/dev/null)
[ -z "$left" ] || { echo "left under /usr after purge:" >&2; echo "$left" >&2; exit 1; }
echo "package-check: PASSED"
