// Case "matmul", multi-GPU raw CUDA (seed 002 Listing A.1, made complete): each GPU gets a block
// of rows of A and C and all of B, computes its rows of C with cuBLAS, and sends them back.

#include <cuda_runtime.h>

#include "cush/error.hpp"
#include "matmul.hpp"

namespace cases {
namespace matmul {

template <class T>
MultiCuda<T>::MultiCuda(const T* a, const T* b, Dims d, int gpus)
    : d_(check_dims(d, "cases::matmul::MultiCuda")), gpus_(gpus), rows_(gpus), first_row_(gpus), streams_(gpus), a_(gpus), b_(gpus), c_(gpus) {
  std::size_t row = 0;
  for (int i = 0; i < gpus; ++i) {
    rows_[i] = d.m / gpus + (static_cast<std::size_t>(i) < d.m % gpus ? 1 : 0);
    first_row_[i] = row;
    row += rows_[i];
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    CUSH_CUDA_CHECK(cudaStreamCreate(&streams_[i]));
    CUSH_CUDA_CHECK(cudaMalloc(&a_[i], rows_[i] * d.n * sizeof(T)));
    CUSH_CUDA_CHECK(cudaMalloc(&b_[i], d.n * d.p * sizeof(T)));
    CUSH_CUDA_CHECK(cudaMalloc(&c_[i], rows_[i] * d.p * sizeof(T)));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(a_[i], a + first_row_[i] * d.n, rows_[i] * d.n * sizeof(T),
                                    cudaMemcpyHostToDevice, streams_[i]));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(b_[i], b, d.n * d.p * sizeof(T), cudaMemcpyHostToDevice, streams_[i]));
  }
}

template <class T>
MultiCuda<T>::~MultiCuda() {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(i));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(streams_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(a_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(b_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(c_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(streams_[i]));
  }
}

template <class T>
void MultiCuda<T>::multiply() {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    gemm_rows(streams_[i], rows_[i], d_, a_[i], b_[i], c_[i]);
  }
}

template <class T>
void MultiCuda<T>::wait() {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(streams_[i]));
  }
}

template <class T>
void MultiCuda<T>::download(T* c) {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(i));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(c + first_row_[i] * d_.p, c_[i], rows_[i] * d_.p * sizeof(T),
                                    cudaMemcpyDeviceToHost, streams_[i]));
  }
  wait();
}

template class MultiCuda<float>;
template class MultiCuda<double>;

}  // namespace matmul
}  // namespace cases
