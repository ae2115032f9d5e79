#include "core/kernel_preload.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "core/cuda_devices.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {

// Loads `kernels` on `device` once per (device, key): a list's name, or a kernel's own address.
void preload_once(int device, const void* key, const char* what, std::span<const void* const> kernels) {
  static std::mutex mutex;
  static std::set<std::pair<int, const void*>> loaded;
  std::lock_guard lock(mutex);
  if (loaded.contains({device, key})) return;
  const DeviceGuard guard(device);
  for (const void* kernel : kernels) {
    cudaFuncAttributes attributes{};
    const cudaError_t status = CUSH_CUDA_CALL(cudaFuncGetAttributes(&attributes, kernel));
    // No code for this GPU's architecture in the build: the first use of the device says so.
    if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction) {
      (void)cudaGetLastError();
      const int capability = 10 * current_device_attribute(cudaDevAttrComputeCapabilityMajor) +
                             current_device_attribute(cudaDevAttrComputeCapabilityMinor);
      throw UnsupportedDevice(device, capability, unsupported_device_message(device, capability, built_architectures()));
    }
    if (status != cudaSuccess)
      throw_cuda_error(status, "cudaFuncGetAttributes(&attributes, kernel)", __FILE__, __LINE__,
                       std::string(what) + " kernels on device " + std::to_string(device));
  }
  loaded.insert({device, key});
}

}  // namespace

void preload_kernels(int device, const char* group, std::span<const void* const> kernels) {
  preload_once(device, group, group, kernels);
}

void preload_kernel(int device, const char* what, const void* kernel) {
  preload_once(device, kernel, what, std::span<const void* const>(&kernel, 1));
}

}  // namespace cush::detail
