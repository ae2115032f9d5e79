#!/usr/bin/env bash
# The whole GPU suite on virtual GPUs (CUSH_VIRTUAL_GPUS: several logical GPUs on one physical
# GPU), and compute-sanitizer over it. Run on a GPU host after a build (scripts/build.sh, or
# scripts/gpu_check.sh's build step). Logs go to $OUT; a summary is printed last.
#
#   usage: scripts/virtual_gpus.sh [suite] [sanitize]      (default: suite)
#          scripts/virtual_gpus.sh status    a run started with CUSH_DETACH=1 (gpu_script.sh)
#   suite     ctest -L gpu with CUSH_VIRTUAL_GPUS=N for each N of CUSH_VIRTUAL_COUNTS (default
#             "2 3 4 8"): passed / skipped / failed per N, why tests were skipped, and how many
#             other processes held the GPU when N began (they upset the fault walks' free memory).
#             Grouped as on physical GPUs (gpu_script.sh, grouped_ctest): the fault walks first
#             (CUSH_SUITE_WALK_JOBS, default 2, at a time), then the rest (CUSH_SUITE_JOBS, default
#             4), then the tests that compare free GPU memory one at a time; CUSH_TEST_TIMEOUT
#             seconds a test (default 600)
#   sanitize  every GPU test binary and example under each tool of CUSH_SANITIZE_TOOLS (default
#             "memcheck racecheck synccheck"; memcheck with the leak check) for each N of
#             CUSH_SANITIZE_COUNTS (default "2 4"; "physical": the GPUs CUDA_VISIBLE_DEVICES shows,
#             without virtual GPUs): the tool's error count per binary
#   CUSH_SUITE_TESTS         regex: only the GPU tests whose ctest names match, grouped as the
#                            whole suite (default: all)
#   CUSH_VIRTUAL_SIDE_BY_SIDE=1  the counts at once, each on a GPU of its own (the k-th count on the
#                            k-th visible GPU), each in a copy of the build tree
#   CUSH_HEAP_CHECK=1        the suite with glibc's heap checks (libc_malloc_debug, check=3, freed
#                            memory overwritten): a write into freed host memory (a copy still
#                            running after an exception freed its buffer) aborts the test
#   CUSH_BUILD_DIR           the build (default build-gpu)
#   CUSH_SANITIZE_TIMEOUT    seconds for one binary under one tool (default 300)
#   CUSH_SANITIZE_JOBS       binaries run side by side under a tool (default 1)
#   CUSH_SANITIZE_GPU_LISTS  with CUSH_SANITIZE_COUNTS=physical: GPU lists (e.g. "0,1 2,3"), the
#                            processes given to them in turn (each sees its list as
#                            CUDA_VISIBLE_DEVICES): every pair of a 4-GPU host at once
#   CUSH_SANITIZE_SHARDS     each test binary split into this many GoogleTest shards, run as
#                            separate processes (default 1)
#   CUSH_SANITIZE_FILTER     gtest filter for the test binaries (default: all tests)
#   CUSH_SANITIZE_ONLY       regex: only the binaries and examples whose names match (default: all)
#   CUSH_SANITIZE_PICK       "name[shard/shards] ..." as the summary prints them (e.g.
#                            "test_case_fft_gpu[0/8]"; an example by its name): only those run,
#                            to finish what an earlier run left (shards: CUSH_SANITIZE_SHARDS)
#   CUSH_SANITIZE_ALONE      "Suite.Test ...": each such test runs in a process of its own (named
#                            "binary(Suite.Test)" in the summary and in CUSH_SANITIZE_PICK), left
#                            out of its binary's shards: the long tests, which else hold a shard
#                            past its limit and leave the tests after them unrun
#   CUSH_SANITIZE_EACH       regex: the test binaries whose every test (CUSH_SANITIZE_FILTER's)
#                            runs in a process of its own, named as CUSH_SANITIZE_ALONE's, instead
#                            of shards: a test that finishes counts even if others of its binary
#                            do not, and the summary says how long each took
#   CUSH_SANITIZE_ARGS       more compute-sanitizer options, split at spaces (e.g. "--kernel-name
#                            kns=5cases --kernel-name kns=4cush": only the kernels of namespaces
#                            cases and cush, not a library's such as cuFFT's)
#   CUSH_SANITIZE_LAUNCHES   "SKIP[:COUNT]": the tool checks only kernel launches SKIP to SKIP+COUNT-1
#                            (0-based, in launch order; no COUNT: to the end), the others run
#                            unchecked (compute-sanitizer --launch-skip/--launch-count); the result
#                            names the window. Windows run as separate invocations (their own OUT)
#                            together check a long test whose launches come in a fixed order
#                            (docs/reliability.md, "Racecheck in windows")
#   CUSH_SANITIZE_SKIP       "tool:binary ..." left out (e.g. racecheck:test_case_matmul_gpu, whose
#                            cuBLAS kernels take minutes under racecheck); each is named in the summary
summary_name=virtual_summary.txt
source "$(dirname "$0")/gpu_script.sh"
steps=" ${*:-suite} "

