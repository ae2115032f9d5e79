#!/usr/bin/env bash
# Quick start 2: set up, build, and run the whole test suite. GPU tests skip, with their reason,
# where the machine has no GPU or too few.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd "${CUSH_BUILD_DIR:-build}"
ctest -j "$(nproc)" --output-on-failure --timeout 1200
