#!/usr/bin/env bash
# Quick start 2: set up, build, and run the whole test suite. GPU tests skip, with their reason,
# where the machine has no GPU or too few.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd "${CUSH_BUILD_DIR:-build}"
rc=0
ctest -j "$(nproc)" --output-on-failure --timeout 1200 || rc=$?
# ctest lists skipped tests but not why: each one's reason, from its output.
python3 "$OLDPWD/scripts/skip_reasons.py" Testing/Temporary/LastTest.log || true
exit "$rc"
