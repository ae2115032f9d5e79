// Case "scale", multi-GPU raw CUDA: seed 002 Listing 2.1. Spread a host buffer uniformly over the
// first `gpus` GPUs, scale each part, collect the parts into a second host buffer. Unlike the
// seed's fragment it handles sizes not divisible by the GPU count, launches the kernel itself,
// checks every call and frees what it made.

#include <cuda_runtime.h>

#include <vector>

#include "cush/error.hpp"
#include "scale.hpp"

namespace cases {
namespace scale {

void multi_cuda(const float* host_buf, float* host_recv_buf, std::size_t host_size, const Devices& devices) {
  const std::vector<int>& ids = devices.cuda;
  const int gpus = static_cast<int>(ids.size());
  std::vector<float*> dev_ptrs(gpus);
  std::vector<cudaStream_t> streams(gpus);
  std::vector<std::size_t> dev_sizes(gpus);
  const std::size_t base = host_size / gpus;
  const std::size_t extra = host_size % gpus;
  std::size_t offset = 0;
  for (int i = 0; i < gpus; ++i) {
    dev_sizes[i] = base + (static_cast<std::size_t>(i) < extra ? 1 : 0);
    CUSH_CUDA_CHECK(cudaSetDevice(ids[i]));
    CUSH_CUDA_CHECK(cudaStreamCreate(&streams[i]));
    CUSH_CUDA_CHECK(cudaMalloc(&dev_ptrs[i], dev_sizes[i] * sizeof(float)));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(dev_ptrs[i], host_buf + offset, dev_sizes[i] * sizeof(float),
                                    cudaMemcpyHostToDevice, streams[i]));
    launch_scale(dev_ptrs[i], dev_sizes[i], streams[i]);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(host_recv_buf + offset, dev_ptrs[i], dev_sizes[i] * sizeof(float),
                                    cudaMemcpyDeviceToHost, streams[i]));
    offset += dev_sizes[i];
  }
  for (int i = 0; i < gpus; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids[i]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
    CUSH_CUDA_CHECK(cudaFree(dev_ptrs[i]));
    CUSH_CUDA_CHECK(cudaStreamDestroy(streams[i]));
  }
}

}  // namespace scale
}  // namespace cases
