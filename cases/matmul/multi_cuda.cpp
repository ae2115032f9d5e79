// Case "matmul", multi-GPU raw CUDA (seed 002 Listing A.1, made complete and pipelined like the
// cush variant): each GPU holds all of B and a block of rows of A and C. Its rows are cut into
// blocks; per GPU an upload, a compute and a download stream, joined by events, let block i + 1
// arrive while block i is multiplied and block i - 1 goes back.

#include <cuda_runtime.h>

#include "cush/error.hpp"
#include "matmul.hpp"

namespace cases {
namespace matmul {

template <class T>
MultiCuda<T>::MultiCuda(Dims d, const Devices& devices, std::size_t blocks)
    : d_(check_dims(d, "cases::matmul::MultiCuda")),
      ids_(devices.cuda),
      gpus_(devices.count()),
      blocks_(blocks > 0 ? blocks : block_count(d, gpus_, sizeof(T))),
      rows_(gpus_),
      first_row_(gpus_),
      up_(gpus_),
      compute_(gpus_),
      down_(gpus_),
      uploaded_(gpus_),
      computed_(gpus_),
      a_(gpus_),
      b_(gpus_),
      c_(gpus_) {
  std::size_t row = 0;
  for (int g = 0; g < gpus_; ++g) {
    rows_[g] = d.m / gpus_ + (static_cast<std::size_t>(g) < d.m % gpus_ ? 1 : 0);
    first_row_[g] = row;
    row += rows_[g];
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
    CUSH_CUDA_CHECK(cudaStreamCreate(&up_[g]));
    CUSH_CUDA_CHECK(cudaStreamCreate(&compute_[g]));
    CUSH_CUDA_CHECK(cudaStreamCreate(&down_[g]));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&uploaded_[g], cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&computed_[g], cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaMalloc(&a_[g], rows_[g] * d.n * sizeof(T)));
    CUSH_CUDA_CHECK(cudaMalloc(&b_[g], d.n * d.p * sizeof(T)));
    CUSH_CUDA_CHECK(cudaMalloc(&c_[g], rows_[g] * d.p * sizeof(T)));
  }
}

template <class T>
MultiCuda<T>::~MultiCuda() {
  for (int g = 0; g < gpus_; ++g) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(ids_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(a_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(b_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(c_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(uploaded_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(computed_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(up_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(compute_[g]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(down_[g]));
  }
}

template <class T>
std::size_t MultiCuda<T>::block_first(int g, std::size_t i) const {
  return i * (rows_[g] / blocks_) + std::min(i, rows_[g] % blocks_);
}

template <class T>
std::size_t MultiCuda<T>::block_rows(int g, std::size_t i) const {
  return rows_[g] / blocks_ + (i < rows_[g] % blocks_ ? 1 : 0);
}

template <class T>
void MultiCuda<T>::product(int g, std::size_t block) {
  const std::size_t first = block_first(g, block);
  gemm_rows(compute_[g], g, block_rows(g, block), d_, a_[g] + first * d_.n, b_[g], c_[g] + first * d_.p);
}

template <class T>
void MultiCuda<T>::run(const T* a, const T* b, T* c) {
  for (int g = 0; g < gpus_; ++g) {  // the uploads overwrite what earlier products may still read
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
    CUSH_CUDA_CHECK(cudaEventRecord(computed_[g], compute_[g]));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(up_[g], computed_[g], 0));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(b_[g], b, d_.n * d_.p * sizeof(T), cudaMemcpyHostToDevice, up_[g]));
  }
  for (std::size_t i = 0; i < blocks_; ++i) {
    for (int g = 0; g < gpus_; ++g) {
      const std::size_t first = block_first(g, i);
      const std::size_t rows = block_rows(g, i);
      const std::size_t host_row = first_row_[g] + first;
      CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
      CUSH_CUDA_CHECK(cudaMemcpyAsync(a_[g] + first * d_.n, a + host_row * d_.n, rows * d_.n * sizeof(T),
                                      cudaMemcpyHostToDevice, up_[g]));
      CUSH_CUDA_CHECK(cudaEventRecord(uploaded_[g], up_[g]));
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_[g], uploaded_[g], 0));
      product(g, i);
      CUSH_CUDA_CHECK(cudaEventRecord(computed_[g], compute_[g]));
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(down_[g], computed_[g], 0));
      CUSH_CUDA_CHECK(cudaMemcpyAsync(c + host_row * d_.p, c_[g] + first * d_.p, rows * d_.p * sizeof(T),
                                      cudaMemcpyDeviceToHost, down_[g]));
    }
  }
  for (int g = 0; g < gpus_; ++g) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(down_[g]));
  }
}

template <class T>
void MultiCuda<T>::multiply() {
  for (int g = 0; g < gpus_; ++g) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
    for (std::size_t i = 0; i < blocks_; ++i)
      product(g, i);
  }
}

template <class T>
void MultiCuda<T>::wait() {
  for (int g = 0; g < gpus_; ++g) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(compute_[g]));
  }
}

template <class T>
void MultiCuda<T>::download(T* c) {
  for (int g = 0; g < gpus_; ++g) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
    CUSH_CUDA_CHECK(cudaEventRecord(computed_[g], compute_[g]));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(down_[g], computed_[g], 0));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(c + first_row_[g] * d_.p, c_[g], rows_[g] * d_.p * sizeof(T),
                                    cudaMemcpyDeviceToHost, down_[g]));
  }
  for (int g = 0; g < gpus_; ++g) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[g]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(down_[g]));
  }
}

template class MultiCuda<float>;
template class MultiCuda<double>;

}  // namespace matmul
}  // namespace cases
