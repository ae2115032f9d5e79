#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "listing_kernel.hpp"

namespace listing {

namespace {
__global__ void scale(float* x, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = 3.0F * x[i] - 1.0F;
}
unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + 255) / 256); }
}  // namespace

void exec_kernel(float* const* dev_ptrs, const std::size_t* dev_sizes, const cudaStream_t* streams, int gpu_n) {
  for (int i = 0; i < gpu_n; ++i) {
    if (dev_sizes[i] == 0) continue;
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    scale<<<blocks(dev_sizes[i]), 256, 0, streams[i]>>>(dev_ptrs[i], dev_sizes[i]);
    CUSH_CUDA_CHECK(cudaGetLastError());
  }
}

void exec_kernel(cush::Plan<float>& plan) {
  plan.for_each([](cush::Segment<float> s) {
    scale<<<blocks(s.size()), 256, 0, s.stream()>>>(s.data(), s.size());
    CUSH_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace listing
