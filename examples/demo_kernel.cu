#include "cush/error.hpp"
#include "demo_kernel.hpp"

namespace {
__global__ void axpb(float* x, std::size_t n, float a, float b) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    x[i] = a * x[i] + b;
}
}  // namespace

void demo_axpb(cush::Segment<float> s, float a, float b) {
  const std::size_t blocks = std::min<std::size_t>((s.size() + 255) / 256, 65535);
  axpb<<<static_cast<unsigned>(blocks), 256, 0, s.stream()>>>(s.data(), s.size(), a, b);
  CUSH_CUDA_CHECK(cudaGetLastError());
}
