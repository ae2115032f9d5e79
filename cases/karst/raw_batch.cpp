// Case "karst": RawBatch (raw_batch.hpp).
#include "raw_batch.hpp"

#include <cuda_runtime.h>

#include "cush/error.hpp"

namespace cases::karst {

void RawBatch::open(int cuda_device) {
  CUSH_CUDA_CHECK(cudaSetDevice(cuda_device));
  device = cuda_device;
  CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
}

void RawBatch::free_buffers() noexcept {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(members));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(forcing));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(observed));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(curves));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(misfits));
  members = nullptr;
  forcing = observed = curves = misfits = nullptr;
  work.reset();
  capacity = steps = 0;
}

void RawBatch::reserve(Model model, const Grid& grid, std::size_t count, std::size_t n) {
  if (count <= capacity && n == steps) return;
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream));
  free_buffers();
  CUSH_CUDA_CHECK(cudaMalloc(&members, count * sizeof(Groups)));
  CUSH_CUDA_CHECK(cudaMalloc(&forcing, 3 * n * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&observed, n * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&curves, count * n * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&misfits, count * sizeof(double)));
  work.emplace(device, model, grid, count);
  capacity = count;
  steps = n;
}

void RawBatch::release() noexcept {
  if (device < 0) return;
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
  if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
  free_buffers();
  if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
  stream = nullptr;
  device = -1;
}

}  // namespace cases::karst
