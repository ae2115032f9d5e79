#!/usr/bin/env bash
# Quick start 1: set up, build, and run the main job: the demo (scatter, kernel, gather on every
# GPU), then the report (complexity always; benchmarks and performance where there are GPUs),
# which regenerates docs/results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
"${CUSH_BUILD_DIR:-build}/examples/cush_demo" "$@"
bash scripts/report.sh
