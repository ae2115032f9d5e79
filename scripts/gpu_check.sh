#!/usr/bin/env bash
# Runs on a GPU host: build, the whole GPU test suite, compute-sanitizer (memcheck) over the GPU
# tests, the host-memory probe and the benchmarks. Logs go to $OUT (default ./gpu-out); a short
# summary is printed last.
#
#   CUSH_STEPS   comma list of build,test,test1,demo,sanitize,report,probe,bench,devbench,halobench,
#                casebench
#                (default: all but report; test1 runs the suite with one GPU visible; report runs
#                scripts/report.sh and packs docs/results into $OUT/results.tgz)
#   CUSH_BENCH_FILTER  Google Benchmark filter for bench_host_ops (default: all)
#   CUSH_DEVBENCH_FILTER  the same for bench_device_ops
#   CUSH_CASE_FILTER, CUSH_CASE_REPETITIONS  filter and repetitions (default 3) for bench_cases
#                (casebench; the matmul and advection tables go to $OUT/matmul.md, advection.md)
#   CUSH_SANITIZE_FILTER  gtest filter for the memcheck step (default: all tests)
#   CUSH_CTEST_REGEX   ctest -R regex for the test step (default: all tests)
#   CUSH_BUILD_DIR     build directory (default: build-gpu)
#   CUSH_TEST_TIMEOUT  seconds one test may take before ctest stops it (default: 300)
#   CUSH_SANITIZE_TIMEOUT  seconds for one test binary under memcheck (default: 600)
summary_name=summary.txt
source "$(dirname "$0")/gpu_script.sh"
steps=",${CUSH_STEPS:-build,test,test1,demo,sanitize,probe,bench},"
has() { [[ "$steps" == *",$1,"* ]]; }
# The Markdown summary of one benchmark run (tools/cushreport; docs/report.md).
summarize() { PYTHONPATH="$PWD/tools" python3 -m cushreport summarize "$@"; }

note "== cush GPU check $(date -u +%Y-%m-%dT%H:%MZ) on $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
note "   driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1), $(nvcc --version | tail -1)"

if has build; then
  gen=(-G Ninja); [ -f "$build/CMakeCache.txt" ] && gen=()
  if cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" >>"$OUT/build.log" 2>&1; then
    note "build: ok ($(elapsed))"
  else
    note "build: FAILED ($(elapsed)); last lines:"; tail -30 "$OUT/build.log" | tee -a "$summary"; exit 1
  fi
fi

if has test; then
  (cd "$build" && timeout 900 ctest -j 8 --output-on-failure --timeout "${CUSH_TEST_TIMEOUT:-300}" -R "${CUSH_CTEST_REGEX:-.}") >"$OUT/ctest.log" 2>&1
  rc=$?
  note "ctest (rc $rc, $(elapsed)): $(grep -E 'tests passed' "$OUT/ctest.log")"
  note "   skipped: $(grep -c '(Skipped)' "$OUT/ctest.log"), failed: $(grep -cE '\(Failed\)|\(Timeout\)|Exception' "$OUT/ctest.log")"
  grep -E '\(Failed\)|\(Timeout\)' "$OUT/ctest.log" | head -20 | tee -a "$summary"
fi

if has test1; then
  # The same suite on a host with one GPU: 2-GPU tests must skip, the rest pass.
  (cd "$build" && CUDA_VISIBLE_DEVICES=0 timeout 600 ctest -j 8 --output-on-failure --timeout "${CUSH_TEST_TIMEOUT:-300}") >"$OUT/ctest_1gpu.log" 2>&1
  rc=$?
  note "ctest, 1 GPU visible (rc $rc, $(elapsed)): $(grep -E 'tests passed' "$OUT/ctest_1gpu.log"), skipped: $(grep -c '(Skipped)' "$OUT/ctest_1gpu.log")"
  grep -E '\(Failed\)|\(Timeout\)' "$OUT/ctest_1gpu.log" | head -20 | tee -a "$summary"
fi

if has demo; then
  timeout 120 "$build/examples/cush_demo" 1024 >"$OUT/demo.log" 2>&1
  note "demo: rc $? ($(elapsed))"
  cat "$OUT/demo.log" >>"$summary"
