#!/usr/bin/env bash
# Builds launches.cu and prints how much host memory compute-sanitizer's racecheck (and, for
# comparison, memcheck and no tool) keeps per kernel launch, for kernels with and without shared
# memory, small and large, on 1-D and 3-D grids (docs/reliability.md, "Racecheck's host memory").
# The program synchronizes at each quarter of its launches and prints VmRSS there. Racecheck's
# memory grows between synchronizations and is reused after them, so read the growth up to the
# first quarter (its last figure, "per launch", averages over all launches and hides that).
# Needs a GPU of compute capability 9.0:
#   bash bench/probes/racecheck/memory/run.sh [LOG_DIR] [LAUNCHES]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${1:-$PWD/racecheck_memory}"
launches="${2:-4000}"
mkdir -p "$logs"
/usr/local/cuda/bin/nvcc -std=c++20 -O3 -lineinfo --generate-code=arch=compute_90,code=sm_90 \
  -o "$logs/launches" "$here/launches.cu" || exit 1
sanitizer=/usr/local/cuda/bin/compute-sanitizer
for shape in "64 1 1" "1 2 64"; do
  for kind in plain shared big; do
    for tool in none racecheck memcheck; do
      [ "$tool" = memcheck ] && [ "$kind" != plain ] && continue
      cmd=("$logs/launches" "$kind" "$launches" $shape)
      [ "$tool" != none ] && cmd=("$sanitizer" --tool "$tool" "${cmd[@]}")
      t=$(date +%s)
      line=$("${cmd[@]}" 2>&1 | grep -E 'per launch|SUMMARY|rror' | tr '\n' ' ')
      printf '%-9s %s (%ss)\n' "$tool" "$line" $(( $(date +%s) - t ))
    done
  done
done | tee "$logs/racecheck_memory.txt"
rm -f "$logs/launches"
