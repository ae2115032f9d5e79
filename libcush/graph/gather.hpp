#pragma once
// The gather kernel of a graph field's exchange: the values a part sends, picked from its buffer
// by a device-resident list of local indices, stored in order into one run of a buffer, which may
// be the receiver's ghosts in a peer's memory (graph/graph_exchange.hpp).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cush::detail {

/// The most thread blocks of one gather (enough to fill any current GPU).
inline constexpr unsigned gather_max_blocks = 4096;

/// dst[i] = src[index[i]] for i < count, elements of `element_size` bytes, on `stream` (of the
/// device holding `src` and `index`; `dst` may be a peer's memory). Nothing is launched for
/// count = 0.
void launch_gather(const void* src, const std::int32_t* index, std::size_t count, void* dst, std::size_t element_size,
                   cudaStream_t stream, unsigned max_blocks = gather_max_blocks);

/// Loads every instantiation of the kernel on `device` (once per process; core/kernel_preload.hpp).
void preload_gather(int device);

}  // namespace cush::detail
