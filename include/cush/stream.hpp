#pragma once
/// @file stream.hpp
/// @brief Move-only owners of CUDA streams and events, each remembering its device; a
/// non-owning view of a stream; and which cush calls block the host.
///
/// **What blocks.** cush enqueues work and returns: scatter, gather, broadcast, the GPU<->GPU
/// operations, exchanges and Plan::after never wait for the GPU. These calls block the host
/// until work on the GPU is done:
/// - `Plan::wait()`, `Field::wait()`, `Stream::synchronize()`, `StreamRef::synchronize()`,
///   `Event::synchronize()`: by design;
/// - destroying (or move-assigning over) a Plan or a Field: it waits for the work on its streams,
///   caller's streams included, before freeing its buffers;
/// - destroying a `Stream`: it waits for the stream's work first;
/// - `Field::set_halo_transport()` with a different transport: it waits like `wait()`;
/// - `set_host_transfer_options()` with a new chunk size or slot count, at the next staged move:
///   freeing the old pinned buffers synchronizes the device;
/// - `HostRegistration`'s constructor and destructor (page-locking is a host operation);
/// - the first use of a device, a transport or a plan's host buffer may create contexts,
///   communicators or registrations (one-time costs; benchmarks warm them up).
/// `Plan::done()` and `Field::done()` ask without blocking.

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

/// @brief A non-owning view of a CUDA stream and the device it belongs to: how a caller hands
/// its own streams to a Plan or a Field, and how cush names a stream it does not own.
class StreamRef {
 public:
  constexpr StreamRef(int device, cudaStream_t stream) noexcept : device_(device), stream_(stream) {}
  /// A view of an owned stream (which must outlive the view).
  StreamRef(const Stream& s) noexcept : device_(s.device()), stream_(s.get()) {}  // NOLINT: a view converts

  [[nodiscard]] constexpr cudaStream_t get() const noexcept { return stream_; }
  [[nodiscard]] constexpr int device() const noexcept { return device_; }
  /// Blocks until all work in the stream is done; throws CudaError if any of it failed.
  void synchronize() const;
  friend constexpr bool operator==(const StreamRef&, const StreamRef&) = default;

 private:
  int device_;
  cudaStream_t stream_;
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
