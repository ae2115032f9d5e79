#pragma once
// Whether a stream has finished its work, for the done() queries of plans, fields and the
// executor: cudaStreamQuery's "not ready" is an answer, any other failure is thrown.

#include <cuda_runtime_api.h>

namespace cush::detail {

/// True if `stream` has no work left, false if it is still busy; throws CudaError (naming
/// `what` on `device`) for an earlier asynchronous failure.
[[nodiscard]] bool stream_idle(cudaStream_t stream, const char* what, int device);

}  // namespace cush::detail
