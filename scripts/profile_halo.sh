#!/usr/bin/env bash
# Runs on a GPU host after a build: the kernel times and DRAM traffic of halo exchanges under
# Nsight Compute (ncu serializes kernels, so each is timed alone).
#   usage: scripts/profile_halo.sh [build-dir] [benchmark-regex ...]
#   (names end in /min_time:.../manual_time: anchor a regex with a trailing "/", not "$")
#   CUSH_PROFILE_BENCH  the benchmark binary in <build>/bench (default bench_halo; e.g. bench_cases)
#   CUSH_PROFILE_METRICS  extra ncu metrics, comma-separated (e.g. sm__warps_active.avg.pct_of_peak_sustained_active)
#   CUSH_PROFILE_LAUNCHES  kernels profiled per filter (default 8)
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0
build=${1:-build-gpu}
shift || true
filters=("$@")
[ ${#filters[@]} -eq 0 ] && filters=('halo/cush/x/4096/d1/' 'halo/staged/x/4096/d1/' 'halo/cush/x/420/d1/')
bench=${CUSH_PROFILE_BENCH:-bench_halo}
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size${CUSH_PROFILE_METRICS:+,$CUSH_PROFILE_METRICS}
for f in "${filters[@]}"; do
  echo "=== $f"
  raw=$(mktemp)
  CUSH_BENCH_MIN_TIME=0.001 timeout 120 ncu --clock-control none --metrics "$metrics" --launch-count "${CUSH_PROFILE_LAUNCHES:-8}" --csv \
    "$build/bench/$bench" --benchmark_filter="$f" >"$raw" 2>&1
  grep -qE '^"[0-9]' "$raw" || { echo "no ncu rows; its output ends:"; tail -15 "$raw"; }
  grep -E '^"[0-9]' "$raw" | awk -F'","' '{printf "%-4s %-28.28s dev %s  %-28s %s %s\n", substr($1,2), $5, $10, $(NF-2), $NF, $(NF-1)}'
done
