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
