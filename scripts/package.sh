#!/usr/bin/env bash
# Builds FlashStock's Debian packages into build/packages/ (CPack, cmake/Packaging.cmake):
# flashstock-tools (CLI, server, systemd units, completion; no GUI libraries) and
# flashstock-console (the console and its desktop files). Installs what it needs, reuses
# build/ (configured as scripts/setup.sh does; builds only what the packages hold, not the
# tests), then runs lintian on the packages:
# exit 1 on any lintian error or hardening tag. Works on a fresh Debian 12 as root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh lintian
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target flashstock_installed
rm -rf build/packages
(cd build && cpack -G DEB >/dev/null)
ls -1 build/packages/*.deb
# The Debian tags we leave are explained in the README's Install section. Any hardening tag
# (hardening-no-pie, -relro, -bindnow, -fortify-functions; some are only info) fails too:
# every build takes Debian's hardening flags (cmake/Hardening.cmake). Shown: errors,
# warnings and hardening tags.
report=$(lintian --fail-on error --display-info --tag-display-limit 0 build/packages/*.deb) \
  || { echo "$report"; exit 1; }
grep -Ev '^I: ' <<<"$report" || true
if grep -E '^[A-Z]: [^ ]+: hardening-' <<<"$report" >&2; then
  echo "lintian: the binaries above lack a hardening feature" >&2
  exit 1
fi
