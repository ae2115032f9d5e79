// Case "wave", single-GPU CUDA reference: the grid whole on one GPU with `radius` ghost layers;
// before every step the periodic halo of the current level, then the step in place over the
// older level.

#include <cuda_runtime.h>

#include <utility>

#include "cush/error.hpp"
#include "wave.hpp"

namespace cases {
namespace wave {

Single::Single(Problem p, const Devices& gpus, Options /*options*/)
    : p_(p), l_(checked_leapfrog(p)), h_(static_cast<std::size_t>(l_.radius)), device_(gpus.cuda.at(0)) {
  const std::size_t stored = lead(h_) + padded_pitch(p.n, h_) * (p.n + 2 * h_) * (p.n + 2 * h_);
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamCreate(&stream_));
  CUSH_CUDA_CHECK(cudaMalloc(&older_, stored * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&current_, stored * sizeof(double)));
  older_ += lead(h_);  // the first ghost cell; rows' first owned cells 128-byte aligned
  current_ += lead(h_);
}

Single::~Single() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(older_ - lead(h_)));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(current_ - lead(h_)));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

void Single::upload(const double* prev, const double* cur) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  const cudaMemcpy3DParms a = slab_copy(p_.n, prev, older_, 0, p_.n, true, h_);
  const cudaMemcpy3DParms b = slab_copy(p_.n, cur, current_, 0, p_.n, true, h_);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&a, stream_));
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&b, stream_));
}

void Single::run(std::size_t steps) {
  const auto h = static_cast<long>(h_), n = static_cast<long>(p_.n);
  const Box box{h, h, h, n, n, n, static_cast<long>(padded_pitch(p_.n, h_)), n + 2 * h};
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (std::size_t s = 0; s < steps; ++s) {
    launch_periodic_halo(current_, p_.n, h_, stream_);
    launch_step(older_, current_, older_, box, l_, stream_);
    std::swap(older_, current_);
  }
}

void Single::wait() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void Single::download(double* prev, double* cur) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  if (prev != nullptr) {
    const cudaMemcpy3DParms a = slab_copy(p_.n, prev, older_, 0, p_.n, false, h_);
    CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&a, stream_));
  }
  const cudaMemcpy3DParms b = slab_copy(p_.n, cur, current_, 0, p_.n, false, h_);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&b, stream_));
  wait();
}

}  // namespace wave
}  // namespace cases
