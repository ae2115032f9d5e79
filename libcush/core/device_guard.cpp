#include "cush/device_guard.hpp"

#include <cuda_runtime_api.h>

#include "cush/error.hpp"

namespace cush {

DeviceGuard::DeviceGuard(int device) : previous_(-1), changed_(false) {
  CUSH_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) {
    CUSH_CUDA_CHECK_AT(cudaSetDevice(device), "device " + std::to_string(device));
    changed_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_) CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous_));
}

}  // namespace cush
