#!/usr/bin/env bash
# Configures and builds cush into build/ (override with CUSH_BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CUSH_BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && generator=()  # keep the generator of an existing build
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
