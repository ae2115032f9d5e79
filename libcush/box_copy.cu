// The box copy kernel (see cush/detail/box_copy.hpp).

#include <cstdint>

#include "cush/detail/box_copy.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {

struct Geometry {
  unsigned long long sx, sy, volume;
  unsigned long long src_ax, src_ay, src_x, src_y, src_z;
  unsigned long long dst_ax, dst_ay, dst_x, dst_y, dst_z;
};

// One thread per cell, grid-stride; W is a word of the element's size.
template <class W>
__global__ void box_copy_kernel(const W* __restrict__ src, W* __restrict__ dst, Geometry g) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.volume;
       i += stride) {
    const unsigned long long x = i % g.sx;
    const unsigned long long y = (i / g.sx) % g.sy;
    const unsigned long long z = i / (g.sx * g.sy);
    const unsigned long long s = ((g.src_z + z) * g.src_ay + g.src_y + y) * g.src_ax + g.src_x + x;
    const unsigned long long d = ((g.dst_z + z) * g.dst_ay + g.dst_y + y) * g.dst_ax + g.dst_x + x;
    dst[d] = src[s];
  }
}

struct Bytes16 {
  uint4 v;
};

template <class W>
void launch(const BoxSide& src, const BoxSide& dst, const Geometry& g, std::size_t words, cudaStream_t stream) {
  // Each element is `words` words of W: scale the x geometry by it.
  Geometry w = g;
  w.sx *= words;
  w.volume *= words;
  w.src_ax *= words;
  w.src_x *= words;
  w.dst_ax *= words;
  w.dst_x *= words;
  const unsigned threads = 256;
  const unsigned long long wanted = (w.volume + threads - 1) / threads;
  const auto blocks = static_cast<unsigned>(wanted < 4096 ? wanted : 4096);
  box_copy_kernel<W><<<blocks, threads, 0, stream>>>(static_cast<const W*>(src.data),
                                                     static_cast<W*>(const_cast<void*>(dst.data)), w);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_box_copy(const BoxSide& src, const BoxSide& dst, const Extent3& size, std::size_t element_size,
                     cudaStream_t stream) {
  const unsigned long long volume = static_cast<unsigned long long>(size[0]) * size[1] * size[2];
  if (volume == 0) return;
  const Geometry g{size[0],    size[1],    volume,     src.alloc[0], src.alloc[1], src.lo[0], src.lo[1],
                   src.lo[2],  dst.alloc[0], dst.alloc[1], dst.lo[0], dst.lo[1], dst.lo[2]};
  // The widest word that divides the element and both buffers' alignment.
  const auto aligned = [&](std::size_t w) {
    return element_size % w == 0 && reinterpret_cast<std::uintptr_t>(src.data) % w == 0 &&
           reinterpret_cast<std::uintptr_t>(dst.data) % w == 0;
  };
  if (aligned(16)) return launch<Bytes16>(src, dst, g, element_size / 16, stream);
  if (aligned(8)) return launch<unsigned long long>(src, dst, g, element_size / 8, stream);
  if (aligned(4)) return launch<unsigned>(src, dst, g, element_size / 4, stream);
  if (aligned(2)) return launch<unsigned short>(src, dst, g, element_size / 2, stream);
  launch<unsigned char>(src, dst, g, element_size, stream);
}

}  // namespace cush::detail
