#!/bin/sh
# Runs benchmark rows as a GPU test: the rows must end with status 0 and each must have run.
#   usage: bench_rows.sh <benchmark binary> <filter> <row>...
# Each <row> is a text that some line of the output must contain (a row that ran prints its name;
# a crash, an error or a skipped row fails the test). Exits 77 (ctest's skip) without a GPU.
bin=$1
filter=$2
shift 2
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIPPED: no GPU (nvidia-smi -L failed)"
  exit 77
fi
out=$(CUSH_BENCH_MIN_TIME=0.01 "$bin" --benchmark_filter="$filter" --benchmark_repetitions=2 2>&1)
got=$?
printf '%s\n' "$out"
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
