#pragma once
// The reduction kernel behind combine transfers: dst[i] = op(dst[i], src[i]).

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/reduce.hpp"

namespace cush::detail {

/// Loads every combine kernel on `device` (once per process; core/kernel_preload.hpp).
void preload_combine(int device);

/// Enqueues dst[i] = op(dst[i], src[i]) for i < n on `stream` (whose device is current). `src`
/// may live on another device with peer access enabled: the kernel then reads it over the link.
void launch_combine(ElementType type, ReduceOp op, void* dst, const void* src, std::size_t n, cudaStream_t stream);

}  // namespace cush::detail
