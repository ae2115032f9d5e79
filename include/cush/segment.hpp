#pragma once
/// @file segment.hpp
/// @brief The part of a plan's extent that one device holds, as a kernel needs it.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cush {

/// @brief A non-owning view of one device's segment: its device pointer, size, position in the
/// global extent, device and stream. Work enqueued on stream() is ordered after the plan's
/// earlier operations and before its later ones.
template <class T>
class Segment {
 public:
  Segment(T* data, std::size_t size, std::size_t offset, int device, std::size_t index, cudaStream_t stream) noexcept
      : data_(data), size_(size), offset_(offset), device_(device), index_(index), stream_(stream) {}

  /// Device pointer to the first element of the segment.
  [[nodiscard]] T* data() const noexcept { return data_; }
  /// Elements in the segment.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// Global index (in the host extent) of the segment's first element.
  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }
  /// CUDA ordinal of the device holding the segment.
  [[nodiscard]] int device() const noexcept { return device_; }
  /// Position of that device in the plan's device set.
  [[nodiscard]] std::size_t index() const noexcept { return index_; }
  /// The plan's stream on that device.
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  [[nodiscard]] T* begin() const noexcept { return data_; }
  [[nodiscard]] T* end() const noexcept { return data_ + size_; }

 private:
  T* data_;
  std::size_t size_;
  std::size_t offset_;
  int device_;
  std::size_t index_;
  cudaStream_t stream_;
};

}  // namespace cush
