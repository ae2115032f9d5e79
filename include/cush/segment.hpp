#pragma once
/// @file segment.hpp
/// @brief The part of a plan's extent that one device holds, as a kernel needs it.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/host_device.hpp"

namespace cush {

/// @brief A non-owning view of one device's segment of a Plan: its device pointer, size,
/// position in the global extent, device, position in the device set, and stream. Work enqueued
/// on stream() is ordered after the plan's earlier operations and before its later ones.
///
/// A view is cheap to copy and may be passed to a kernel by value: data(), size(), bytes(),
/// empty(), offset(), begin() and end() work in device code.
template <class T>
class Segment {
 public:
  Segment(T* data, std::size_t size, std::size_t offset, int device, std::size_t pos, cudaStream_t stream) noexcept
      : data_(data), size_(size), offset_(offset), device_(device), pos_(pos), stream_(stream) {}

  /// Device pointer to the first element of the segment.
  [[nodiscard]] CUSH_HOST_DEVICE T* data() const noexcept { return data_; }
  /// Elements in the segment.
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t size() const noexcept { return size_; }
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] CUSH_HOST_DEVICE bool empty() const noexcept { return size_ == 0; }
  /// Global index (in the host extent) of the segment's first element.
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t offset() const noexcept { return offset_; }
  [[nodiscard]] CUSH_HOST_DEVICE T* begin() const noexcept { return data_; }
  [[nodiscard]] CUSH_HOST_DEVICE T* end() const noexcept { return data_ + size_; }
  /// CUDA ordinal of the device holding the segment.
  [[nodiscard]] int device() const noexcept { return device_; }
  /// Position of that device in the plan's device set.
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  /// The plan's stream on that device.
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  T* data_;
  std::size_t size_;
  std::size_t offset_;
  int device_;
  std::size_t pos_;
  cudaStream_t stream_;
};

}  // namespace cush
