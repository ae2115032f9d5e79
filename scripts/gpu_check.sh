#!/usr/bin/env bash
# Runs on a GPU host: build, the whole GPU test suite, compute-sanitizer (memcheck) over the GPU
# tests, the host-memory probe and the benchmarks. Logs go to $OUT (default ./gpu-out); a short
# summary is printed last.
#
#   CUSH_STEPS   comma list of build,test,demo,archcheck,sanitize,report,probe,bench,devbench,halobench,
#                casebench,multi,profile
#                (default: build,test,demo,sanitize,probe,bench; report runs scripts/report.sh and
#                packs docs/results into $OUT/results.tgz)
#   CUSH_SUITE_GPUS  the GPU lists the test step runs the whole suite with, in turn (default: every
#                GPU, then 0,1 and 0 where the host has more; e.g. "0,1,2,3 0,1 0"). Per list it
#                prints passed / skipped / failed, the skip reasons, the wall time and the slowest
#                tests. CUSH_SUITE_SIDE_BY_SIDE=1 runs disjoint lists at once (e.g. "2,3 1").
#   CUSH_SUITE_SHARD  k/n: only every n-th test from the k-th (ctest -I k,,n, by test number), so
#                that the suite can run in n calls, each with its own build (a host of 4 GPUs
#                takes longer than one 10-minute call for build and suite; a later call may find
#                a fresh host). The shards together are the whole suite (a fixture's set-up test,
#                e.g. consumer.install, runs in every shard that needs it); each shard's summary
#                says which it ran.
#   CUSH_SUITE_TESTS  regex: only the tests whose ctest names match, grouped as the whole suite
#                (e.g. 'Fft|[Tt]ranspose'); not with CUSH_SUITE_SHARD
#   CUSH_SUITE_JOBS  tests run side by side (default 12), after the fault walks, which run first
#                among themselves (CUSH_SUITE_WALK_JOBS at a time, default 6); the tests that compare free GPU memory
#                (fault walks, misuse, plan rejection) run after them, one at a time, except where
#                the driver reports each process's GPU memory (NVML; test_process_memory_gpu checks):
#                then the leak checks count their own process's memory and share the GPUs, and only
#                the plan tests that reason about free memory run alone. CUSH_TEST_MEMORY=device
#                keeps the one-at-a-time way. In a fresh build tree the tests' times of an earlier
#                run (scripts/suite_costs.txt) let the longest start first.
#   CUSH_BENCH_FILTER  Google Benchmark filter for bench_host_ops (default: all)
#   CUSH_DEVBENCH_FILTER  the same for bench_device_ops
#   CUSH_CASE_FILTER, CUSH_CASE_REPETITIONS  filter and repetitions (default 3) for bench_cases
#                (casebench; the matmul and advection tables go to $OUT/matmul.md, advection.md)
#   multi (step): the multi-GPU goals' benchmarks (docs/results/multi_gpu.md), one JSON file per
#                part named multi_gpu_<date>_<part>.json in $OUT, each part under its own time
#                limit, then `summarize multi_gpu` of them in $OUT/multi_gpu.md:
#     CUSH_MULTI_PARTS  (default "device_ops halo lbm advection matmul karst fft scale") any of
#                device_ops (bench_device_ops once per count of CUSH_MULTI_OP_GPUS, default
#                "2 <all>", on the first GPUs: cush, cush with the peer kernel forced, NCCL (also
#                on symmetric windows) and the raw twin), halo (bench_halo), overlap
#                (bench_overlap, into overlap_<date>.json, outside the multi-GPU summary; not in
#                the default parts), ranks (the cases across processes, issue 49: `mpiexec -n
#                <every GPU> bench_ranks`, one process per GPU, at 256, 512 and 1024, into
#                multi_gpu_<date>_ranks.json, and bench_cases' one-process rows of the same GPU
#                count into multi_gpu_<date>_cases_ranks.json; needs bench_ranks, built where MPI
#                is found; not in the default parts), and bench_cases' rows of lbm,
#                advection, matmul, karst, fft, scale on 1, 2, 4 ... GPUs, and rbffd (strong at
#                2^20-2^24, overlapped, captured into a CUDA graph, weak, the exchange alone, the stage's SpMV against the copy;
#                not in the default parts: its set-up at 2^24 takes minutes), and temporal (the
#                ceilings, the fused advection rows, and the wave case's single-GPU rows and its
#                overlapped multi-GPU rows at orders 2 and 8 (one step) and 2 (4 fused steps), at
#                512^3 and 1024^3, then `summarize temporal` of them in $OUT/temporal.md; not in
#                the default parts)
#     CUSH_MULTI_FILTER_<part>  another Google Benchmark filter for a part of bench_cases, or for
#                halo or device_ops (e.g. CUSH_MULTI_FILTER_lbm='^case/lbm_weak_esoteric_fp32/': only the weak
#                series; CUSH_MULTI_FILTER_halo='/(2048|4096)/': the large faces)
#     CUSH_MULTI_TIMEOUT  seconds per part (default: per part, 120-400 s; all parts take longer
#                than 10 minutes); CUSH_MULTI_REPETITIONS (default 3)
#   profile (step): a trace (tools/trace: CUPTI's copies, kernels, memsets, and the host's runtime
#                calls) of each benchmark row in CUSH_PROFILE_ROWS,
#                space-separated <binary>:<filter> pairs (default: the 4-GPU broadcast at 1 GiB and
#                the all-to-all at 16 MiB, cush's and the reference's, and 4-GPU advection at 512^3,
#                cush's and raw CUDA's), each summarized by `cushreport trace` (the typical
#                operation's copies and kernels: which device sends what to which, when, how fast)
#                in $OUT/profile_<n>.md, all of them in $OUT/profiles.md
#   CUSH_SANITIZE_FILTER  gtest filter for the memcheck step (default: all tests)
#   CUSH_BUILD_DIR     build directory (default: build-gpu)
#   CUSH_TEST_TIMEOUT  seconds one test may take before ctest stops it (default: 400)
#   CUSH_SANITIZE_TIMEOUT  seconds for one test binary under memcheck (default: 600)
case ${1:-} in
  -h|--help) sed -n '2,/^summary_name=/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
