// The box copy kernel (see box_copy.hpp).

#include <algorithm>
#include <cstdint>
#include <string>
#include <span>
#include <vector>

#include "core/copy_words.hpp"
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

// One thread per cell, grid-stride over the blocks of grid x; W is a word of the element's size.
// `dst` may be a peer's memory (a pack straight into the receiver): consecutive threads store
// consecutive words.
template <class W, class I>
__device__ void copy_cells(const W* __restrict__ src, W* __restrict__ dst, const Shape<I>& g) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.volume; i += stride) {
    const I z = i / g.sxy;
    const I r = i - z * g.sxy;
    const I y = r / g.sx;
    const I x = r - y * g.sx;
    dst[g.dst_0 + z * g.dst_axy + y * g.dst_ax + x] = src[g.src_0 + z * g.src_axy + y * g.src_ax + x];
  }
}

template <class W, class I>
__global__ void box_copy_kernel(const W* __restrict__ src, W* __restrict__ dst, Shape<I> g) {
  copy_cells(src, dst, g);
}

// A batch of boxes in one launch: grid y picks the box, grid x strides over its cells.
template <class I>
struct Batch {
  const void* src[box_copy_max_batch];
  void* dst[box_copy_max_batch];
  Shape<I> g[box_copy_max_batch];
};

template <class W, class I>
__global__ void box_copies_kernel(Batch<I> b) {
  const unsigned k = blockIdx.y;
  copy_cells(static_cast<const W*>(b.src[k]), static_cast<W*>(b.dst[k]), b.g[k]);
}

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

constexpr unsigned threads_per_block = 256;

// The geometry in words of W, each element being `words` of them: the x geometry scaled.
Geometry in_words(const Geometry& g, std::size_t words) {
  Geometry w = g;
  w.sx *= words;
  w.volume *= words;
  w.src_ax *= words;
  w.src_x *= words;
  w.dst_ax *= words;
  w.dst_x *= words;
  return w;
}

// Every index the kernel forms is below the bound of either side (one past the box's last row and
// plane) and below the loop counter's last value (`blocks` of grid x): 32 bits if they all fit.
bool fits_32_bits(const Geometry& w, unsigned blocks) {
  const unsigned long long planes = w.volume / (w.sx * w.sy);
  const auto bound = [&](unsigned long long ax, unsigned long long ay, unsigned long long x, unsigned long long y,
                         unsigned long long z) { return ((z + planes) * ay + y + w.sy) * ax + x + w.sx; };
  const unsigned long long limit = 0xFFFFFFFFULL;
  const unsigned long long counter = w.volume + static_cast<unsigned long long>(blocks) * threads_per_block;
  return counter <= limit && bound(w.src_ax, w.src_ay, w.src_x, w.src_y, w.src_z) <= limit &&
         bound(w.dst_ax, w.dst_ay, w.dst_x, w.dst_y, w.dst_z) <= limit;
}

