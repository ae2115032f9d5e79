#!/usr/bin/env bash
# The same benchmark rows on two builds in one call, on one machine: the code before a change (a
# source tree at $1, e.g. `git archive <commit> CMakeLists.txt cmake libcush include cases bench`
# unpacked into an ignored folder and carried to the GPU host) and this tree. The runs are
# interleaved before, after, before, after (each with repetitions) so that drift of the machine
# falls on both; the comparison (cushreport compare) is printed and written to $OUT.
#
#   usage: scripts/perf_before_after.sh <before-source-dir> [benchmark filter]
#   CUSH_BUILD_DIR      this tree's build (default build-gpu; built if missing)
#   CUSH_BENCH_BINARY   the benchmark binary in <build>/bench (default bench_cases)
#   CUSH_BEFORE_AFTER_REPETITIONS  repetitions per run (default 3)
set -uo pipefail
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in
  -h|--help) usage; exit 0 ;;
  "") echo "perf_before_after.sh: the source tree of the build before is missing" >&2; usage >&2; exit 2 ;;
esac
[ -d "$1" ] || { echo "perf_before_after.sh: '$1' is not a folder" >&2; exit 2; }
[ $# -le 2 ] || { echo "perf_before_after.sh: two arguments at most" >&2; usage >&2; exit 2; }
before_src=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
filter=${2:-'^case/(advection|advection_overlap)/[a-z_]+/1gpu/1024($|/)|^case/matmul/[a-z_]+/1gpu/20($|/)'}
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
after_build=${CUSH_BUILD_DIR:-build-gpu}
binary=${CUSH_BENCH_BINARY:-bench_cases}
reps=${CUSH_BEFORE_AFTER_REPETITIONS:-3}
build() {  # source-dir build-dir
  local gen=(-G Ninja)
  [ -f "$2/CMakeCache.txt" ] && gen=()
  cmake -S "$1" -B "$2" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCUSH_BUILD_TESTS=OFF -DCUSH_BUILD_EXAMPLES=OFF \
    >"$OUT/before_after_build.log" 2>&1 && cmake --build "$2" -j "$(nproc)" --target "$binary" >>"$OUT/before_after_build.log" 2>&1
}
build "$before_src" "$before_src/build-gpu" || { echo "before: build failed"; tail -20 "$OUT/before_after_build.log"; exit 1; }
[ -x "$after_build/bench/$binary" ] || build . "$after_build" || { echo "after: build failed"; exit 1; }
for round in 1 2; do
  for side in before after; do
    dir=$before_src/build-gpu; [ "$side" = after ] && dir=$after_build
    "$dir/bench/$binary" --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
      --benchmark_out="$OUT/${side}_$round.json" --benchmark_out_format=json >"$OUT/${side}_$round.log" 2>&1 ||
      echo "$side run $round: rc $?"
  done
done
PYTHONPATH=tools python3 -m cushreport compare --before "$OUT"/before_[12].json --after "$OUT"/after_[12].json |
  tee "$OUT/before_after.md"
