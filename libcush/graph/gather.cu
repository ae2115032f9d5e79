// The gather kernel (see gather.hpp).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/copy_words.hpp"
#include "core/kernel_preload.hpp"
#include "cush/error.hpp"
#include "graph/gather.hpp"

namespace cush::detail {

namespace {

constexpr unsigned threads_per_block = 256;

// Element e of the run is `words` words of W read from element index[e] of src. Consecutive
// threads store consecutive words, so the stores into a peer's memory coalesce; the reads are as
// scattered as the index list (ascending within each group of the sender's local order).
template <class W>
__global__ void gather_kernel(const W* __restrict__ src, const std::int32_t* __restrict__ index, W* __restrict__ dst,
                              unsigned long long count, unsigned words) {
  const unsigned long long total = count * words;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    if (words == 1) {
      dst[i] = src[index[i]];
    } else {
      const unsigned long long e = i / words;
      dst[i] = src[static_cast<unsigned long long>(index[e]) * words + (i - e * words)];
    }
  }
}

template <class W>
void launch(const void* src, const std::int32_t* index, std::size_t count, void* dst, unsigned words,
            cudaStream_t stream, unsigned max_blocks) {
  const unsigned long long total = static_cast<unsigned long long>(count) * words;
  const unsigned long long wanted = (total + threads_per_block - 1) / threads_per_block;
  const unsigned blocks = static_cast<unsigned>(std::min<unsigned long long>(wanted, std::max(max_blocks, 1U)));
  gather_kernel<W><<<blocks, threads_per_block, 0, stream>>>(static_cast<const W*>(src), index, static_cast<W*>(dst),
                                                            count, words);
  CUSH_CUDA_CHECK(cudaGetLastError());
}


}  // namespace

void launch_gather(const void* src, const std::int32_t* index, std::size_t count, void* dst, std::size_t element_size,
                   cudaStream_t stream, unsigned max_blocks) {
  if (count == 0) return;
  if (element_size == 0 || element_size > (1U << 20))
    throw InvalidArgument("cush::detail::launch_gather", "element_size", "must be 1 to 2^20 bytes");
  const void* const pointers[] = {src, dst};
  with_word(element_size, pointers, [&]<class W>(W*, std::size_t words) {
    launch<W>(src, index, count, dst, static_cast<unsigned>(words), stream, max_blocks);
  });
}

void preload_gather(int device) {
  static const std::vector<const void*> kernels{
      reinterpret_cast<const void*>(gather_kernel<Bytes16>), reinterpret_cast<const void*>(gather_kernel<unsigned long long>),
      reinterpret_cast<const void*>(gather_kernel<unsigned>), reinterpret_cast<const void*>(gather_kernel<unsigned short>),
      reinterpret_cast<const void*>(gather_kernel<unsigned char>)};
  preload_kernels(device, "gather", kernels);
}

}  // namespace cush::detail
