#!/usr/bin/env bash
# Runs a GoogleTest filter of one test binary in several processes at once, round after round, and
# counts how the processes end: for failures that show only when processes share a GPU (the FFT
# case's "Known problem" in cases/fft/README.md). Each process's output goes to
# $OUT/stress_<round>_<copy>.log (OUT default: ./stress-out); a summary is printed last.
#
#   usage: scripts/stress.sh <test binary> <gtest filter> [copies (default 4)] [rounds (default 3)]
#   The environment passes through to the processes (CUDA_VISIBLE_DEVICES, CUSH_VIRTUAL_GPUS, ...).
#   CUSH_STRESS_WRAP     a command each process runs under, e.g. "compute-sanitizer --tool memcheck"
#   CUSH_STRESS_TIMEOUT  seconds a process may take (default 600)
# Exit status: 0 when every process passed, 1 when one failed (its log's last lines are printed),
# 2 for bad arguments or a filter that runs no test.
set -uo pipefail
case ${1:-} in
  -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -ge 2 ] && [ $# -le 4 ] || { echo "stress.sh: want <test binary> <gtest filter> [copies] [rounds]" >&2; exit 2; }
bin=$1 filter=$2 copies=${3:-4} rounds=${4:-3}
[ -f "$bin" ] && [ -x "$bin" ] || { echo "stress.sh: '$bin' is not an executable file" >&2; exit 2; }
[[ "$copies" =~ ^[1-9][0-9]*$ && "$rounds" =~ ^[1-9][0-9]*$ ]] ||
  { echo "stress.sh: copies and rounds are whole numbers from 1, not '$copies' and '$rounds'" >&2; exit 2; }
OUT=${OUT:-$PWD/stress-out}
mkdir -p "$OUT"
read -r -a wrap <<<"${CUSH_STRESS_WRAP:-}"
passed=0 failed=0 skipped=0 first="" none=""
for ((r = 1; r <= rounds; ++r)); do
  pids=()
  for ((c = 1; c <= copies; ++c)); do
    timeout "${CUSH_STRESS_TIMEOUT:-600}" "${wrap[@]}" "$bin" --gtest_filter="$filter" >"$OUT/stress_${r}_$c.log" 2>&1 &
    pids+=($!)
  done
  for ((c = 1; c <= copies; ++c)); do
    log="$OUT/stress_${r}_$c.log"
    if wait "${pids[c - 1]}"; then
      # GoogleTest exits 0 when the filter matches nothing: that is a mistake, not a pass.
      grep -qE '^\[==========\] Running [1-9]' "$log" || none=$log
      passed=$((passed + 1))
      grep -qE '^\[  SKIPPED \] [1-9]' "$log" && skipped=$((skipped + 1))
    else
      failed=$((failed + 1))
      [ -n "$first" ] || first=$log
    fi
  done
  [ -z "$none" ] || { echo "stress.sh: '$bin --gtest_filter=$filter' ran no test (see $none)" >&2; exit 2; }
  echo "round $r of $rounds: $passed passed, $failed failed so far"
done
echo "stress: $(basename "$bin") --gtest_filter=$filter, $copies at once, $rounds rounds:" \
  "$passed passed ($skipped with skipped tests), $failed failed"
if [ -n "$first" ]; then
  echo "first failure: $first; its last lines:"
  tail -15 "$first"
  exit 1
fi
exit 0
