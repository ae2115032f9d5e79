#pragma once
// Whether a stream has finished its work, for the done() queries of plans, fields and the
// executor: cudaStreamQuery's "not ready" is an answer, any other failure is thrown. And the
// wait for a stream's work after a failed enqueue.

#include <cuda_runtime_api.h>

namespace cush::detail {

/// True if `stream` has no work left, false if it is still busy; throws CudaError (naming
/// `what` on `device`) for an earlier asynchronous failure.
[[nodiscard]] bool stream_idle(cudaStream_t stream, const char* what, int device);

/// After a failed enqueue: waits for `stream`'s work (reporting, not throwing, a failure), unless
/// the stream is being captured into a graph: then none of it runs until the capture's owner
/// ends the capture, and synchronizing would only invalidate it.
void drain_stream(cudaStream_t stream) noexcept;

}  // namespace cush::detail
