#include "ops/combine.hpp"

#include <cstdint>
#include <vector>

#include "core/cuda_devices.hpp"
#include "core/kernel_preload.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {

template <class T, ReduceOp Op>
__device__ __forceinline__ T apply(T a, T b) {
  if constexpr (Op == ReduceOp::sum) return a + b;
  if constexpr (Op == ReduceOp::min) return b < a ? b : a;
  if constexpr (Op == ReduceOp::max) return a < b ? b : a;
}

// 16-byte vectors so that each thread keeps a full line in flight: reads over a peer link need
// many bytes outstanding to reach the link's bandwidth.
template <class T, ReduceOp Op>
__global__ void combine_vectors(T* __restrict__ dst, const T* __restrict__ src, std::size_t vectors) {
  constexpr int per = 16 / sizeof(T);
  auto* d = reinterpret_cast<uint4*>(dst);
  const auto* s = reinterpret_cast<const uint4*>(src);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride) {
    uint4 a = d[i];
    const uint4 b = s[i];
    T* x = reinterpret_cast<T*>(&a);
    const T* y = reinterpret_cast<const T*>(&b);
#pragma unroll
    for (int k = 0; k < per; ++k) x[k] = apply<T, Op>(x[k], y[k]);
    d[i] = a;
  }
}

template <class T, ReduceOp Op>
__global__ void combine_scalars(T* __restrict__ dst, const T* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = apply<T, Op>(dst[i], src[i]);
}

unsigned blocks_for(std::size_t items, unsigned threads) {
  static const unsigned cap = static_cast<unsigned>(current_device_attribute(cudaDevAttrMultiProcessorCount)) * 8;
  const std::size_t needed = (items + threads - 1) / threads;
  return static_cast<unsigned>(needed < cap ? needed : cap);
}

template <class T, ReduceOp Op>
void launch(void* dst, const void* src, std::size_t n, cudaStream_t stream) {
  constexpr unsigned threads = 256;
  auto* d = static_cast<T*>(dst);
  const auto* s = static_cast<const T*>(src);
  const bool aligned = (reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(s)) % 16 == 0;
  std::size_t done = 0;
  if (aligned) {
    constexpr std::size_t per = 16 / sizeof(T);
    const std::size_t vectors = n / per;
    if (vectors > 0) {
      combine_vectors<T, Op><<<blocks_for(vectors, threads), threads, 0, stream>>>(d, s, vectors);
      CUSH_CUDA_CHECK(cudaGetLastError());
    }
    done = vectors * per;
  }
  if (done < n) {
    combine_scalars<T, Op><<<blocks_for(n - done, threads), threads, 0, stream>>>(d + done, s + done, n - done);
    CUSH_CUDA_CHECK(cudaGetLastError());
  }
}

template <class T>
void launch_op(ReduceOp op, void* dst, const void* src, std::size_t n, cudaStream_t stream) {
  switch (op) {
    case ReduceOp::sum: return launch<T, ReduceOp::sum>(dst, src, n, stream);
    case ReduceOp::min: return launch<T, ReduceOp::min>(dst, src, n, stream);
    case ReduceOp::max: return launch<T, ReduceOp::max>(dst, src, n, stream);
  }
}

// The addresses of both kernels of every type and operator, in `out`.
template <class T>
void kernels_of(std::vector<const void*>& out) {
  out.push_back(reinterpret_cast<const void*>(combine_vectors<T, ReduceOp::sum>));
  out.push_back(reinterpret_cast<const void*>(combine_vectors<T, ReduceOp::min>));
  out.push_back(reinterpret_cast<const void*>(combine_vectors<T, ReduceOp::max>));
  out.push_back(reinterpret_cast<const void*>(combine_scalars<T, ReduceOp::sum>));
  out.push_back(reinterpret_cast<const void*>(combine_scalars<T, ReduceOp::min>));
  out.push_back(reinterpret_cast<const void*>(combine_scalars<T, ReduceOp::max>));
}

}  // namespace

void preload_combine(int device) {
  static const std::vector<const void*> kernels = [] {
    std::vector<const void*> k;
    kernels_of<std::int8_t>(k);
    kernels_of<std::uint8_t>(k);
    kernels_of<std::int32_t>(k);
    kernels_of<std::uint32_t>(k);
    kernels_of<std::int64_t>(k);
    kernels_of<std::uint64_t>(k);
    kernels_of<float>(k);
    kernels_of<double>(k);
    return k;
  }();
  preload_kernels(device, "combine", kernels);
}

void launch_combine(ElementType type, ReduceOp op, void* dst, const void* src, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (type) {
    case ElementType::int8: return launch_op<std::int8_t>(op, dst, src, n, stream);
    case ElementType::uint8: return launch_op<std::uint8_t>(op, dst, src, n, stream);
    case ElementType::int32: return launch_op<std::int32_t>(op, dst, src, n, stream);
    case ElementType::uint32: return launch_op<std::uint32_t>(op, dst, src, n, stream);
    case ElementType::int64: return launch_op<std::int64_t>(op, dst, src, n, stream);
    case ElementType::uint64: return launch_op<std::uint64_t>(op, dst, src, n, stream);
    case ElementType::float32: return launch_op<float>(op, dst, src, n, stream);
    case ElementType::float64: return launch_op<double>(op, dst, src, n, stream);
  }
}

}  // namespace cush::detail