# How many processes hold a GPU context now on the GPUs CUDA_VISIBLE_DEVICES names (all GPUs if
# unset; 0 without nvidia-smi).
gpu_processes() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
  local only=()
  [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && only=(-i "$CUDA_VISIBLE_DEVICES")
  nvidia-smi "${only[@]}" --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c '[0-9]'
}

# The suite with CUSH_VIRTUAL_GPUS=$1 on the GPUs CUDA_VISIBLE_DEVICES shows, in build tree $2;
# its passed / skipped / failed counts and skip reasons to the summary (in one piece, so that
# counts run side by side do not interleave their lines).
suite_count() {
  local n=$1 tree=$2 log="$OUT/ctest_virtual_$1.log" others total failed skipped passed t1 lines results alone memory
  others=$(gpu_processes)
  t1=$(date +%s)
  local preload=${LD_PRELOAD:-} tunables=${GLIBC_TUNABLES:-}
  [ -n "${CUSH_HEAP_CHECK:-}" ] && preload=libc_malloc_debug.so.0 tunables=glibc.malloc.check=3:glibc.malloc.perturb=165
  # As on physical GPUs (gpu_script.sh, grouped_ctest): the fault walks first among themselves,
  # then the rest, then the tests that compare the GPU's free memory one at a time, also where
  # CUSH_SUITE_TESTS picks some tests. All at once (ctest -j 4), the leak checks saw the other
  # tests' allocations on the same GPU (TransposeScratch failed so on 3, 4 and 8 virtual GPUs).
  LD_PRELOAD=$preload GLIBC_TUNABLES=$tunables CUSH_VIRTUAL_GPUS=$n CUSH_SUITE_WALK_JOBS=${CUSH_SUITE_WALK_JOBS:-2} \
    CUSH_SUITE_JOBS=${CUSH_SUITE_JOBS:-4} CUSH_TEST_TIMEOUT=${CUSH_TEST_TIMEOUT:-600} \
    grouped_ctest "$tree" "$OUT/ctest_virtual_$n" -L gpu >"$log" 2>&1
  # ctest's result lines: "  12/345 Test  #67: gpu.Foo.Bar ....   Passed    1.23 sec"
  results=$(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$log")
  total=$(grep -c . <<<"$results")
  passed=$(grep -cE '\.  +Passed +[0-9.]+ sec' <<<"$results")
  skipped=$(grep -c '\*\*\*Skipped' <<<"$results")
  failed=$(grep -cE '\*\*\*(Failed|Timeout|Exception|Not Run)' <<<"$results")
  lines="CUSH_VIRTUAL_GPUS=$n${CUSH_HEAP_CHECK:+ (heap checks)}${CUDA_VISIBLE_DEVICES:+ on GPU $CUDA_VISIBLE_DEVICES}: $total GPU tests: $passed passed, $skipped skipped, $failed failed ($(( $(date +%s) - t1 ))s, at $(elapsed); leak checks count memory per $memory; alone: $alone)"
  lines+=$'\n'"$(grep -E '\*\*\*(Failed|Timeout|Exception|Not Run)' <<<"$results" | sed 's/^/     /')"
  # The fault walks compare a GPU's free memory before and after, which other processes change.
  [ "$others" -gt 0 ] && lines+=$'\n'"     other processes on the GPUs when this count began: $others (fault walks may fail beside them: docs/reliability.md, \"Fault walks need the GPU to themselves\")"
  # Why tests skipped: GoogleTest wrote the reason on the line after "Skipped".
  lines+=$'\n'"$(cat "$OUT/ctest_virtual_${n}_shared_full.log" "$OUT/ctest_virtual_${n}_alone_full.log" 2>/dev/null |
    grep -A1 ": Skipped$" | grep -v -e ": Skipped$" -e "^--$" | sort | uniq -c | sed 's/^/     skip reason: /')"
  note "$(grep -v '^$' <<<"$lines")"
}

