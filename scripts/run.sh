#!/usr/bin/env bash
# Quick start 1: set up, build, and run the main job (the demo: scatter, kernel, gather on every GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
"${CUSH_BUILD_DIR:-build}/examples/cush_demo" "$@"
