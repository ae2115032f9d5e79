#!/usr/bin/env bash
# Fault injection coverage, on a GPU host after a build (docs/reliability.md, "Injected faults"):
#  1. reached: the GPU test suite, without the fault walks, records every checked CUDA/NCCL call
#     site it reaches (CUSH_FAULT_SITES), with 1 real GPU and with each CUSH_VIRTUAL_COUNTS;
#  2. covered: the fault walks (test_faults_gpu and each case's CushVariantFailsCleanly test)
#     fail every checked call of their scenarios in turn, with 1 real GPU and 2 virtual GPUs
#     (CUSH_FAULT_COUNTS), and record the sites they failed;
#  3. the library's sites (libcush/, include/) that the suite reaches and no walk failed.
# Logs and site lists go to $OUT; a summary is printed last.
#
#   usage: scripts/fault_sites.sh [reached] [walks] [compare]   (default: all three)
#   CUSH_BUILD_DIR        the build (default build-gpu)
#   CUSH_VIRTUAL_COUNTS   virtual GPU counts for the reached step besides 1 real GPU (default "2")
#   CUSH_FAULT_COUNTS     device counts for the walks, 1 meaning the real GPU (default "1 2")
summary_name=fault_summary.txt
source "$(dirname "$0")/gpu_script.sh"
steps=" ${*:-reached walks compare} "
walks='Faults\.|CushVariantFailsCleanly|Misuse\.'
# CUSH_VIRTUAL_GPUS for a count: empty for the real GPU.
virtual_for() { [ "$1" = 1 ] && echo "" || echo "$1"; }

if [[ "$steps" == *" reached "* ]]; then
  rm -rf "$OUT/reached" && mkdir -p "$OUT/reached"
  for n in 1 ${CUSH_VIRTUAL_COUNTS:-2}; do
    log="$OUT/reached_$n.log"
    (cd "$build" && CUSH_VIRTUAL_GPUS=$(virtual_for "$n") CUSH_FAULT_SITES="$OUT/reached" \
       timeout 900 ctest -L gpu -E "$walks" -j 4 --timeout 300) >"$log" 2>&1
    note "reached, $n GPU(s): rc $?, $(grep -E 'tests passed' "$log") ($(elapsed))"
    grep -E '\(Failed\)|\(Timeout\)' "$log" | head -20 | tee -a "$summary"
  done
  # One list instead of a file per test process.
  cat "$OUT"/reached/sites-*.txt 2>/dev/null | sort -u >"$OUT/reached_sites.txt"
  rm -rf "$OUT/reached"
fi

if [[ "$steps" == *" walks "* ]]; then
  rm -rf "$OUT/covered" && mkdir -p "$OUT/covered"
  for n in ${CUSH_FAULT_COUNTS:-1 2}; do
    log="$OUT/walks_$n.log"
    (cd "$build" && CUSH_VIRTUAL_GPUS=$(virtual_for "$n") CUSH_FAULT_SITES="$OUT/covered" \
       timeout 900 ctest -R "$walks" --output-on-failure --timeout 600 -V) >"$log" 2>&1
    note "walks, $n GPU(s): rc $?, $(grep -E 'tests passed' "$log") ($(elapsed))"
    grep -oE '\[ faults   \] .*' "$log" | sed 's/^/   /' | tee -a "$summary"
    grep -E '\(Failed\)|\(Timeout\)' "$log" | head -20 | tee -a "$summary"
  done
  cat "$OUT"/covered/covered-*.txt 2>/dev/null | sort -u >"$OUT/covered_sites.txt"
  rm -rf "$OUT/covered"
fi

if [[ "$steps" == *" compare "* ]]; then
  library='^(libcush|include)/'
  grep -E "$library" "$OUT/reached_sites.txt" >"$OUT/reached_library.txt"
  comm -23 "$OUT/reached_library.txt" "$OUT/covered_sites.txt" >"$OUT/uncovered_library.txt"
  note "sites: the suite reaches $(wc -l <"$OUT/reached_sites.txt") ($(wc -l <"$OUT/reached_library.txt") in the library);" \
       "the walks failed $(wc -l <"$OUT/covered_sites.txt") ($(grep -cE "$library" "$OUT/covered_sites.txt") in the library);" \
       "library sites reached and never failed: $(wc -l <"$OUT/uncovered_library.txt")"
  sed 's/^/   uncovered: /' "$OUT/uncovered_library.txt" | head -60 | tee -a "$summary"
fi
echo "== summary"
cat "$summary"
