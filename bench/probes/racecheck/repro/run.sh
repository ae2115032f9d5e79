#!/usr/bin/env bash
# Builds the racecheck repros of this folder and runs each configuration under compute-sanitizer
# racecheck: one line per run (the program's output and the hazards reported), every run's whole
# report in LOG_DIR/racecheck_repro.log. Needs a GPU of compute capability 9.0 and a build of the
# project (for cases/karst's karst_resident_run):
#   bash bench/probes/racecheck/repro/run.sh [BUILD_DIR] [LOG_DIR] [RUNS_FILE]
# RUNS_FILE: one run per line, "PROGRAM ARGS..." (default: runs.txt beside this script).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
build="$(cd "${1:-$root/build-gpu}" && pwd)"
logs="${2:-$build/racecheck_repro}"
runs="${3:-$here/runs.txt}"
mkdir -p "$logs"
nvcc=/usr/local/cuda/bin/nvcc
sanitizer=/usr/local/cuda/bin/compute-sanitizer
flags=(-std=c++20 -O3 -lineinfo --generate-code=arch=compute_90,code=sm_90)
"$nvcc" "${flags[@]}" -o "$logs/pattern" "$here/pattern.cu" || exit 1
[ -x "$build/cases/karst/karst_resident_run" ] || { echo "no $build/cases/karst/karst_resident_run: build the project first"; exit 1; }
ln -sf "$build/cases/karst/karst_resident_run" "$logs/karst_resident_run"
all="$logs/racecheck_repro.log"
: >"$all"
while read -r program args; do
  [[ -z "$program" || "$program" == \#* ]] && continue
  log="$logs/one.log"
  # shellcheck disable=SC2086  # args: the run's arguments, split on spaces
  "$sanitizer" --tool racecheck --racecheck-report hazard "$logs/$program" $args >"$log" 2>&1
  rc=$?
  printf '%-40s rc %d: %s | %s\n' "$program $args" "$rc" "$(grep -v '^=' "$log" | tail -1)" \
    "$(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$log" | tr -s ' ' | tr '\n' ' ')"
  { echo "##### $program $args"; cat "$log"; } >>"$all"
done <"$runs"
rm -f "$logs/one.log" "$logs/pattern" "$logs/karst_resident_run"
