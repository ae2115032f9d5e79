#pragma once
// A strided box of cells copied on one device: halo pack (box -> contiguous buffer), unpack
// (contiguous buffer -> box) and copies within a block's buffer are all this one kernel.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/grid.hpp"

namespace cush::detail {

/// One side of a box copy: a buffer of `alloc` cells (x fastest) and the box's lowest corner in
/// it (buffer coordinates, from 0).
struct BoxSide {
  const void* data = nullptr;
  Extent3 alloc{};
  Extent3 lo{};
};

/// The most thread blocks of one box copy (enough to fill any current GPU).
inline constexpr unsigned box_copy_max_blocks = 4096;

/// Loads every instantiation of the kernel on `device` (once per process; core/kernel_preload.hpp).
void preload_box_copy(int device);

/// Copies `size` cells of `element_size` bytes from `src` to `dst` (both on the stream's
/// device) on `stream`. Nothing is launched for an empty box.
/// At most `max_blocks` thread blocks (fewer leave room for a kernel running beside it).
void launch_box_copy(const BoxSide& src, const BoxSide& dst, const Extent3& size, std::size_t element_size,
                     cudaStream_t stream, unsigned max_blocks = box_copy_max_blocks);

}  // namespace cush::detail
