#include "core/kernel_preload.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush::detail {

void preload_kernels(int device, const char* group, std::span<const void* const> kernels) {
  static std::mutex mutex;
  static std::set<std::pair<int, const char*>> loaded;
  std::lock_guard lock(mutex);
  if (loaded.contains({device, group})) return;
  const DeviceGuard guard(device);
  for (const void* kernel : kernels) {
    cudaFuncAttributes attributes{};
    CUSH_CUDA_CHECK_AT(cudaFuncGetAttributes(&attributes, kernel),
                       std::string(group) + " kernels on device " + std::to_string(device));
  }
  loaded.insert({device, group});
}

}  // namespace cush::detail