fi

if has sanitize; then
  : >"$OUT/sanitizer.log"
  for t in $(find "$build/tests" "$build/cases" -name "test_*_gpu" -type f -executable | sort); do
    echo "=== $t" >>"$OUT/sanitizer.log"
    if ! "$t" --gtest_filter="${CUSH_SANITIZE_FILTER:-*}" --gtest_list_tests | grep -q '^  '; then
      note "memcheck $(basename "$t"): no test matches the filter"; continue
    fi
    CUSH_TEST_TOOL=memcheck GTEST_FILTER="${CUSH_SANITIZE_FILTER:-*}" timeout "${CUSH_SANITIZE_TIMEOUT:-600}" compute-sanitizer --tool memcheck --leak-check full --report-api-errors no \
      --error-exitcode 99 "$t" >>"$OUT/sanitizer.log" 2>&1
    rc=$?
    note "memcheck $(basename "$t"): rc $rc, $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1) ($(elapsed))"
  done
fi

if has report; then
  # The GPU host has no pmccabe package: carry one in .tools/bin (see README).
  CUSH_BUILD_DIR="$build" bash scripts/report.sh >"$OUT/report.log" 2>&1
  note "report: rc $? ($(elapsed)); $(tail -1 "$OUT/report.log")"
  tar czf "$OUT/results.tgz" docs/results
fi

if has probe; then
  timeout 300 "$build/bench/probe_host_memory" 4 >"$OUT/probe.md" 2>&1
  note "probe: rc $? ($(elapsed))"
fi

if has bench; then
  timeout 900 "$build/bench/bench_host_ops" --benchmark_filter="${CUSH_BENCH_FILTER:-.}" \
    --benchmark_out="$OUT/host_ops.json" --benchmark_out_format=json >"$OUT/bench.log" 2>&1
  note "bench_host_ops: rc $? ($(elapsed))"
  summarize host_ops "$OUT/host_ops.json" >"$OUT/host_ops.md" 2>&1 || true
fi

if has devbench; then
  timeout 900 "$build/bench/bench_device_ops" --benchmark_filter="${CUSH_DEVBENCH_FILTER:-.}" \
    --benchmark_out="$OUT/device_ops.json" --benchmark_out_format=json >"$OUT/devbench.log" 2>&1
  note "bench_device_ops: rc $? ($(elapsed))"
  summarize device_ops "$OUT/device_ops.json" >"$OUT/device_ops.md" 2>&1 || true
fi

if has casebench; then
  timeout 900 "$build/bench/bench_cases" --benchmark_filter="${CUSH_CASE_FILTER:-.}" \
    --benchmark_repetitions="${CUSH_CASE_REPETITIONS:-3}" \
    --benchmark_out="$OUT/cases.json" --benchmark_out_format=json >"$OUT/casebench.log" 2>&1
  note "bench_cases: rc $? ($(elapsed))"
  summarize matmul "$OUT/cases.json" >"$OUT/matmul.md" 2>&1 || true
  summarize advection "$OUT/cases.json" >"$OUT/advection.md" 2>&1 || true
fi

if has halobench; then
  timeout 600 "$build/bench/bench_halo" --benchmark_out="$OUT/halo.json" --benchmark_out_format=json >"$OUT/halobench.log" 2>&1
  note "bench_halo: rc $? ($(elapsed))"
  summarize halo "$OUT/halo.json" >"$OUT/halo.md" 2>&1 || true
fi

echo
[ -f "$OUT/matmul.md" ] && cat "$OUT/matmul.md"
[ -f "$OUT/advection.md" ] && cat "$OUT/advection.md"
[ -f "$OUT/halo.md" ] && cat "$OUT/halo.md"
[ -f "$OUT/device_ops.md" ] && cat "$OUT/device_ops.md"
[ -f "$OUT/host_ops.md" ] && tail -40 "$OUT/host_ops.md"
[ -f "$OUT/probe.md" ] && tail -45 "$OUT/probe.md"
echo
cat "$summary"
