#!/usr/bin/env bash
# The report: complexity of every case (always); on a machine with GPUs also the benchmarks
# (repetitions for the statistics), then the performance report and summary.json. Without a GPU
# the performance report is re-rendered from the measurements committed in docs/results/data.
#
#   usage: scripts/report.sh [--update-docs] [--no-measure]
#   By default everything goes into <build>/report, a copy of docs/results that the report then
#   updates: the repository's tracked files stay as they are. --update-docs writes into
#   docs/results itself (what a maintainer commits after a run). --no-measure re-renders from the
#   committed measurements even on a machine with GPUs (no benchmarks run).
# Needs a build (scripts/build.sh; CUSH_BUILD_DIR, default build).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
update=0 measure=1
for arg in "$@"; do
  case $arg in
    --update-docs) update=1 ;;
    --no-measure) measure=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "report.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done
build=${CUSH_BUILD_DIR:-build}
results=docs/results
if [ "$update" = 0 ]; then
  # The committed results are the report's inputs (earlier runs, the pages it quotes): copied,
  # so that the report reads them and writes beside them without touching the originals.
  mkdir -p "$build"
  results="$build/report"
  rm -rf "$results"
  cp -r docs/results "$results"
fi
export NCCL_NVLS_ENABLE=0
# A pmccabe carried to a machine without a package manager (the GPU host) lives here.
[ -x .tools/bin/pmccabe ] && export PATH="$PWD/.tools/bin:$PATH"

if [ "$measure" = 1 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && [ -x "$build/bench/bench_cases" ]; then
  reps=${CUSH_REPORT_REPETITIONS:-3}
  export CUSH_BENCH_MIN_TIME=${CUSH_BENCH_MIN_TIME:-0.1}
  echo "report: measuring on $(nvidia-smi -L | wc -l) GPU(s), $reps repetitions (a few minutes)"
  "$build/bench/bench_cases" --benchmark_repetitions="$reps" \
    --benchmark_out="$results/data/perf_cases.json" --benchmark_out_format=json
  "$build/bench/bench_host_ops" --benchmark_repetitions="$reps" \
    --benchmark_filter='host/(scatter|gather|broadcast)/(pinned|pageable|registered)/(raw|cush)/(16|64|256|1024|4096)MiB' \
    --benchmark_out="$results/data/perf_host_ops.json" --benchmark_out_format=json
elif [ "$measure" = 0 ]; then
  echo "report: --no-measure: the performance report is re-rendered from the measurements committed in docs/results"
else
  echo "report: no GPU here, so the speed part cannot be measured; the performance report is re-rendered"
  echo "        from the measurements committed in docs/results (their context line says where they were taken)"
fi
PYTHONPATH="$PWD/tools${PYTHONPATH:+:$PYTHONPATH}" python3 -m cushreport report --results "$results"
if [ "$update" = 0 ]; then
  echo "report: written to $results (complexity.md, performance.md, summary.json, the plots);"
  echo "        docs/results is unchanged (scripts/report.sh --update-docs writes there)"
fi
