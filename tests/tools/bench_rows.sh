#!/bin/sh
# Runs benchmark rows as a GPU test: the rows must end with status 0 and each must have run.
#   usage: bench_rows.sh [--gpus N] <benchmark binary> <filter> <row>...
# Each <row> is a text that some line of the output must contain (a row that ran prints its name;
# a crash, an error or a skipped row fails the test). Exits 77 (ctest's skip) without a GPU, and
# with --gpus N (rows of N GPUs) where fewer than N GPUs are visible (nvidia-smi's GPUs, at most
# as many as CUDA_VISIBLE_DEVICES names) or the GPUs are virtual (CUSH_VIRTUAL_GPUS over fewer
# GPUs: the benchmarks leave multi-GPU rows out there).
need=1
if [ "${1:-}" = "--gpus" ]; then
  case ${2:-} in
    '' | *[!0-9]* | 0) echo "bench_rows.sh: --gpus wants a count from 1, not '${2:-}'"; exit 2 ;;
  esac
  need=$2
  shift 2
fi
[ $# -ge 3 ] || { echo "bench_rows.sh: want [--gpus N] <benchmark binary> <filter> <row>..."; exit 2; }
bin=$1
filter=$2
shift 2
if ! list=$(nvidia-smi -L 2>/dev/null); then
  echo "SKIPPED: no GPU (nvidia-smi -L failed)"
  exit 77
fi
have=$(printf '%s\n' "$list" | grep -c '^GPU ')
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  named=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  [ "$named" -lt "$have" ] && have=$named
fi
if [ "$have" -lt "$need" ]; then
  echo "SKIPPED: the rows need $need GPUs; $have visible"
  exit 77
fi
out=$(CUSH_BENCH_MIN_TIME=0.01 "$bin" --benchmark_filter="$filter" --benchmark_repetitions=2 2>&1)
got=$?
printf '%s\n' "$out"
if [ "$need" -gt 1 ]; then
  case $out in
    *"multi-GPU rows are left out"*) echo "SKIPPED: the rows need $need GPUs; these are virtual"; exit 77 ;;
  esac
fi
if [ "$got" -ne 0 ]; then
  echo "bench_rows.sh: $bin ended with status $got"
  exit 1
fi
case $out in
  *ERROR\ OCCURRED*|*skipped:*) echo "bench_rows.sh: a row reported an error or skipped"; exit 1 ;;
esac
for row in "$@"; do
  case $out in
    *"$row"*) ;;
    *) echo "bench_rows.sh: no row '$row' in the output"; exit 1 ;;
  esac
done
exit 0
