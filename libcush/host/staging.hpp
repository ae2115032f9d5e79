#pragma once
// Moves between pageable host memory and one device through pinned staging buffers.
//
// Two lanes per device: a "copy" lane whose host functions memcpy between the user's pageable
// memory and a pinned slot (spread over the thread pool), and a "dma" lane that moves slots to
// or from the device. Chunk i+1 is copied on the host while the copy engine moves chunk i. All
// steps are enqueued when the call is made, after everything already in the caller's stream and
// before anything enqueued there later: the call is asynchronous and stream-ordered like a copy
// from pinned memory, and the caller must leave the host range alone until the stream passes it.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "cush/host_memory.hpp"
#include "cush/stream.hpp"

namespace cush::detail {

class StagingEngine {
 public:
  /// The engine of `device` (created on first use, lives until process exit).
  static StagingEngine& of(int device);
  ~StagingEngine();
  StagingEngine(const StagingEngine&) = delete;
  StagingEngine& operator=(const StagingEngine&) = delete;

  /// Pageable host `src` -> device `dst`, ordered in `stream` (a stream of this engine's device).
  void to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);
  /// Device `src` -> pageable host `dst`, ordered in `stream`.
  void to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

 private:
  explicit StagingEngine(int device);
  struct PinnedFree {
    void operator()(void* p) const noexcept { pinned_free(p); }
  };
  struct Slot {
    std::unique_ptr<void, PinnedFree> buffer;
    Event filled;  // data is in the slot
    Event free;    // whoever read the slot last is done with it
  };
  void prepare(const HostTransferOptions& options);  // under mutex_
  // Under mutex_, with the device current: readies the slots and makes both lanes wait for the
  // work already in `stream`. Returns the copy threads to use.
  unsigned begin(cudaStream_t stream);
  unsigned copy_threads(const HostTransferOptions& options) const noexcept;

  int device_;
  std::mutex mutex_;
  Stream copy_lane_;
  Stream dma_lane_;
  Event start_;
  Event done_;
  std::vector<Slot> slots_;
  std::size_t chunk_ = 0;
  std::size_t next_slot_ = 0;
};

}  // namespace cush::detail
