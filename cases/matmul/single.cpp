// Case "matmul", single-GPU CUDA reference: C = A B with cuBLAS on one GPU.

#include <cuda_runtime.h>

#include "cush/error.hpp"
#include "matmul.hpp"

namespace cases {
namespace matmul {

template <class T>
Single<T>::Single(Dims d, const Devices& gpus, std::size_t /*blocks*/)
    : d_(check_dims(d, "cases::matmul::Single")), device_(gpus.cuda.at(0)) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamCreate(&stream_));
  CUSH_CUDA_CHECK(cudaMalloc(&a_, d.m * d.n * sizeof(T)));
  CUSH_CUDA_CHECK(cudaMalloc(&b_, d.n * d.p * sizeof(T)));
  CUSH_CUDA_CHECK(cudaMalloc(&c_, d.m * d.p * sizeof(T)));
}

template <class T>
Single<T>::~Single() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(a_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(b_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(c_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

template <class T>
void Single<T>::run(const T* a, const T* b, T* c) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(a_, a, d_.m * d_.n * sizeof(T), cudaMemcpyHostToDevice, stream_));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(b_, b, d_.n * d_.p * sizeof(T), cudaMemcpyHostToDevice, stream_));
  gemm_rows(stream_, 0, d_.m, d_, a_, b_, c_);
  CUSH_CUDA_CHECK(cudaMemcpyAsync(c, c_, d_.m * d_.p * sizeof(T), cudaMemcpyDeviceToHost, stream_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
void Single<T>::multiply() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  gemm_rows(stream_, 0, d_.m, d_, a_, b_, c_);
}

template <class T>
void Single<T>::wait() {
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
void Single<T>::download(T* c) {
  CUSH_CUDA_CHECK(cudaMemcpyAsync(c, c_, d_.m * d_.p * sizeof(T), cudaMemcpyDeviceToHost, stream_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template class Single<float>;
template class Single<double>;

}  // namespace matmul
}  // namespace cases
