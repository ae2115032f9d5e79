#!/usr/bin/env bash
# Long fuzz runs of the planner harnesses (tests/fuzz; docs/reliability.md). CI runs each harness
# for a few seconds (ctest host.fuzz.*); this runs them for CUSH_FUZZ_RUNS inputs each and prints
# a line per harness: engine, inputs run, seconds, result.
#
#   usage: scripts/fuzz.sh [harness ...]          (default: every harness of tests/fuzz)
#   CUSH_FUZZ_RUNS    inputs per harness (default 1000000; 0: replay the saved inputs only, as CI does)
#   CUSH_FUZZ_ENGINE  libfuzzer: clang++'s libFuzzer with AddressSanitizer and UBSan, coverage-guided,
#                     built in build-fuzz (the corpora stay in build-fuzz/corpus/<harness>);
#                     random: the seeded random driver of the test build (build/);
#                     default: libfuzzer where clang++ links -fsanitize=fuzzer, else random
#   CUSH_FUZZ_SEED    the random driver's seed (default 1)
#   CUSH_FUZZ_JOBS    harnesses run at once (default: the number of cores)
# A crash or broken invariant leaves its input in build-fuzz/crash-<harness>-* (libFuzzer) or
# ./crash-<harness> (random driver): keep it in tests/fuzz/regressions/<harness>/.
set -uo pipefail
case ${1:-} in
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
root=$PWD
# A bad value is an error naming its variable (read as a number it would fail every harness).
bad() { echo "fuzz.sh: $1='$2' $3" >&2; exit 2; }
runs=${CUSH_FUZZ_RUNS:-1000000}
[[ "$runs" =~ ^[0-9]+$ ]] || bad CUSH_FUZZ_RUNS "$runs" "is not a whole number of inputs"
jobs=${CUSH_FUZZ_JOBS:-$(nproc)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || bad CUSH_FUZZ_JOBS "$jobs" "is not a positive count"
[[ "${CUSH_FUZZ_SEED:-1}" =~ ^[0-9]+$ ]] || bad CUSH_FUZZ_SEED "$CUSH_FUZZ_SEED" "is not a whole number"
known=" $(sed -n 's/^set(CUSH_FUZZ_HARNESSES \(.*\))$/\1/p' tests/fuzz/CMakeLists.txt) "
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=($known)
fi
for h in "${harnesses[@]}"; do
  [[ "$known" == *" $h "* ]] || { echo "fuzz.sh: no harness '$h' (harnesses:$known)" >&2; exit 2; }
done

engine=${CUSH_FUZZ_ENGINE:-}
case $engine in
  ""|libfuzzer|random) ;;
  *) bad CUSH_FUZZ_ENGINE "$engine" "is not an engine (libfuzzer or random; unset: libfuzzer where clang++ has it)" ;;
esac
if [ -z "$engine" ]; then
  probe=$(mktemp -d)
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
  if command -v clang++ >/dev/null && clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
    engine=libfuzzer
  else
    engine=random
  fi
  rm -rf "$probe"
fi

if [ "$engine" = libfuzzer ]; then
  build=build-fuzz
  [ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CUDA_HOST_COMPILER=g++ -DCUSH_LIBFUZZER=ON \
    -DCUSH_BUILD_BENCHMARKS=OFF -DCUSH_BUILD_EXAMPLES=OFF >/dev/null || exit 1
else
  build=build
  [ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
fi
ninja -C "$build" "${harnesses[@]/#/fuzz_}" >/dev/null || { echo "fuzz: the build failed (ninja -C $build)"; exit 1; }

# One harness: its output goes to $build/fuzz-<name>.log, its summary line to stdout.
run_one() {
  local name=$1 log="$build/fuzz-$1.log" t0=$SECONDS rc
  if [ "$engine" = libfuzzer ]; then
    mkdir -p "$build/corpus/$name"
    (cd "$build" && ./tests/fuzz/fuzz_$name -runs="$runs" -max_len=4096 -artifact_prefix="crash-$name-" \
       -print_final_stats=1 "corpus/$name" "$root/tests/fuzz/regressions/$name") >"$log" 2>&1
    rc=$?
    local done; done=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
    echo "fuzz $name (libfuzzer): ${done:-?} inputs in $((SECONDS - t0)) s, $(grep -oE 'cov: [0-9]+' "$log" | tail -1), rc $rc$([ $rc -ne 0 ] && echo ": FAILED, see $log")"
  else
    "$build/tests/fuzz/fuzz_$name" --runs "$runs" --seconds 1e9 --seed "${CUSH_FUZZ_SEED:-1}" \
      "tests/fuzz/regressions/$name" >"$log" 2>&1
    rc=$?
    echo "$(tail -1 "$log") [random driver, rc $rc$([ $rc -ne 0 ] && echo ": FAILED, see $log")]"
  fi
  return $rc
}

if [ "$runs" = 0 ]; then
  echo "fuzz: ${#harnesses[@]} harnesses, saved inputs only (CUSH_FUZZ_RUNS=0), engine $engine, $jobs at once"
else
  echo "fuzz: ${#harnesses[@]} harnesses, $runs inputs each, engine $engine, $jobs at once"
fi
failed=0
pids=()
for name in "${harnesses[@]}"; do
  run_one "$name" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || failed=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit $failed