if [[ "$steps" == *" suite "* ]]; then
  if [ -n "${CUSH_VIRTUAL_SIDE_BY_SIDE:-}" ]; then
    # Each count on a GPU of its own (the k-th count on the k-th visible GPU, cyclically), in a
    # copy of the build tree (each ctest writes its Testing/ folder), all at once. One after
    # another on one H200, 2 and 3 virtual GPUs alone took 433 s and 735 s (docs/reliability.md);
    # side by side the counts take about as long as the longest (on 2 x H200, the 95 tests of
    # CUSH_SUITE_TESTS='Wave|Advection|Cycle|Fft|Transpose|Lbm': 2 and 3 at once 61 and 64 s).
    read -r -a visible < <(nvidia-smi --query-gpu=index --format=csv,noheader | tr '\n' ' ')
    [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && IFS=, read -r -a visible <<<"$CUDA_VISIBLE_DEVICES"
    k=0
    for n in ${CUSH_VIRTUAL_COUNTS:-2 3 4 8}; do
      tree="$build-virtual-$n"
      rm -rf "$tree" && cp -a "$build" "$tree"
      (CUDA_VISIBLE_DEVICES=${visible[$((k % ${#visible[@]}))]} suite_count "$n" "$tree"; rm -rf "$tree") &
      k=$((k + 1))
    done
    wait
  else
    for n in ${CUSH_VIRTUAL_COUNTS:-2 3 4 8}; do suite_count "$n" "$build"; done
  fi
fi

# How a count of CUSH_SANITIZE_COUNTS reads in the summary.
label() {
  if [ "$1" != physical ]; then echo "CUSH_VIRTUAL_GPUS=$1"
  elif [ -n "${CUSH_SANITIZE_GPU_LISTS:-}" ]; then echo "GPUs $(echo $CUSH_SANITIZE_GPU_LISTS | sed 's/ / and /g'), in turn"
  else echo "GPUs ${CUDA_VISIBLE_DEVICES:-(all)}"; fi
}
read -r -a gpu_lists <<<"${CUSH_SANITIZE_GPU_LISTS:-}"
launched=0  # processes started: the next one takes GPU list launched % ${#gpu_lists[@]}

# The gtest filter of the test binaries' shards: CUSH_SANITIZE_FILTER less the tests run alone.
shard_filter() {
  local filter=${CUSH_SANITIZE_FILTER:-*} alone
  alone=$(echo ${CUSH_SANITIZE_ALONE:-} | tr ' ' ':')
  [ -z "$alone" ] && { echo "$filter"; return; }
  if [[ "$filter" == *-* ]]; then echo "$filter:$alone"; else echo "$filter-$alone"; fi
}

# The tests of test binary $1 that gtest filter $2 selects, one "Suite.Test" per line.
list_tests() {
  "$1" --gtest_list_tests --gtest_filter="$2" 2>/dev/null | awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }'
}

# One binary under one tool: its log in $2, its result ("name N;") in $2.result. $5/$6: the
# GoogleTest shard it runs, of how many (0 1: all its tests). $7: a test run alone (its name),
# instead of the binary's shard. $8: the GPU list it sees (CUSH_SANITIZE_GPU_LISTS), if any.
sanitize_one() {
  local tool=$1 log=$2 n=$3 entry=$4 shard=$5 shards=$6 test=${7:-} gpus=${8:-} bin args=() extra=() more=() rc count name result start
  start=$(date +%s)
  bin=${entry%%:*}
  name=$(basename "$bin")
  [ "$shards" -gt 1 ] && name+="[$shard/$shards]"
  if [ "$bin" != "$entry" ]; then IFS=, read -r -a args <<<"${entry#*:}"; fi
  [[ "$bin" == */test_*_gpu ]] && args=(--gtest_filter="$(shard_filter)")
  if [ -n "$test" ]; then
    name="$(basename "$bin")($test)"
    args=(--gtest_filter="$test")
  fi
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  read -r -a more <<<"${CUSH_SANITIZE_ARGS:-}"
  extra+=("${more[@]}")
  if [ -n "${CUSH_SANITIZE_LAUNCHES:-}" ]; then
    local skip=${CUSH_SANITIZE_LAUNCHES%%:*} count_limit=""
    [[ "$CUSH_SANITIZE_LAUNCHES" == *:* ]] && count_limit=${CUSH_SANITIZE_LAUNCHES#*:}
    extra+=(--launch-skip "$skip")
    [ -n "$count_limit" ] && extra+=(--launch-count "$count_limit")
    name+="{launches $skip..$([ -n "$count_limit" ] && echo $((skip + count_limit - 1)) || echo end)}"
  fi
  echo "=== $name ${args[*]}${CUSH_SANITIZE_ARGS:+ (compute-sanitizer $CUSH_SANITIZE_ARGS)}${gpus:+ on GPUs $gpus}" >"$log"
  local virtual=(CUSH_VIRTUAL_GPUS="$n")
  [ "$n" = physical ] && virtual=()  # the GPUs CUDA_VISIBLE_DEVICES shows, each a device of its own
  [ -n "$gpus" ] && virtual+=(CUDA_VISIBLE_DEVICES="$gpus")
  env "${virtual[@]}" GTEST_SHARD_INDEX=$shard GTEST_TOTAL_SHARDS=$shards CUSH_TEST_TOOL=$tool timeout "${CUSH_SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" "${extra[@]}" \
    --report-api-errors no --error-exitcode 99 "$bin" "${args[@]}" >>"$log" 2>&1
  rc=$?
  count=$(tail -n 40 "$log" | grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+' | tail -1 | grep -oE '[0-9]+$')
  # A shard whose tests make no CUDA call (none, or host-side checks only): the tool exits 255.
  if [ $rc = 255 ] && grep -q 'terminated before first instrumented API call' "$log" && grep -q '^\[  PASSED  \]' "$log" &&
     ! grep -q '^\[  FAILED  \]' "$log"; then
    rc=0
    count="0 (no CUDA call)"
  fi
  case $rc in
    124) result="$name TIMEOUT;" ;;
    99) result="$name ${count:-?} ERRORS;" ;;
    0) result="$name ${count:-0};" ;;
    *) result="$name ${count:-0} (rc $rc: tests failed);" ;;
  esac
  echo "$result" >"$log.result"
  # progress, if the run is cut short: the process's own seconds, then the run's
  echo "   $tool, $(label "$n"): $result ($(( $(date +%s) - start ))s, at $(elapsed))" >>"$summary"
}

if [[ "$steps" == *" sanitize "* ]]; then
  if [[ -n "${CUSH_SANITIZE_LAUNCHES:-}" && ! "$CUSH_SANITIZE_LAUNCHES" =~ ^[0-9]+(:[1-9][0-9]*)?$ ]]; then
    note "CUSH_SANITIZE_LAUNCHES must be SKIP or SKIP:COUNT (integers, COUNT > 0), not '$CUSH_SANITIZE_LAUNCHES'"
    exit 2
  fi
  binaries=$(find "$build/tests" "$build/cases" -name "test_*_gpu" -type f -executable | sort)
  examples="$build/examples/cush_device_ops:100003 $build/examples/cush_field_step:131,5 $build/examples/cush_field_components:1003,5 $build/examples/cush_pipeline:16,5"
  jobs=${CUSH_SANITIZE_JOBS:-1}  # binaries side by side on the GPUs (the tests leave free-memory checks to the tool)
  for n in ${CUSH_SANITIZE_COUNTS:-2 4}; do
    for tool in ${CUSH_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
      dir="$OUT/sanitize_${tool}_$n"
      rm -rf "$dir" && mkdir -p "$dir"
      line="$tool, $(label "$n"):"
      virtual_example="$build/examples/cush_virtual_gpus:$n"
      [ "$n" = physical ] && virtual_example=""
      for entry in $binaries $examples $virtual_example; do
        name=$(basename "${entry%%:*}")
        [[ "$name" =~ ${CUSH_SANITIZE_ONLY:-.} ]] || continue
        if [[ " ${CUSH_SANITIZE_SKIP:-} " == *" $tool:$name "* ]]; then
          line+=" $name left out;"
          continue
        fi
        shards=1
        [[ "$name" == test_*_gpu ]] && shards=${CUSH_SANITIZE_SHARDS:-1}
        # The tests of this binary run alone, each in its own process, beside its shards.
        runs=()  # the long tests first
        if [[ "$name" == test_*_gpu ]]; then
          for test in ${CUSH_SANITIZE_ALONE:-}; do
            [ -n "$(list_tests "${entry%%:*}" "$test")" ] && runs+=("$test")
          done
        fi
        if [[ "$name" == test_*_gpu && -n "${CUSH_SANITIZE_EACH:-}" && "$name" =~ $CUSH_SANITIZE_EACH ]]; then
          while read -r test; do runs+=("$test"); done < <(list_tests "${entry%%:*}" "$(shard_filter)")
          shards=0
        fi
        for ((shard = 0; shard < shards; ++shard)); do runs+=("$shard"); done
        for run in "${runs[@]}"; do
          shard=$run test=""
          [[ "$run" =~ ^[0-9]+$ ]] || { shard=0 test=$run; }
          if [ -n "${CUSH_SANITIZE_PICK:-}" ]; then
            picked="$name"; [ "$shards" -gt 1 ] && picked+="[$shard/$shards]"
            [ -n "$test" ] && picked="$name($test)"
            [[ " $CUSH_SANITIZE_PICK " == *" $picked "* ]] || continue
          fi
          while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
          gpus=""
          if [ "$n" = physical ] && [ ${#gpu_lists[@]} -gt 0 ]; then
            gpus=${gpu_lists[$((launched % ${#gpu_lists[@]}))]}
            launched=$((launched + 1))
          fi
          if [ -n "$test" ]; then
            sanitize_one "$tool" "$dir/$name.${test//\//_}.log" "$n" "$entry" 0 1 "$test" "$gpus" &
          else
            sanitize_one "$tool" "$dir/$name.$shard.log" "$n" "$entry" "$shard" "$shards" "" "$gpus" &
          fi
        done
      done
      wait
      for result in "$dir"/*.log.result; do [ -e "$result" ] && line+=" $(cat "$result")"; done
      cat "$dir"/*.log >"$OUT/sanitize_${tool}_$n.log" 2>/dev/null
      rm -rf "$dir"
      note "$line ($(elapsed))"
    done
  done
fi

echo
cat "$summary"