unsigned blocks_for(const Geometry& w, unsigned max_blocks) {
  const unsigned long long wanted = (w.volume + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(wanted < max_blocks ? wanted : max_blocks);
}

template <class W>
void launch(const BoxSide& src, const BoxSide& dst, const Geometry& g, std::size_t words, cudaStream_t stream,
            unsigned max_blocks) {
  const Geometry w = in_words(g, words);
  const unsigned blocks = blocks_for(w, max_blocks);
  const auto* in = static_cast<const W*>(src.data);
  auto* out = static_cast<W*>(const_cast<void*>(dst.data));
  if (fits_32_bits(w, blocks)) {
    box_copy_kernel<W, unsigned><<<blocks, threads_per_block, 0, stream>>>(in, out, shape<unsigned>(w));
  } else {
    box_copy_kernel<W, unsigned long long><<<blocks, threads_per_block, 0, stream>>>(in, out, shape<unsigned long long>(w));
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

Geometry geometry(const BoxSide& src, const BoxSide& dst, const Extent3& size) {
  const unsigned long long volume = static_cast<unsigned long long>(size[0]) * size[1] * size[2];
  return Geometry{size[0],    size[1],    volume,       src.alloc[0], src.alloc[1], src.lo[0], src.lo[1],
                  src.lo[2],  dst.alloc[0], dst.alloc[1], dst.lo[0],    dst.lo[1],    dst.lo[2]};
}

template <class W, class I>
void launch_batch_as(std::span<const BoxCopy> boxes, std::span<const Geometry> w, unsigned blocks, cudaStream_t stream) {
  Batch<I> b{};
  for (std::size_t k = 0; k < boxes.size(); ++k) {
    b.src[k] = boxes[k].src.data;
    b.dst[k] = const_cast<void*>(boxes[k].dst.data);
    b.g[k] = shape<I>(w[k]);
  }
  const dim3 grid(blocks, static_cast<unsigned>(boxes.size()));
  box_copies_kernel<W, I><<<grid, threads_per_block, 0, stream>>>(b);
}

template <class W>
void launch_batch(std::span<const BoxCopy> boxes, std::size_t words, cudaStream_t stream, unsigned max_blocks) {
  Geometry w[box_copy_max_batch];
  unsigned blocks = 1;
  // The blocks are shared: grid x is the most any box wants, within max_blocks in all.
  const unsigned per_box = std::max(max_blocks / static_cast<unsigned>(boxes.size()), 1U);
  for (std::size_t k = 0; k < boxes.size(); ++k) {
    w[k] = in_words(geometry(boxes[k].src, boxes[k].dst, boxes[k].size), words);
    blocks = std::max(blocks, blocks_for(w[k], per_box));
  }
  bool narrow = true;
  for (std::size_t k = 0; k < boxes.size(); ++k) narrow = narrow && fits_32_bits(w[k], blocks);
  const std::span<const Geometry> ws(w, boxes.size());
  if (narrow) {
    launch_batch_as<W, unsigned>(boxes, ws, blocks, stream);
  } else {
    launch_batch_as<W, unsigned long long>(boxes, ws, blocks, stream);
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void preload_box_copy(int device) {
  // Both kernels at every word width and index width.
  const auto both = []<class... W>() {
    return std::vector<const void*>{reinterpret_cast<const void*>(box_copy_kernel<W, unsigned>)...,
                                    reinterpret_cast<const void*>(box_copy_kernel<W, unsigned long long>)...,
                                    reinterpret_cast<const void*>(box_copies_kernel<W, unsigned>)...,
                                    reinterpret_cast<const void*>(box_copies_kernel<W, unsigned long long>)...};
  };
  static const std::vector<const void*> kernels =
      both.template operator()<Bytes16, unsigned long long, unsigned, unsigned short, unsigned char>();
  preload_kernels(device, "box copy", kernels);
}

void launch_box_copies(std::span<const BoxCopy> boxes, std::size_t element_size, cudaStream_t stream,
                       unsigned max_blocks) {
  if (boxes.size() > box_copy_max_batch)
    throw InvalidArgument("cush::detail::launch_box_copies", "boxes",
                          std::to_string(boxes.size()) + " boxes, at most " + std::to_string(box_copy_max_batch));
  BoxCopy kept[box_copy_max_batch];
  std::size_t n = 0;
  for (const BoxCopy& b : boxes)
    if (b.size[0] != 0 && b.size[1] != 0 && b.size[2] != 0) kept[n++] = b;
  if (n == 0) return;
  if (n == 1) return launch_box_copy(kept[0].src, kept[0].dst, kept[0].size, element_size, stream, max_blocks);
  if (max_blocks == 0) max_blocks = 1;
  const std::span<const BoxCopy> batch(kept, n);
  const void* pointers[2 * box_copy_max_batch];
  for (std::size_t k = 0; k < n; ++k) {
    pointers[2 * k] = batch[k].src.data;
    pointers[2 * k + 1] = batch[k].dst.data;
  }
  with_word(element_size, std::span<const void* const>(pointers, 2 * n),
            [&]<class W>(W*, std::size_t words) { launch_batch<W>(batch, words, stream, max_blocks); });
}

void launch_box_copy(const BoxSide& src, const BoxSide& dst, const Extent3& size, std::size_t element_size,
                     cudaStream_t stream, unsigned max_blocks) {
  if (max_blocks == 0) max_blocks = 1;
  const Geometry g = geometry(src, dst, size);
  if (g.volume == 0) return;
  const void* const pointers[] = {src.data, dst.data};
  with_word(element_size, pointers, [&]<class W>(W*, std::size_t words) { launch<W>(src, dst, g, words, stream, max_blocks); });
}

}  // namespace cush::detail
