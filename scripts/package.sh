#!/usr/bin/env bash
# Builds FlashStock's Debian packages into build/packages/ (CPack, cmake/Packaging.cmake):
# flashstock-tools (CLI, server, systemd units, completion; no GUI libraries) and
# flashstock-console (the console and its desktop files). Installs what it needs, reuses
# build/ (configured and built as scripts/setup.sh does), then runs lintian on the packages:
# exit 1 on any lintian error. Works on a fresh Debian 12 as root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh lintian
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
rm -rf build/packages
(cd build && cpack -G DEB >/dev/null)
ls -1 build/packages/*.deb
# The Debian tags we leave are explained in the README's Install section.
lintian --fail-on error --no-tag-display-limit build/packages/*.deb
