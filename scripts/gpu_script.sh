# Sourced by the scripts that run on a GPU host (gpu_check.sh, virtual_gpus.sh, fault_sites.sh),
# after setting `summary_name`: runs from the source tree with NCCL's NVLink multicast off (the
# GPU host's rule), logs under $OUT (default gpu-out), the build in $build (CUSH_BUILD_DIR, default
# build-gpu), a fresh $OUT/$summary_name that note() prints to and appends to, and elapsed() for
# the seconds since.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
build=${CUSH_BUILD_DIR:-build-gpu}
summary="$OUT/$summary_name"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 ))s; }
