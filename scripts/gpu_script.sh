# Sourced by the scripts that run on a GPU host (gpu_check.sh, virtual_gpus.sh, fault_sites.sh),
# after setting `summary_name`: runs from the source tree with NCCL's NVLink multicast off (the
# GPU host's rule), logs under $OUT (default gpu-out), the build in $build (CUSH_BUILD_DIR, default
# build-gpu), a fresh $OUT/$summary_name that note() prints to and appends to, and elapsed() for
# the seconds since.
#
# Runs longer than one call on the GPU host: with CUSH_DETACH=1 the script starts itself again in a
# process session of its own (setsid) and returns at once; that run outlives the call while the
# machine is held. Its OUT must then lie outside the call's $OUT, which every call empties (e.g.
# OUT=/tmp/vg). `<script> status`, with the same OUT, says whether it still runs and prints its
# summary so far.
set -uo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
build=${CUSH_BUILD_DIR:-build-gpu}
summary="$OUT/$summary_name"
if [ "${1:-}" = status ]; then
  pid=$(cat "$summary.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "running (pid $pid)"; else echo "not running"; fi
  cat "$summary" 2>/dev/null
  exit 0
fi
if [ -n "${CUSH_DETACH:-}" ]; then
  CUSH_DETACH='' OUT="$OUT" setsid nohup bash "$self" "$@" >"$summary.log" 2>&1 </dev/null &
  echo $! >"$summary.pid"
  echo "$(basename "$self") $*: started in the background (pid $!, output in $summary.log);" \
    "'OUT=$OUT $(basename "$self") status' prints its progress"
  exit 0
fi
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 ))s; }

# The tests of build tree $1 in three groups, the way they can share GPUs (output to stdout;
# ctest's full logs to $2_shared_full.log and $2_alone_full.log; the per-process memory check's
# output to $2_memory_check.log), more ctest options after $2 (e.g. -L gpu; a name regex goes in
# CUSH_SUITE_TESTS, which ctest_group applies to each group). Sets
# `memory` and `alone` for the caller's summary:
#  - the tests that compare free GPU memory before and after must have the GPUs to themselves,
#    unless the driver counts each process's memory (test_process_memory_gpu): then the leak
#    checks count their own process's (CUSH_TEST_MEMORY=process) and only the tests that reason
#    about the GPUs' real free memory (PlanGpu) run alone;
#  - the fault walks (thousands of short runs, each waiting for its GPUs) side by side with the
#    other tests ran 25-80 times slower than alone on 4 x H200 (the GPUs time-slice between the
#    processes' contexts): they run first, among themselves (CUSH_SUITE_WALK_JOBS, default 6);
#  - the tests across MPI processes (`.mpi.` in their names) side by side with the others ran 4-11
#    times slower than alone on 4 x H200 (a 4-rank advection test took 20 s alone and outran its
#    180 s limit shared; likely cause, not measured: each NCCL step waits until every rank's
#    kernel runs, and the GPUs time-slice between many processes), so they run alone too;
#  - then the rest (CUSH_SUITE_JOBS, default 12), then the ones alone, one at a time.
# Each test may take CUSH_TEST_TIMEOUT seconds (default 400). The caller sets CUDA_VISIBLE_DEVICES
# and CUSH_VIRTUAL_GPUS as the run needs.
grouped_ctest() {
  local tree=$1 base=$2 heavy='FailsCleanly|Faults\.|NcclFailure'
  shift 2
  alone='Faults|Misuse|FailsCleanly|PlanGpu|ProcessMemory|TransposeScratch|\.mpi\.' memory=device
  if [ "${CUSH_TEST_MEMORY:-process}" = process ] &&
     CUSH_TEST_MEMORY=process "$tree/tests/test_process_memory_gpu" \
       --gtest_filter=ProcessMemory.CountsThisProcessOnly >"${base}_memory_check.log" 2>&1; then
    alone='PlanGpu|\.mpi\.' memory=process
  fi
  (cd "$tree" && export CUSH_TEST_MEMORY=$memory &&
    ctest_group "${CUSH_SUITE_WALK_JOBS:-6}" "$heavy" "$alone" "$@"
    cp Testing/Temporary/LastTest.log "${base}_shared_full.log" 2>/dev/null
    ctest_group "${CUSH_SUITE_JOBS:-12}" "" "$heavy|$alone" "$@"
    cat Testing/Temporary/LastTest.log >>"${base}_shared_full.log" 2>/dev/null
    ctest_group 1 "$alone" "" "$@"
    cp Testing/Temporary/LastTest.log "${base}_alone_full.log" 2>/dev/null)
}

# One of grouped_ctest's groups, in the build tree (the current directory): $1 tests side by side,
# the tests whose names match $2 (empty: all) and not $3 (empty: none), more ctest options after
# them (e.g. -L gpu). With CUSH_SUITE_TESTS (a regex) only the tests whose names match it too: ctest
# neither intersects two -R nor -R with -I, so the group's tests are then picked by name here and
# run by number. A group with no test runs nothing (ctest -I with no number would run them all).
ctest_group() {
  local jobs=$1 include=$2 exclude=$3 select=()
  shift 3
  rm -f Testing/Temporary/LastTest.log
  if [ -z "${CUSH_SUITE_TESTS:-}" ]; then
    [ -n "$include" ] && select+=(-R "$include")
    [ -n "$exclude" ] && select+=(-E "$exclude")
    select=("$@" "${select[@]}")
  else
    local numbers
    numbers=$(ctest -N "$@" -R "$CUSH_SUITE_TESTS" | sed -nE 's/^ *Test +#([0-9]+): (.*)$/\1 \2/p' |
      INC=$include EXC=$exclude awk '(ENVIRON["INC"] == "" || $2 ~ ENVIRON["INC"]) &&
                                      (ENVIRON["EXC"] == "" || $2 !~ ENVIRON["EXC"]) {print $1}' | paste -sd, -)
    [ -n "$numbers" ] || return 0
    select=(-I "0,0,0,$numbers")
  fi
  ctest "${select[@]}" -j "$jobs" --timeout "${CUSH_TEST_TIMEOUT:-400}" --output-on-failure
}
