// Case "scale", single-GPU CUDA reference: the job of seed Listings 2.1/2.2 on one GPU.

#include <cuda_runtime.h>

#include "cush/error.hpp"
#include "scale.hpp"

namespace cases {
namespace scale {

void single(const float* host_buf, float* host_recv_buf, std::size_t host_size, const Devices& gpus) {
  float* dev_ptr = nullptr;
  cudaStream_t stream = nullptr;
  const std::size_t bytes = host_size * sizeof(float);
  CUSH_CUDA_CHECK(cudaSetDevice(gpus.cuda[0]));
  CUSH_CUDA_CHECK(cudaStreamCreate(&stream));
  CUSH_CUDA_CHECK(cudaMalloc(&dev_ptr, bytes));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(dev_ptr, host_buf, bytes, cudaMemcpyHostToDevice, stream));
  launch_scale(dev_ptr, host_size, stream);
  CUSH_CUDA_CHECK(cudaMemcpyAsync(host_recv_buf, dev_ptr, bytes, cudaMemcpyDeviceToHost, stream));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSH_CUDA_CHECK(cudaFree(dev_ptr));
  CUSH_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace scale
}  // namespace cases
