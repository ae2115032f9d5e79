// Case "wave", single-GPU CUDA reference: the grid whole on one GPU with `radius` ghost layers;
// before every step the periodic halo of the current level, then the step in place over the
// older level. Fused (Options::steps = T > 1): steps x radius ghost layers, before every launch
// the halos of both levels, then T steps from the pair into the other pair.

#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "cush/error.hpp"
#include "wave.hpp"

namespace cases {
namespace wave {

Single::Single(Problem p, const Devices& gpus, Options options)
    : p_(p),
      l_(checked_leapfrog(p)),
      fused_(checked_fused_steps(p.order, options.steps)),
      h_(fused_ * static_cast<std::size_t>(l_.radius)),
      device_(gpus.cuda.at(0)) {
  const std::size_t stored = lead(h_) + padded_pitch(p.n, h_) * (p.n + 2 * h_) * (p.n + 2 * h_);
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamCreate(&stream_));
  for (std::size_t i = 0; i < (fused_ > 1 ? 4U : 2U); ++i) {
    CUSH_CUDA_CHECK(cudaMalloc(&levels_[i], stored * sizeof(double)));
    levels_[i] += lead(h_);  // the first ghost cell; rows' first owned cells 128-byte aligned
  }
}

Single::~Single() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  for (double* level : levels_)
    if (level != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(level - lead(h_)));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

void Single::upload(const double* prev, const double* cur) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  const cudaMemcpy3DParms a = slab_copy(p_.n, p_.n, prev, levels_[0], 0, p_.n, true, h_);
  const cudaMemcpy3DParms b = slab_copy(p_.n, p_.n, cur, levels_[1], 0, p_.n, true, h_);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&a, stream_));
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&b, stream_));
}

void Single::run(std::size_t steps) {
  const auto h = static_cast<long>(h_), n = static_cast<long>(p_.n);
  const Box box{h, h, h, n, n, n, static_cast<long>(padded_pitch(p_.n, h_)), n + 2 * h};
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  auto& [older, current, next_older, next] = levels_;
  for (std::size_t done = 0; done < steps;) {
    launch_periodic_halo(current, p_.n, p_.n, p_.n, stream_, h_);
    if (fused_ == 1) {
      launch_step(older, current, older, box, l_, stream_);
      std::swap(older, current);
      ++done;
    } else {
      const std::size_t t = std::min(fused_, steps - done);
      launch_periodic_halo(older, p_.n, p_.n, p_.n, stream_, h_);
      launch_steps(WaveLevels{older, current, next_older, next}, box, l_, t, stream_);
      std::swap(older, next_older);
      std::swap(current, next);
      done += t;
    }
  }
}

void Single::wait() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void Single::download(double* prev, double* cur) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  if (prev != nullptr) {
    const cudaMemcpy3DParms a = slab_copy(p_.n, p_.n, prev, levels_[0], 0, p_.n, false, h_);
    CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&a, stream_));
  }
  const cudaMemcpy3DParms b = slab_copy(p_.n, p_.n, cur, levels_[1], 0, p_.n, false, h_);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&b, stream_));
  wait();
}

}  // namespace wave
}  // namespace cases
