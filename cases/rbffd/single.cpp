// Case "rbffd", single-GPU reference: the whole matrix on one GPU, four fused stages a step.

#include <cuda_runtime.h>

#include <stdexcept>
#include <utility>

#include "cush/error.hpp"
#include "rbffd.hpp"

namespace cases {
namespace rbffd {

namespace {
Ell whole_matrix(const Problem& p) {
  if (p.a == nullptr || !(p.dt > 0)) throw std::invalid_argument("cases::rbffd: a problem needs a matrix and dt > 0");
  const std::vector<std::int32_t> cols = narrow_columns(p.a->cols);
  return ell_from_csr(p.a->row_ptr, cols, p.a->values);
}
}  // namespace

Single::Single(const Problem& p, const Devices& gpus, Options)
    : n_(p.a ? p.a->rows() : 0), dt_(p.dt), device_(gpus.cuda.at(0)) {
  const Ell a = whole_matrix(p);
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamCreate(&stream_));
  a_ = std::make_unique<DeviceEll>(a, device_);
  for (double** buffer : {&x_[0], &x_[1], &u_, &acc_}) CUSH_CUDA_CHECK(cudaMalloc(buffer, n_ * sizeof(double)));
}

Single::~Single() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  for (double* buffer : {x_[0], x_[1], u_, acc_}) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(buffer));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

void Single::upload(const double* u0) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(u_, u0, n_ * sizeof(double), cudaMemcpyHostToDevice, stream_));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(x_[0], u_, n_ * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
}

void Single::run(std::size_t steps) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (std::size_t s = 0; s < steps; ++s)
    for (int stage = 0; stage < 4; ++stage) {
      launch_stage(a_->view(), 0, n_, x_[0], x_[1], u_, acc_, stage, dt_, stream_);
      std::swap(x_[0], x_[1]);
    }
}

void Single::wait() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void Single::download(double* u) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(u, u_, n_ * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace rbffd
}  // namespace cases
