// The box copy kernel (see box_copy.hpp).

#include <cstdint>

#include "core/kernel_preload.hpp"
#include "cush/error.hpp"
#include "grid/box_copy.hpp"

namespace cush::detail {

namespace {

struct Geometry {
  unsigned long long sx, sy, volume;
  unsigned long long src_ax, src_ay, src_x, src_y, src_z;
  unsigned long long dst_ax, dst_ay, dst_x, dst_y, dst_z;
};

// The geometry in index type I (32-bit indices divide several times faster: a strided face of
// doubles is one division-bound cell per 8 bytes).
template <class I>
struct Shape {
  I sx, sxy, volume;
  I src_ax, src_axy, src_0;
  I dst_ax, dst_axy, dst_0;
};

// One thread per cell, grid-stride; W is a word of the element's size. `dst` may be a peer's
// memory (a pack straight into the receiver): consecutive threads store consecutive words.
template <class W, class I>
__global__ void box_copy_kernel(const W* __restrict__ src, W* __restrict__ dst, Shape<I> g) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.volume; i += stride) {
    const I z = i / g.sxy;
    const I r = i - z * g.sxy;
    const I y = r / g.sx;
    const I x = r - y * g.sx;
    dst[g.dst_0 + z * g.dst_axy + y * g.dst_ax + x] = src[g.src_0 + z * g.src_axy + y * g.src_ax + x];
  }
}

struct Bytes16 {
  uint4 v;
};

template <class I>
Shape<I> shape(const Geometry& g) {
  return Shape<I>{static_cast<I>(g.sx),
                  static_cast<I>(g.sx * g.sy),
                  static_cast<I>(g.volume),
                  static_cast<I>(g.src_ax),
                  static_cast<I>(g.src_ax * g.src_ay),
                  static_cast<I>((g.src_z * g.src_ay + g.src_y) * g.src_ax + g.src_x),
                  static_cast<I>(g.dst_ax),
                  static_cast<I>(g.dst_ax * g.dst_ay),
                  static_cast<I>((g.dst_z * g.dst_ay + g.dst_y) * g.dst_ax + g.dst_x)};
}

template <class W>
void launch(const BoxSide& src, const BoxSide& dst, const Geometry& g, std::size_t words, cudaStream_t stream,
            unsigned max_blocks) {
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
  const auto blocks = static_cast<unsigned>(wanted < max_blocks ? wanted : max_blocks);
  const auto* in = static_cast<const W*>(src.data);
  auto* out = static_cast<W*>(const_cast<void*>(dst.data));
  // Every index the kernel forms is below the bound of either side (one past the box's last
  // row and plane) and below the loop counter's last value: 32 bits if they all fit.
  const unsigned long long planes = w.volume / (w.sx * w.sy);
  const auto bound = [&](unsigned long long ax, unsigned long long ay, unsigned long long x, unsigned long long y,
                         unsigned long long z) { return ((z + planes) * ay + y + w.sy) * ax + x + w.sx; };
  const unsigned long long limit = 0xFFFFFFFFULL;
  const unsigned long long counter = w.volume + static_cast<unsigned long long>(blocks) * threads;
  if (counter <= limit && bound(w.src_ax, w.src_ay, w.src_x, w.src_y, w.src_z) <= limit &&
      bound(w.dst_ax, w.dst_ay, w.dst_x, w.dst_y, w.dst_z) <= limit) {
    box_copy_kernel<W, unsigned><<<blocks, threads, 0, stream>>>(in, out, shape<unsigned>(w));
  } else {
    box_copy_kernel<W, unsigned long long><<<blocks, threads, 0, stream>>>(in, out, shape<unsigned long long>(w));
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void preload_box_copy(int device) {
  static const void* const kernels[] = {
      reinterpret_cast<const void*>(box_copy_kernel<Bytes16, unsigned>),
      reinterpret_cast<const void*>(box_copy_kernel<Bytes16, unsigned long long>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned long long, unsigned>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned long long, unsigned long long>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned, unsigned>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned, unsigned long long>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned short, unsigned>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned short, unsigned long long>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned char, unsigned>),
      reinterpret_cast<const void*>(box_copy_kernel<unsigned char, unsigned long long>)};
  preload_kernels(device, "box copy", kernels);
}

void launch_box_copy(const BoxSide& src, const BoxSide& dst, const Extent3& size, std::size_t element_size,
                     cudaStream_t stream, unsigned max_blocks) {
  if (max_blocks == 0) max_blocks = 1;
  const unsigned long long volume = static_cast<unsigned long long>(size[0]) * size[1] * size[2];
  if (volume == 0) return;
  const Geometry g{size[0],    size[1],    volume,     src.alloc[0], src.alloc[1], src.lo[0], src.lo[1],
                   src.lo[2],  dst.alloc[0], dst.alloc[1], dst.lo[0], dst.lo[1], dst.lo[2]};
  // The widest word that divides the element and both buffers' alignment.
  const auto aligned = [&](std::size_t w) {
    return element_size % w == 0 && reinterpret_cast<std::uintptr_t>(src.data) % w == 0 &&
           reinterpret_cast<std::uintptr_t>(dst.data) % w == 0;
  };
  if (aligned(16)) return launch<Bytes16>(src, dst, g, element_size / 16, stream, max_blocks);
  if (aligned(8)) return launch<unsigned long long>(src, dst, g, element_size / 8, stream, max_blocks);
  if (aligned(4)) return launch<unsigned>(src, dst, g, element_size / 4, stream, max_blocks);
  if (aligned(2)) return launch<unsigned short>(src, dst, g, element_size / 2, stream, max_blocks);
  launch<unsigned char>(src, dst, g, element_size, stream, max_blocks);
}

}  // namespace cush::detail