# A mistyped step or part would otherwise run nothing and exit 0.
known_steps=" build test demo archcheck sanitize report probe bench devbench halobench casebench multi profile "
for s in ${CUSH_STEPS//,/ }; do
  [[ "$known_steps" == *" $s "* ]] || { echo "gpu_check.sh: CUSH_STEPS: no step '$s' (steps:$known_steps)" >&2; exit 2; }
done
known_parts=" device_ops overlap ranks halo lbm advection matmul karst fft scale rbffd temporal "
if [ -n "${CUSH_SUITE_SHARD:-}" ]; then
  [[ "$CUSH_SUITE_SHARD" =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] && ((BASH_REMATCH[1] <= BASH_REMATCH[2])) ||
    { echo "gpu_check.sh: CUSH_SUITE_SHARD='$CUSH_SUITE_SHARD': want k/n with 1 <= k <= n" >&2; exit 2; }
fi
[ -n "${CUSH_SUITE_SHARD:-}" ] && [ -n "${CUSH_SUITE_TESTS:-}" ] &&
  { echo "gpu_check.sh: CUSH_SUITE_TESTS and CUSH_SUITE_SHARD do not combine (ctest picks by number or by name)" >&2; exit 2; }
for p in ${CUSH_MULTI_PARTS:-}; do
  [[ "$known_parts" == *" $p "* ]] || { echo "gpu_check.sh: CUSH_MULTI_PARTS: no part '$p' (parts:$known_parts)" >&2; exit 2; }
done
summary_name=summary.txt
source "$(dirname "$0")/gpu_script.sh"
steps=",${CUSH_STEPS:-build,test,demo,sanitize,probe,bench},"
has() { [[ "$steps" == *",$1,"* ]]; }
# The Markdown summary of one benchmark run (tools/cushreport; docs/report.md).
summarize() { PYTHONPATH="$PWD/tools" python3 -m cushreport summarize "$@"; }

note "== cush GPU check $(date -u +%Y-%m-%dT%H:%MZ) on $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
note "   driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1), $(nvcc --version | tail -1)"

if has build; then
  gen=(-G Ninja); [ -f "$build/CMakeCache.txt" ] && gen=()
  # Without the tests' resource lock: the test step runs what may share the GPUs side by side.
  if cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCUSH_GPU_TEST_LOCK=OFF >"$OUT/build.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" >>"$OUT/build.log" 2>&1; then
    note "build: ok ($(elapsed))"
  else
    note "build: FAILED ($(elapsed)); last lines:"; tail -30 "$OUT/build.log" | tee -a "$summary"; exit 1
  fi
fi

# One run of the whole suite with the GPUs `$1` (a comma list of indices) visible; logs and a
# summary paragraph under $OUT/suite_<label>*. Side-by-side runs use copies of the build tree
# (each ctest writes its own Testing/ folder).
run_suite() {
  local visible=$1 label tree log t1 wall results passed skipped failed only=() alone memory
  label="$(tr -cd ',' <<<"$visible" | wc -c | xargs -I{} expr {} + 1)gpu_${visible//,/}"
  tree=$build
  # Side by side: GPU tests only (the host tests share paths of the build tree, and need no GPU).
  if [ -n "${2:-}" ]; then tree="$build-$label"; rm -rf "$tree"; cp -a "$build" "$tree"; only=(-L gpu); fi
  local shard=""
  if [ -n "${CUSH_SUITE_SHARD:-}" ]; then
    local k=${CUSH_SUITE_SHARD%/*} n=${CUSH_SUITE_SHARD#*/}
    only+=(-I "$k,,$n"); shard=" (shard $k of $n)"; label+="_shard${k}of$n"
  fi
  log="$OUT/suite_${label}.log"
  # A fresh tree has no record of the tests' times: ctest would start them in the order of their
  # numbers, the longest among the last. The times of an earlier run let the longest start first.
  local costs="$tree/Testing/Temporary/CTestCostData.txt"
  if [ ! -f "$costs" ]; then
    mkdir -p "$(dirname "$costs")"
    { grep -v '^#' scripts/suite_costs.txt | awk '{print $1, 1, $2}'; echo ---; } >"$costs"
  fi
  t1=$(date +%s)
  # The walks first, then the rest, then what must run alone (gpu_script.sh, grouped_ctest).
  CUDA_VISIBLE_DEVICES=$visible grouped_ctest "$tree" "$OUT/suite_${label}" "${only[@]}" >"$log" 2>&1
  wall=$(( $(date +%s) - t1 ))
  # ctest's result lines: "  12/345 Test  #67: gpu.Foo.Bar ....   Passed    1.23 sec"
  results=$(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$log")
  passed=$(grep -cE '\.  +Passed +[0-9.]+ sec' <<<"$results")
  skipped=$(grep -c '\*\*\*Skipped' <<<"$results")
  failed=$(grep -cE '\*\*\*(Failed|Timeout|Exception|Not Run)' <<<"$results")
  {
    echo "suite$shard${CUSH_SUITE_TESTS:+ (only the tests matching $CUSH_SUITE_TESTS)}, GPUs $visible visible${2:+ (GPU tests)}: $passed passed, $skipped skipped, $failed failed of $(wc -l <<<"$results") in ${wall}s (leak checks count memory per $memory; alone: $alone)"
    [ $memory = process ] || echo "     per-process memory not used: $(grep -m1 -iE 'but|skipped' "$OUT/suite_${label}_memory_check.log")"
    grep -E '\*\*\*(Failed|Timeout|Exception|Not Run)' <<<"$results" | head -20
    # GoogleTest wrote each skip's reason on the line after "Skipped".
    cat "$OUT/suite_${label}_shared_full.log" "$OUT/suite_${label}_alone_full.log" 2>/dev/null |
      grep -A1 ": Skipped$" | grep -v -e ": Skipped$" -e "^--$" | sort | uniq -c | sed 's/^/     skip: /'
    echo "     slowest: $(sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec.*/\2 \1/' <<<"$results" | sort -rn |
      head -6 | awk '{printf "%s %ss; ", $2, $1}')"
  } >"$OUT/suite_${label}.txt"
}

if has test; then
  total=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  lists=${CUSH_SUITE_GPUS:-$(seq -s, 0 $((total - 1))) $( ((total > 2)) && echo 0,1) $( ((total > 1)) && echo 0)}
  # Discover the tests once before runs side by side read the lists.
  (cd "$build" && ctest -N >/dev/null 2>&1)
  if [ -n "${CUSH_SUITE_SIDE_BY_SIDE:-}" ]; then
    # Disjoint GPU lists at once (e.g. CUSH_SUITE_GPUS="2,3 1"), each in a copy of the build.
    for v in $lists; do run_suite "$v" copy & done
    wait
  else
    for v in $lists; do run_suite "$v"; done
  fi
  for f in "$OUT"/suite_*gpu_*.txt; do [ -f "$f" ] && tee -a "$summary" <"$f"; done
fi

if has demo; then
  timeout 120 "$build/examples/cush_demo" 1024 >"$OUT/demo.log" 2>&1
  note "demo: rc $? ($(elapsed))"
  cat "$OUT/demo.log" >>"$summary"
fi

if has archcheck; then
  # A build without code for this GPU (sm_80 only, no PTX) must refuse it at first use with
  # cush::UnsupportedDevice, naming the capability and what to rebuild with (docs/guide.md,
  # "Errors"): the demo, built so, must exit 1 saying so.
  major=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | cut -d. -f1)
  if [ "${major:-0}" -lt 9 ]; then
    note "archcheck: this GPU is compute capability ${major:-?}.x; the check needs 9.0 or later (it builds for 8.0 only)"
  else
    arch_build="$build-sm80"
    if cmake -S . -B "$arch_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=80-real \
         -DCUSH_BUILD_TESTS=OFF -DCUSH_BUILD_BENCHMARKS=OFF -DCUSH_BUILD_TRACER=OFF >"$OUT/archcheck.log" 2>&1 &&
       cmake --build "$arch_build" -j "$(nproc)" --target cush_demo >>"$OUT/archcheck.log" 2>&1; then
      timeout 120 "$arch_build/examples/cush_demo" 16 >>"$OUT/archcheck.log" 2>&1
      rc=$?
      if [ "$rc" -eq 1 ] && grep -q "has no code for it" "$OUT/archcheck.log"; then
        note "archcheck: passed (an sm_80-only build refused this GPU: $(grep -o 'device 0 has compute capability [0-9.]*' "$OUT/archcheck.log" | head -1))"
      else
        note "archcheck: FAILED (rc $rc; last lines of $OUT/archcheck.log below)"; tail -5 "$OUT/archcheck.log" | tee -a "$summary"
      fi
    else
      note "archcheck: the sm_80 build FAILED; last lines:"; tail -20 "$OUT/archcheck.log" | tee -a "$summary"
    fi
  fi
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
  CUSH_BUILD_DIR="$build" bash scripts/report.sh --update-docs >"$OUT/report.log" 2>&1
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
if has profile; then
  # The tracer (tools/trace): CUPTI's record of every copy, kernel and memset, loaded into the
  # benchmark by the CUDA driver (CUDA_INJECTION64_PATH); no Nsight Systems needed.
  tracer="$build/tools/trace/libcush_trace.so"
  default_rows="bench_device_ops:^dev/broadcast/cush/1GiB/ bench_device_ops:^dev/broadcast/raw_nccl/1GiB/
    bench_device_ops:^dev/all_to_all/cush/16MiB/ bench_device_ops:^dev/all_to_all/raw_nccl/16MiB/
    bench_cases:^case/advection/multi_cush/4gpu/512/ bench_cases:^case/advection/multi_cuda/4gpu/512/"
  : >"$OUT/profiles.md"
  if [ ! -f "$tracer" ]; then
    note "profile: $tracer not built (CMake found no CUPTI)"
  else
    i=0
    for row in ${CUSH_PROFILE_ROWS:-$default_rows}; do
      i=$((i + 1)); bin=${row%%:*}; filter=${row#*:}; base="$OUT/profile_$i"
      CUDA_INJECTION64_PATH=$tracer CUSH_TRACE_OUT="$base.csv" CUSH_TRACE_API=1 CUSH_BENCH_MIN_TIME=${CUSH_BENCH_MIN_TIME:-0.02} \
        timeout 180 "$build/bench/$bin" --benchmark_filter="$filter" --benchmark_repetitions=1 >"$base.log" 2>&1
      rc=$?
      { echo "### $bin, $filter"; echo; PYTHONPATH="$PWD/tools" python3 -m cushreport trace "$base.csv"; echo; } >"$base.md" 2>&1
      gzip -f "$base.csv"  # every record, for a closer look (python3 -m cushreport trace reads it unzipped)
      cat "$base.md" >>"$OUT/profiles.md"
      note "profile $i ($bin $filter): rc $rc; $(sed -n 3p "$base.md" | cut -c1-120) ($(elapsed))"
    done
  fi
fi

if has multi; then
  total=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  counts=""; for ((g = 1; g <= total; g *= 2)); do counts+="$g"; done  # e.g. 124: the rows' GPU counts
  call=$(date -u +%Y-%m-%d); reps=${CUSH_MULTI_REPETITIONS:-3}
  # bench_cases' rows of each part (Google Benchmark filters; the names end in /min_time... or /manual_time).
  declare -A rows=(
    [lbm]="^(case/lbm(_weak|_bulk)?_esoteric_(fp32|fp16s)/[a-z_]+/[$counts]gpu/(128|256|512|1024)|exchange/lbm_esoteric_(fp32|fp16s)/[$counts]gpu/(128|256|512|1024))/"
    [advection]="^(case/advection(_overlap)?/[a-z_]+/[$counts]gpu/(256|512|1024)|exchange/advection/[$counts]gpu/1024)/"
    [matmul]="^(case/matmul(_f64)?/[a-z_]+/[$counts]gpu/(4|12|20|40)|xt/matmul(_f64)?/[0-9]+/[$counts]gpu/(20|40))/"
    [karst]="^case/karst/[a-z_]+/[$counts]gpu/(64|512|1024|4096)/"
    [fft]="^case/fft_(natural|transposed_out|transposed)/[a-z_]+/[$counts]gpu/(24|26|27|28|29|30)/|^case/fft_weak_(natural|transposed_out|transposed)/[a-z_]+/[$counts]gpu/(24|26|28)/"
    [scale]="^case/scale/[a-z_]+/[$counts]gpu/"
    [temporal]="^(roof/(copy|fp64_fma)/1gpu|temporal/(advection|advection_overlap)/[0-9]+/[a-z_]+/[$counts]gpu/(512|1024)|case/wave/[0-9]+/single/1gpu/(512|1024)|temporal/wave/[0-9]+/[0-9]+/single/1gpu/(512|1024)|case/wave_overlap/(2|8)/[a-z_]+/[$counts]gpu/(512|1024)|temporal/wave_overlap/2/4/[a-z_]+/[$counts]gpu/(512|1024)|temporal/wave_diamond/2/16/r[123]/[a-z_]+/1gpu/(512|1024))(/|$)"
    [rbffd]="^(case/rbffd(_overlap|_split|_weak|_graph)?/[a-z_]+/[$counts]gpu/(20|22|23|24)|exchange/rbffd/(raw|automatic)/[$counts]gpu/(20|22|24)|spmv/rbffd/(d2d_copy|ell|cusparse_csr_alg1|cusparse_sell)/1gpu/(22|24))/")
  # Seconds per part (per GPU count for device_ops), from the 4 x H200 run of 2026-11-27: 42 LBM
  # rows took 53 s, 42 advection rows 102 s, the device operations 45-60 s per GPU count; 44 FFT
  # rows (2^24 to 2^28, 3 repetitions) 225 s. A part cut off by its limit keeps the benchmarks that
  # ended (below); all parts together take longer than one 10-minute command: run them in groups
  # (CUSH_MULTI_PARTS).
  declare -A limits=([device_ops]=120 [halo]=120 [lbm]=260 [advection]=240 [matmul]=300 [karst]=240 [fft]=400 [scale]=120 [ranks]=300 [rbffd]=500 [temporal]=500)
  for part in ${CUSH_MULTI_PARTS:-device_ops halo lbm advection matmul karst fft scale}; do
    limit=${CUSH_MULTI_TIMEOUT:-${limits[$part]:-120}}
    case $part in
      device_ops)
        for g in ${CUSH_MULTI_OP_GPUS:-2 $total}; do
          visible=$(seq -s, 0 $((g - 1)))
          CUDA_VISIBLE_DEVICES=$visible CUSH_BENCH_MIN_TIME=${CUSH_BENCH_MIN_TIME:-0.05} timeout "$limit" \
            "$build/bench/bench_device_ops" --benchmark_filter="${CUSH_MULTI_FILTER_device_ops:-^dev/[a-z_]+/(raw_peer|raw_nccl|raw_nccl_window|cush|cush_kernel)/}" \
            --benchmark_repetitions="$reps" --benchmark_out="$OUT/multi_gpu_${call}_device_ops_${g}gpu.json" \
            --benchmark_out_format=json >"$OUT/multi_device_ops_${g}gpu.log" 2>&1
          note "multi device_ops, GPUs $visible: rc $? ($(elapsed))"
        done ;;
      overlap)
        timeout "$limit" "$build/bench/bench_overlap" --benchmark_repetitions="$reps" \
          --benchmark_out="$OUT/overlap_${call}.json" --benchmark_out_format=json >"$OUT/multi_overlap.log" 2>&1
        note "multi overlap: rc $? ($(elapsed))"
        PYTHONPATH="$PWD/tools" python3 -m cushreport close "$OUT/overlap_${call}.json" >>"$OUT/multi_close.log" 2>&1
        summarize overlap "$OUT/overlap_${call}.json" >"$OUT/overlap.md" 2>&1 ;;
      ranks)
        if [ ! -x "$build/bench/bench_ranks" ]; then note "multi ranks: no bench_ranks (cush built without MPI)"; continue; fi
        mpi=(mpiexec -n "$total")
        if mpiexec --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
          mpi+=(--oversubscribe)
          [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
        fi
        families='(advection_ranks|advection_ranks_overlap|lbm_ranks_esoteric_fp32)'
        timeout "$limit" "${mpi[@]}" "$build/bench/bench_ranks" \
          --benchmark_filter="${CUSH_MULTI_FILTER_ranks:-^case/$families/rank_[a-z_]+/${total}proc/(256|512|1024)/}" \
          --benchmark_repetitions="$reps" --benchmark_out="$OUT/multi_gpu_${call}_ranks.json" \
          --benchmark_out_format=json >"$OUT/multi_ranks.log" 2>&1
        note "multi ranks, $total processes: rc $? ($(elapsed))"
        CUSH_BENCH_MIN_TIME=${CUSH_BENCH_MIN_TIME:-0.1} timeout "$limit" "$build/bench/bench_cases" \
          --benchmark_filter="^case/(advection|advection_overlap|lbm_esoteric_fp32)/multi_cu(sh|da)/${total}gpu/(256|512|1024)/" \
          --benchmark_repetitions="$reps" --benchmark_out="$OUT/multi_gpu_${call}_cases_ranks.json" \
          --benchmark_out_format=json >"$OUT/multi_cases_ranks.log" 2>&1
        note "multi ranks, one process on $total GPUs: rc $? ($(elapsed))"
        summarize ranks "$OUT/multi_gpu_${call}_ranks.json" "$OUT/multi_gpu_${call}_cases_ranks.json" >"$OUT/ranks.md" 2>&1 ;;
      halo)
        timeout "$limit" "$build/bench/bench_halo" --benchmark_repetitions="$reps" --benchmark_filter="${CUSH_MULTI_FILTER_halo:-.}" \
          --benchmark_out="$OUT/multi_gpu_${call}_halo.json" --benchmark_out_format=json >"$OUT/multi_halo.log" 2>&1
        note "multi halo: rc $? ($(elapsed))" ;;
      *)
        [ -n "${rows[$part]:-}" ] || { note "multi: no part '$part'"; continue; }
        filter_of="CUSH_MULTI_FILTER_$part"
        CUSH_BENCH_MIN_TIME=${CUSH_BENCH_MIN_TIME:-0.1} timeout "$limit" "$build/bench/bench_cases" \
          --benchmark_filter="${!filter_of:-${rows[$part]}}" --benchmark_repetitions="$reps" \
          --benchmark_out="$OUT/multi_gpu_${call}_$part.json" --benchmark_out_format=json >"$OUT/multi_$part.log" 2>&1
        note "multi $part: rc $? ($(elapsed))"
        [ "$part" = temporal ] && summarize temporal "$OUT/multi_gpu_${call}_temporal.json" >"$OUT/temporal.md" 2>&1 ;;
    esac
  done
  # A part stopped by its limit leaves a file cut after the last benchmark that ended: closed there
  # (its context then says "cut": true); one where none ended is left out of the summary.
  for f in "$OUT"/multi_gpu_"$call"_*.json; do
    [ -f "$f" ] && PYTHONPATH="$PWD/tools" python3 -m cushreport close "$f" >>"$OUT/multi_close.log" 2>&1
  done
  done_files=$(for f in "$OUT"/multi_gpu_"$call"_*.json; do python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null && echo "$f"; done)
  [ -n "$done_files" ] && summarize multi_gpu $done_files >"$OUT/multi_gpu.md" 2>&1
  note "multi: $(wc -w <<<"$done_files") finished files; goals in $OUT/multi_gpu.md"
fi

[ -f "$OUT/device_ops.md" ] && cat "$OUT/device_ops.md"
[ -f "$OUT/host_ops.md" ] && tail -40 "$OUT/host_ops.md"
[ -f "$OUT/probe.md" ] && tail -45 "$OUT/probe.md"
echo
cat "$summary"
