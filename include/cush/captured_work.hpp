#pragma once
/// @file captured_work.hpp
/// @brief Work that one call enqueues on several devices' streams (a step: kernels, a field's
/// exchange, copies), captured once into a CUDA graph and replayed with one host call.
///
/// A multi-GPU step enqueues tens to hundreds of operations per device; on small problems the
/// host's time to enqueue them, not the GPUs, sets the pace. CapturedWork records them once:
///
///     cush::CapturedWork step(field.streams(), [&] { one_step(); });  // nothing runs yet
///     for (int s = 0; s < steps; ++s) step.launch();                   // as if one_step() ran
///
/// launch() orders the graph like the captured calls would be: after everything enqueued before
/// it on any of the streams, and before anything enqueued on them after it. The graph replays
/// the same kernels with the same arguments and pointers: capture again when they change (a
/// ping-pong pair of buffers swaps back after an even number of swaps: capture whole cycles).
///
/// What `enqueue` may do: enqueue kernels, copies and event records and waits on the given
/// streams, and on other streams it forks from them and joins back to them by events (a
/// Field's or a GraphField's exchange does so with its exchange streams). It must not
/// synchronize, allocate or free device memory, nor use NCCL (the nccl transports refuse
/// capture). Capture mode is cudaStreamCaptureModeRelaxed.

#include <cuda_runtime_api.h>

#include <functional>
#include <span>
#include <vector>

#include "cush/stream.hpp"

namespace cush {

/// @brief One capture of `enqueue` over `streams`, replayed by launch().
class CapturedWork {
 public:
  /// Captures `enqueue()` with `streams` (each a created, non-default stream of its cush
  /// device; repeats are ignored) joined into one graph, and instantiates it. Nothing runs.
  /// InvalidArgument for no streams, a default stream or a stream already being captured;
  /// CudaError if CUDA refuses the capture (e.g. work left on a stream that was never joined
  /// back), with every stream's capture ended. An exception from `enqueue` ends the capture
  /// and propagates.
  CapturedWork(std::span<const StreamRef> streams, const std::function<void()>& enqueue);
  /// Waits for the graph's launches to finish, then frees it.
  ~CapturedWork();
  CapturedWork(CapturedWork&& other) noexcept;
  CapturedWork& operator=(CapturedWork&& other) noexcept;
  CapturedWork(const CapturedWork&) = delete;
  CapturedWork& operator=(const CapturedWork&) = delete;

  /// Enqueues the captured work once (does not block the host).
  void launch();
  /// Blocks until every launch so far has finished; throws CudaError if one failed.
  void wait() const;
  /// The number of operations (graph nodes) captured.
  [[nodiscard]] std::size_t nodes() const noexcept { return nodes_; }

 private:
  void reset() noexcept;
  std::vector<StreamRef> streams_;  // streams_[0] launches the graph
  std::vector<Event> fork_, join_;  // by stream: fork_[0] opens the capture, join_[0] is unused
  Event launched_;                  // after the last launch, on streams_[0]
  cudaGraphExec_t exec_ = nullptr;
  std::size_t nodes_ = 0;
};

}  // namespace cush
