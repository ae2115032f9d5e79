#include "cush/device_buffer.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

#include "core/format.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush {

namespace {
// NCCL's kernels read user data in whole 16-byte blocks, past the end of a buffer whose size is
// not a multiple of 16 (its maintainers say so in NCCL issue 265): harmless on the hardware
// (cudaMalloc aligns to 256 bytes), but compute-sanitizer's memcheck reports it and stops the
// kernel. Allocating whole blocks makes those reads land inside the allocation.
constexpr std::size_t kBlock = 16;
std::size_t whole_blocks(std::size_t bytes) {
  return bytes > SIZE_MAX - kBlock ? bytes : (bytes + kBlock - 1) / kBlock * kBlock;  // too much either way
}
}  // namespace

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  const cudaError_t status = CUSH_CUDA_CALL(cudaMalloc(&data_, whole_blocks(bytes)));
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
    detail::throw_cuda_error(status, "cudaMalloc(&data_, whole_blocks(bytes))", __FILE__, __LINE__,
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
