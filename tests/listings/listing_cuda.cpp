// Seed 002, Listing 2.1, in raw CUDA: spread a host buffer uniformly over the first gpu_n GPUs,
// run a kernel on each part, collect the parts into a second host buffer. Unlike the seed's
// fragment it handles sizes not divisible by gpu_n, checks every call and frees what it made.

#include <cuda_runtime.h>

#include <vector>

#include "cush/error.hpp"
#include "listing_kernel.hpp"

namespace listing {

void listing_cuda(const float* host_buf, float* host_recv_buf, std::size_t host_size, int gpu_n) {
  std::vector<float*> dev_ptrs(gpu_n);
  std::vector<cudaStream_t> streams(gpu_n);
  std::vector<std::size_t> dev_sizes(gpu_n);
  const std::size_t base = host_size / gpu_n;
  const std::size_t extra = host_size % gpu_n;
  std::size_t offset = 0;
  for (int i = 0; i < gpu_n; ++i) {
    dev_sizes[i] = base + (static_cast<std::size_t>(i) < extra ? 1 : 0);
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    CUSH_CUDA_CHECK(cudaStreamCreate(&streams[i]));
    CUSH_CUDA_CHECK(cudaMalloc(&dev_ptrs[i], dev_sizes[i] * sizeof(float)));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(dev_ptrs[i], host_buf + offset, dev_sizes[i] * sizeof(float),
                                    cudaMemcpyHostToDevice, streams[i]));
    offset += dev_sizes[i];
  }
  exec_kernel(dev_ptrs.data(), dev_sizes.data(), streams.data(), gpu_n);
  offset = 0;
  for (int i = 0; i < gpu_n; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(host_recv_buf + offset, dev_ptrs[i], dev_sizes[i] * sizeof(float),
                                    cudaMemcpyDeviceToHost, streams[i]));
    offset += dev_sizes[i];
  }
  for (int i = 0; i < gpu_n; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
    CUSH_CUDA_CHECK(cudaFree(dev_ptrs[i]));
    CUSH_CUDA_CHECK(cudaStreamDestroy(streams[i]));
  }
}

}  // namespace listing
