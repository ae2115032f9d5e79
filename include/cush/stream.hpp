#pragma once
/// @file stream.hpp
/// @brief Move-only owners of CUDA streams and events; each remembers its device.

#include <cuda_runtime_api.h>

namespace cush {

/// @brief An owned CUDA stream on one device (non-blocking with respect to the legacy stream).
class Stream {
 public:
  /// An empty stream that owns nothing.
  Stream() noexcept = default;
  /// Creates a stream on `device`.
  explicit Stream(int device, unsigned flags = cudaStreamNonBlocking);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] explicit operator bool() const noexcept { return stream_ != nullptr; }
  /// Blocks until all work in the stream is done; throws CudaError if any of it failed.
  void synchronize() const;

 private:
  void reset() noexcept;
  int device_ = -1;
  cudaStream_t stream_ = nullptr;
};

/// @brief An owned CUDA event on one device. Timing is off unless asked for.
class Event {
 public:
  Event() noexcept = default;
  explicit Event(int device, bool timing = false);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] explicit operator bool() const noexcept { return event_ != nullptr; }
  /// Records the event in `stream` (which must belong to this event's device).
  void record(cudaStream_t stream) const;
  /// Makes `stream` (on any device) wait for the last record of this event.
  void wait_in(cudaStream_t stream) const;
  void synchronize() const;
  /// Milliseconds from `start` to this event; both must have been created with timing.
  [[nodiscard]] float elapsed_since(const Event& start) const;

 private:
  void reset() noexcept;
  int device_ = -1;
  cudaEvent_t event_ = nullptr;
};

}  // namespace cush
