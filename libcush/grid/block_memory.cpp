#include "grid/block_memory.hpp"

#include <limits>
#include <numeric>
#include <string>

#include "cush/error.hpp"

namespace cush::detail {

namespace {

[[noreturn]] void overflow(const char* where, std::size_t k) {
  throw InvalidArgument(where, "grid", "block " + std::to_string(k) + " overflows the address space");
}

}  // namespace

std::size_t component_stride(const Decomposition& grid, std::size_t k, std::size_t element_size, const char* where) {
  const std::size_t unit = std::lcm(grid.row_align(), 256 / std::gcd<std::size_t>(256, element_size));
  const std::size_t cells = grid.lead() + grid.allocated_cells(k);
  if (cells > std::numeric_limits<std::size_t>::max() - unit) overflow(where, k);
  return (cells + unit - 1) / unit * unit;
}

std::size_t block_bytes(const Decomposition& grid, std::size_t k, std::size_t element_size, std::size_t components,
                        std::size_t stride, const char* where) {
  const std::size_t cells = grid.lead() + grid.allocated_cells(k);
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  if (stride > (max - cells) / components || stride * (components - 1) + cells > max / element_size) overflow(where, k);
  return (stride * (components - 1) + cells) * element_size;
}

void copy_owned(const Decomposition& grid, std::size_t k, void* block, const HostBox& host, std::size_t element_size,
                cudaStream_t stream, bool to_device) {
  const Box o = grid.owned(k);
  const Extent3 alloc = grid.allocated(k);
  const Extent3& e = host.extent;
  if (o.size[1] * o.size[2] == 1) {
    // One row (1D grids): a plain copy, free of the 3D copy's pitch limits.
    auto* h0 = static_cast<std::byte*>(host.data) + (host.lo[0] + e[0] * (host.lo[1] + e[1] * host.lo[2])) * element_size;
    auto* d0 = static_cast<std::byte*>(block) + (grid.halo(0) + alloc[0] * (grid.halo(1) + alloc[1] * grid.halo(2))) * element_size;
    CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(to_device ? d0 : h0, to_device ? h0 : d0, o.size[0] * element_size,
                                       cudaMemcpyDefault, stream),
                       "block " + std::to_string(k));
    return;
  }
  cudaMemcpy3DParms c{};
  const cudaPitchedPtr h{host.data, e[0] * element_size, e[0], e[1]};
  const cudaPitchedPtr d{block, alloc[0] * element_size, alloc[0], alloc[1]};
  const cudaPos hp{host.lo[0] * element_size, host.lo[1], host.lo[2]};
  const cudaPos dp{grid.halo(0) * element_size, grid.halo(1), grid.halo(2)};
  c.srcPtr = to_device ? h : d;
  c.srcPos = to_device ? hp : dp;
  c.dstPtr = to_device ? d : h;
  c.dstPos = to_device ? dp : hp;
  c.extent = cudaExtent{o.size[0] * element_size, o.size[1], o.size[2]};
  c.kind = cudaMemcpyDefault;
  CUSH_CUDA_CHECK_AT(cudaMemcpy3DAsync(&c, stream), "block " + std::to_string(k));
}

}  // namespace cush::detail
