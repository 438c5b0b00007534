#!/usr/bin/env bash
# Installs the Debian packages FlashStock needs and builds it (Release) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache: a second configuration of the same sources (CI's headless build) or a rebuild
# after a clean compiles only what changed.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build -j"$(nproc)"
