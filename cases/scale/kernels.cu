#include "cush/error.hpp"
#include "scale.hpp"

namespace cases {
namespace scale {

namespace {
__global__ void scale_kernel(float* x, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    x[i] = 3.0F * x[i] - 1.0F;
}
}  // namespace

void launch_scale(float* x, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t blocks = (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536;
  scale_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, n);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace scale
}  // namespace cases
