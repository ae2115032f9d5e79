#include "cush/device_buffer.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "core/format.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush {

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  const cudaError_t status = CUSH_CUDA_CALL(cudaMalloc(&data_, bytes));
  if (status == cudaErrorMemoryAllocation) {
    // Not sticky: cleared, so that no later check reports it; the device's free memory named.
    (void)cudaGetLastError();
    data_ = nullptr;
    std::size_t free_bytes = 0, total = 0;
    CUSH_CUDA_CHECK_AT(cudaMemGetInfo(&free_bytes, &total), "device " + std::to_string(device));
    throw OutOfMemory("cush::DeviceBuffer: cudaMalloc", device, bytes, free_bytes);
  }
  if (status != cudaSuccess) {
    data_ = nullptr;
    detail::throw_cuda_error(status, "cudaMalloc(&data_, bytes)", __FILE__, __LINE__,
                             "allocating " + detail::format_bytes(bytes) + " on device " + std::to_string(device));
  }
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(std::exchange(other.device_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::exchange(other.device_, -1);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (data_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(data_));  // cudaFree needs no current device
  data_ = nullptr;
  bytes_ = 0;
  device_ = -1;
}

}  // namespace cush
