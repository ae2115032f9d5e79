#include "grid/exchange_step.hpp"

#include "cush/error.hpp"

namespace cush::detail {

void* side_address(void* base, const StepSide& side, std::size_t element_size) {
  return static_cast<std::byte*>(base) +
         (side.lo[0] + side.alloc[0] * (side.lo[1] + side.alloc[1] * side.lo[2])) * element_size;
}

void run_exchange_step(const ExchangeStep& s, void* src, void* dst, std::size_t element_size, cudaStream_t stream,
                       unsigned max_blocks) {
  if (s.contiguous) {
    const std::size_t bytes = box_span(s.src.alloc, s.size) * element_size;  // padding between rows too
    // cudaMemcpyAsync, not cudaMemcpyPeerAsync, which CUDA 13.0 does not capture into graphs.
    CUSH_CUDA_CHECK(cudaMemcpyAsync(side_address(dst, s.dst, element_size), side_address(src, s.src, element_size), bytes,
                                    cudaMemcpyDefault, stream));
    return;
  }
  launch_box_copy(BoxSide{src, s.src.alloc, s.src.lo}, BoxSide{dst, s.dst.alloc, s.dst.lo}, s.size, element_size, stream,
                  max_blocks);
}

}  // namespace cush::detail
