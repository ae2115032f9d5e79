#pragma once
/// @file device_buffer.hpp
/// @brief A move-only owner of device memory on one device.

#include <cstddef>

namespace cush {

/// @brief `bytes` of memory on `device` (cudaMalloc, rounded up to whole 16-byte blocks, which
/// NCCL's kernels read whole), freed on destruction. Zero bytes owns
/// nothing and has a null data(). A device without room for it: OutOfMemory (with the device's
/// free memory), leaving no CUDA error pending; any other failure: CudaError.
class DeviceBuffer {
 public:
  DeviceBuffer() noexcept = default;
  DeviceBuffer(int device, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  void reset() noexcept;
  int device_ = -1;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace cush
