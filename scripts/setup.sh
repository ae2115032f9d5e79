#!/usr/bin/env bash
# Installs what cush needs to build and test, where it is missing. Safe to run again.
# On machines without a package manager we can use (the GPU host), it only checks.
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_file() { [ -e "$1" ] || missing+=("$2"); }

need_cmd cmake cmake
need_cmd g++ g++
need_cmd ninja ninja-build
need_cmd pmccabe pmccabe
need_cmd python3 python3
need_file /usr/include/gtest/gtest.h libgtest-dev
need_file /usr/include/benchmark/benchmark.h libbenchmark-dev
# scripts/fuzz.sh's libFuzzer build (clang++ with libFuzzer, AddressSanitizer and UBSan); CI builds it.
need_cmd clang++ clang
compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null || missing+=(libclang-rt-dev)
# MPI (optional for cush; CI runs the process-group tests under mpiexec): Open MPI.
need_cmd mpiexec openmpi-bin
need_cmd mpicxx libopenmpi-dev

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
      { $sudo apt-get update >/dev/null 2>&1 && $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; } ||
      echo "setup: could not install ${missing[*]}; the build or some tests may fail or skip" >&2
  else
    echo "setup: no apt-get here; missing: ${missing[*]} (tests that need them skip with a reason)" >&2
  fi
fi

# The report (tools/cushreport): NumPy and SciPy for its statistics, matplotlib for its charts.
# pip first; where pip refuses (an externally managed Python), the distribution's python3-* packages.
python_missing() { for m in numpy scipy matplotlib; do python3 -c "import $m" >/dev/null 2>&1 || echo "$m"; done; }
if command -v python3 >/dev/null 2>&1; then
  mapfile -t py < <(python_missing)
  if [ ${#py[@]} -gt 0 ]; then
    echo "setup: installing ${py[*]} for the report"
    python3 -m pip install --quiet "${py[@]}" >/dev/null 2>&1 ||
      { command -v apt-get >/dev/null 2>&1 &&
        $sudo apt-get install -y --no-install-recommends "${py[@]/#/python3-}" >/dev/null 2>&1; } || true
    mapfile -t py < <(python_missing)
    if [ ${#py[@]} -gt 0 ]; then
      echo "setup: could not install ${py[*]} (tried pip and apt-get); the report cannot run and its tests (host.tools.*) skip" >&2
    fi
  fi
fi

# The CUDA toolkit cannot be installed by this script; say so plainly if it is absent.
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA toolkit (nvcc) is missing; install CUDA 12 or newer to /usr/local/cuda" >&2
  exit 1
fi
echo "setup: ok"
