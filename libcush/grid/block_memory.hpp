#pragma once
// A field block's memory: how its buffer is laid out (components one after another, each
// aligned) and the copies between its owned cells and a host array. Shared by Field (one
// process) and RankField (blocks over MPI ranks).

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/grid.hpp"

namespace cush::detail {

/// Elements from one component of block k to the next: the block's buffer rounded up so that
/// every component starts as aligned as the buffer (256 bytes) and a whole number of rows of
/// row_align cells from it. InvalidArgument (for `where`) if it overflows.
[[nodiscard]] std::size_t component_stride(const Decomposition& grid, std::size_t k, std::size_t element_size,
                                           const char* where);

/// Bytes of block k's buffer with `components` components `stride` elements apart (lead() cells,
/// then the first ghost cell). InvalidArgument (for `where`) if it overflows.
[[nodiscard]] std::size_t block_bytes(const Decomposition& grid, std::size_t k, std::size_t element_size,
                                      std::size_t components, std::size_t stride, const char* where);

/// Where a block's owned cells meet a host array: the array has `extent` cells (x fastest, no
/// ghosts) and the block's owned box starts at `lo` in it.
struct HostBox {
  void* data = nullptr;
  Extent3 extent{};
  Extent3 lo{};
};

/// Block k's owned cells of one component (`block`: that component's first ghost cell, on the
/// stream's device) to the host array, or back (`to_device`), on `stream`.
void copy_owned(const Decomposition& grid, std::size_t k, void* block, const HostBox& host, std::size_t element_size,
                cudaStream_t stream, bool to_device);

}  // namespace cush::detail
