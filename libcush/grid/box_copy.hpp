#pragma once
// A strided box of cells copied on one device: halo pack (box -> contiguous buffer), unpack
// (contiguous buffer -> box) and copies within a block's buffer are all this one kernel.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

#include "cush/grid.hpp"
#include "grid/step_batches.hpp"

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

/// One box of a batch: `size` cells from `src` to `dst`.
struct BoxCopy {
  BoxSide src;
  BoxSide dst;
  Extent3 size{};
};

/// The boxes (at most box_copy_max_batch, grid/step_batches.hpp; none may write what another
/// reads or writes) copied by one kernel launch on `stream`, at most `max_blocks` thread blocks
/// in all. Empty boxes are left out; a single box is launch_box_copy.
void launch_box_copies(std::span<const BoxCopy> boxes, std::size_t element_size, cudaStream_t stream,
                       unsigned max_blocks = box_copy_max_blocks);

}  // namespace cush::detail
