#include "cush/version.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/config.hpp"

namespace cush {

namespace {
std::string cuda_version(int v) {
  return v <= 0 ? "none" : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace

RuntimeVersions runtime_versions() noexcept {
  RuntimeVersions r;
  try {
    r.cush = CUSH_VERSION_STRING;
    int v = 0;
    r.cuda_runtime = cudaRuntimeGetVersion(&v) == cudaSuccess ? cuda_version(v) : "none";
    v = 0;
    r.cuda_driver = cudaDriverGetVersion(&v) == cudaSuccess ? cuda_version(v) : "none";
    (void)cudaGetLastError();
    int n = 0;
    // NCCL encodes versions >= 2.9 as major*10000 + minor*100 + patch.
    r.nccl = ncclGetVersion(&n) == ncclSuccess
                 ? std::to_string(n / 10000) + "." + std::to_string((n % 10000) / 100) + "." + std::to_string(n % 100)
                 : "none";
  } catch (...) {  // std::string allocation only
  }
  return r;
}

}  // namespace cush
