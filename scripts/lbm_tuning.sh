#!/usr/bin/env bash
# The lattice-Boltzmann kernels' tuning switches (cases/lbm/kernels.cu: CUSH_LBM_BLOCK,
# CUSH_LBM_MIN_BLOCKS*, CUSH_LBM_CELLS_16, CUSH_LBM_L2_FETCH) compared in one call on one GPU host:
# bench_cases is built once per setting (CMake's CUSH_LBM_TUNING, only kernels.cu and what links
# it rebuilt), then every build runs the same rows, the builds interleaved over two rounds so that
# drift of the machine falls on all of them. MLUPS per row and build, and each build's ratio to
# the first, are printed last and written to $OUT/lbm_tuning.md.
#
#   usage: scripts/lbm_tuning.sh [name=DEF[;DEF...] ...]
#          e.g. scripts/lbm_tuning.sh "default=" "rows=CUSH_LBM_CELLS_16=1"
#   CUSH_BUILD_DIR             the build to reconfigure (default build-tune; made if missing)
#   CUSH_TUNING_FILTER         the benchmark rows (default: esoteric FP32 and FP16S, single GPU, 256^3,
#                              and the copy row)
#   CUSH_TUNING_REPETITIONS    repetitions per row and run (default 2)
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
build=${CUSH_BUILD_DIR:-build-tune}
filter=${CUSH_TUNING_FILTER:-'^case/lbm_esoteric_(fp32|fp16s)/single/1gpu/256($|/)|^copy/lbm/'}
reps=${CUSH_TUNING_REPETITIONS:-2}
[ $# -gt 0 ] || set -- "default="
bins=$OUT/tuning_bins
mkdir -p "$bins"
names=()
for spec in "$@"; do
  name=${spec%%=*} defs=${spec#*=}
  [[ "$name" =~ ^[A-Za-z0-9_]+$ ]] || { echo "bad name in '$spec' (letters, digits, _)"; exit 2; }
  gen=(-G Ninja)
  [ -f "$build/CMakeCache.txt" ] && gen=()
  if ! { cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCUSH_BUILD_TESTS=OFF -DCUSH_BUILD_EXAMPLES=OFF \
           "-DCUSH_LBM_TUNING=$defs" && cmake --build "$build" -j "$(nproc)" --target bench_cases; } >"$OUT/tuning_build_$name.log" 2>&1; then
    echo "$name: build failed"; tail -20 "$OUT/tuning_build_$name.log"; exit 1
  fi
  cp "$build/bench/bench_cases" "$bins/bench_$name"
  names+=("$name")
  echo "built $name ($defs)"
done
for round in 1 2; do
  for name in "${names[@]}"; do
    "$bins/bench_$name" --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
      --benchmark_out="$bins/${name}_$round.json" --benchmark_out_format=json >"$bins/${name}_$round.log" 2>&1 ||
      echo "$name, round $round: rc $?"
  done
done
python3 - "$bins" "${names[@]}" <<'EOF' | tee "$OUT/lbm_tuning.md"
import json, statistics, sys, glob, os, re
bins, names = sys.argv[1], sys.argv[2:]
rows = {}
for n in names:
    for path in sorted(glob.glob(os.path.join(bins, f"{n}_[12].json"))):
        for b in json.load(open(path))["benchmarks"]:
            if b.get("run_type") != "iteration" or b.get("error_occurred"):
                continue
            row = re.sub(r"/(min_time|repeats|real_time).*$", "", b["run_name"])
            v = b.get("MLUPS", b.get("GB/s", b.get("bytes_per_second", 0) / 1e9))
            rows.setdefault(row, {}).setdefault(n, []).append(v)
print("| row | " + " | ".join(names) + " |")
print("|---|" + "---:|" * len(names))
for row, by in rows.items():
    med = {n: statistics.median(by[n]) for n in names if n in by}
    base = med.get(names[0])
    cells = []
    for n in names:
        if n not in med:
            cells.append("-")
        elif base and n != names[0]:
            cells.append(f"{med[n]:,.0f} ({med[n] / base:.3f})")
        else:
            cells.append(f"{med[n]:,.0f}")
    print(f"| {row} | " + " | ".join(cells) + " |")
print(f"\nmedians of {2 * int(os.environ.get('CUSH_TUNING_REPETITIONS', '2'))} runs per cell (MLUPS; copy rows GB/s); in brackets the ratio to {names[0]}")
EOF
