// Case "advection", single-GPU CUDA reference: the whole grid on one GPU with one ghost layer,
// the periodic halo filled on the GPU before every step (seed 000 §2.3.5). With T steps fused:
// T ghost layers, filled before every launch of T steps.

#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "advection.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

Single::Single(Grid g, const std::array<double, 27>& a, const Devices& gpus, Options options)
    : g_(g), a_(checked_coefficients(a, options)), factorized_(options.factorized), h_(checked_fused_steps(options.steps)),
      device_(gpus.cuda.at(0)) {
  const std::size_t stored = lead(h_) + padded_pitch(g.nx, h_) * (g.ny + 2 * h_) * (g.nz + 2 * h_);
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamCreate(&stream_));
  CUSH_CUDA_CHECK(cudaMalloc(&u_, stored * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&v_, stored * sizeof(double)));
  u_ += lead(h_);  // the first ghost cell; rows' first owned cells 128-byte aligned
  v_ += lead(h_);
}

Single::~Single() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(u_ - lead(h_)));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(v_ - lead(h_)));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

void Single::upload(const double* in) {
  const cudaMemcpy3DParms p = slab_copy(g_.nx, g_.ny, in, u_, 0, g_.nz, true, h_);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream_));
}

void Single::run(std::size_t steps) {
  const Coefficients c = kernel_coefficients(a_, factorized_);
  const auto h = static_cast<long>(h_);
  const Box box{h, h, h, static_cast<long>(g_.nx), static_cast<long>(g_.ny), static_cast<long>(g_.nz),
                static_cast<long>(padded_pitch(g_.nx, h_)), static_cast<long>(g_.ny + 2 * h_)};
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (std::size_t s = 0; s < steps; s += h_) {
    launch_periodic_halo(u_, g_.nx, g_.ny, g_.nz, stream_, h_);
    launch_stencil_steps(u_, v_, box, c, std::min(h_, steps - s), stream_);
    std::swap(u_, v_);
  }
}

void Single::wait() {
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void Single::download(double* out) {
  const cudaMemcpy3DParms p = slab_copy(g_.nx, g_.ny, out, u_, 0, g_.nz, false, h_);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream_));
  wait();
}

}  // namespace advection
}  // namespace cases
