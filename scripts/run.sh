#!/usr/bin/env bash
# Quick start 1: set up, build, and run the main job: the demo (scatter, kernel, gather on every
# GPU), then the report (complexity always; benchmarks and performance where there are GPUs).
#
#   usage: scripts/run.sh [MiB]
#   MiB: the demo's buffer in mebibytes (default 1024; cush_demo --help says more).
#   The report goes to build/report (a copy of docs/results, updated): the repository's files
#   stay as they are. scripts/report.sh --update-docs writes into docs/results instead.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
if [ $# -gt 1 ]; then echo "run.sh: one argument at most (the demo's MiB); see scripts/run.sh --help" >&2; exit 2; fi
bash scripts/setup.sh
bash scripts/build.sh
"${CUSH_BUILD_DIR:-build}/examples/cush_demo" "$@"
bash scripts/report.sh
