// Case "wave", multi-GPU raw CUDA: the grid split along z into one slab per GPU, each level stored
// with `radius` ghost layers. Per step every GPU fills the x and y ghosts of its current level,
// pushes its first and last `radius` planes into the ghost planes of the GPUs below and above
// (cudaMemcpyPeerAsync on a second stream), and steps its slab in place over the older level;
// with Schedule::overlap it steps the planes that need no ghost plane while the pushes run.
// Fused (Options::steps = T > 1): T radius ghost layers, both levels' x/y ghosts filled and planes
// pushed, and T steps a launch out of place into the other pair of levels.

#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "cush/error.hpp"
#include "wave.hpp"

namespace cases {
namespace wave {

MultiCuda::MultiCuda(Problem p, const Devices& devices, Options options)
    : p_(p), l_(checked_leapfrog(p)), fused_(checked_fused_steps(p.order, options.steps)),
      h_(fused_ * static_cast<std::size_t>(l_.radius)), ids_(devices.cuda), gpus_(devices.count()), options_(options),
      planes_(gpus_), first_plane_(gpus_), compute_(gpus_), comm_(gpus_), ready_(gpus_), sent_(gpus_), older_(gpus_),
      current_(gpus_), next_older_(fused_ > 1 ? gpus_ : 0), next_(fused_ > 1 ? gpus_ : 0) {
  if (p.n < static_cast<std::size_t>(gpus_) * h_)
    throw std::invalid_argument("cases::wave::MultiCuda: fewer z planes per GPU than the ghost layers (steps x radius)");
  const std::size_t plane = padded_pitch(p.n, h_) * (p.n + 2 * h_);
  std::size_t z = 0;
  for (int i = 0; i < gpus_; ++i) {
    planes_[i] = p.n / gpus_ + (static_cast<std::size_t>(i) < p.n % gpus_ ? 1 : 0);
    first_plane_[i] = z;
    z += planes_[i];
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    for (int peer : {(i + gpus_ - 1) % gpus_, (i + 1) % gpus_}) {
      if (ids_[peer] == ids_[i]) continue;  // the same GPU: nothing to enable
      const cudaError_t e = cudaDeviceEnablePeerAccess(ids_[peer], 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CUSH_CUDA_CHECK(e);
    }
    CUSH_CUDA_CHECK(cudaStreamCreate(&compute_[i]));
    CUSH_CUDA_CHECK(cudaStreamCreate(&comm_[i]));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&ready_[i], cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&sent_[i], cudaEventDisableTiming));
    for (std::vector<double*>* level : {&older_, &current_, &next_older_, &next_}) {
      if (level->empty()) continue;
      CUSH_CUDA_CHECK(cudaMalloc(&(*level)[i], (lead(h_) + plane * (planes_[i] + 2 * h_)) * sizeof(double)));
      (*level)[i] += lead(h_);  // the first ghost cell; rows' first owned cells 128-byte aligned
    }
  }
}

MultiCuda::~MultiCuda() {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(ids_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
    for (std::vector<double*>* level : {&older_, &current_, &next_older_, &next_})
      if (!level->empty()) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree((*level)[i] - lead(h_)));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(ready_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(sent_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(compute_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(comm_[i]));
  }
}

void MultiCuda::upload(const double* prev, const double* cur) {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    const cudaMemcpy3DParms a = slab_copy(p_.n, p_.n, prev, older_[i], first_plane_[i], planes_[i], true, h_);
    const cudaMemcpy3DParms b = slab_copy(p_.n, p_.n, cur, current_[i], first_plane_[i], planes_[i], true, h_);
    CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&a, compute_[i]));
    CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&b, compute_[i]));
  }
}

void MultiCuda::step(std::size_t steps) {
  const std::size_t h = h_, plane = padded_pitch(p_.n, h) * (p_.n + 2 * h);
  const auto n = static_cast<long>(p_.n);
  auto box = [&](std::size_t z0, std::size_t nz) {  // stored planes [z0, z0 + nz)
    return Box{static_cast<long>(h), static_cast<long>(h), static_cast<long>(z0), n, n, static_cast<long>(nz),
               static_cast<long>(padded_pitch(p_.n, h)), n + 2 * static_cast<long>(h)};
  };
  const bool fused = fused_ > 1;
  for (int i = 0; i < gpus_; ++i) {  // x and y ghosts of the current level's owned planes (fused: both levels)
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    launch_xy_halo(current_[i], p_.n, p_.n, h, planes_[i] + h, compute_[i], h);
    if (fused) launch_xy_halo(older_[i], p_.n, p_.n, h, planes_[i] + h, compute_[i], h);
    CUSH_CUDA_CHECK(cudaEventRecord(ready_[i], compute_[i]));
  }
  // The first h planes down, the last h up. A receiver last read the ghost planes written here two
  // steps ago (they belong to the level, or fused the pair, that was current then); this GPU's
  // ready_ comes after its previous step, which waited for the receiver's pushes, which came after
  // the receiver's read.
  for (int i = 0; i < gpus_; ++i) {
    const int below = (i + gpus_ - 1) % gpus_;
    const int above = (i + 1) % gpus_;
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(comm_[i], ready_[i], 0));
    for (std::vector<double*>* level : {&current_, &older_}) {
      if (level == &older_ && !fused) break;
      const std::vector<double*>& u = *level;
      CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(u[below] + (planes_[below] + h) * plane, ids_[below], u[i] + h * plane,
                                          ids_[i], h * plane * sizeof(double), comm_[i]));
      CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(u[above], ids_[above], u[i] + planes_[i] * plane, ids_[i],
                                          h * plane * sizeof(double), comm_[i]));
    }
    CUSH_CUDA_CHECK(cudaEventRecord(sent_[i], comm_[i]));
  }
  auto update = [&](int i, const Box& b) {  // one step in place, or `steps` into the other pair
    if (fused) launch_steps(WaveLevels{older_[i], current_[i], next_older_[i], next_[i]}, b, l_, steps, compute_[i]);
    else launch_step(older_[i], current_[i], older_[i], b, l_, compute_[i]);
  };
  for (int i = 0; i < gpus_; ++i) {
    const std::size_t planes = planes_[i];
    const bool overlap = options_.schedule == Schedule::overlap && planes > 2 * h;
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    if (overlap) update(i, box(2 * h, planes - 2 * h));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_[i], sent_[(i + gpus_ - 1) % gpus_], 0));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_[i], sent_[(i + 1) % gpus_], 0));
    if (overlap) {
      update(i, box(h, h));
      update(i, box(planes, h));
    } else {
      update(i, box(h, planes));
    }
  }
  if (fused) {
    std::swap(older_, next_older_);
    std::swap(current_, next_);
  } else {
    std::swap(older_, current_);
  }
}

void MultiCuda::run(std::size_t steps) {
  for (std::size_t done = 0; done < steps; done += std::min(fused_, steps - done)) step(std::min(fused_, steps - done));
}

void MultiCuda::wait() {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(compute_[i]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(comm_[i]));
  }
}

void MultiCuda::download(double* prev, double* cur) {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    if (prev != nullptr) {
      const cudaMemcpy3DParms a = slab_copy(p_.n, p_.n, prev, older_[i], first_plane_[i], planes_[i], false, h_);
      CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&a, compute_[i]));
    }
    const cudaMemcpy3DParms b = slab_copy(p_.n, p_.n, cur, current_[i], first_plane_[i], planes_[i], false, h_);
    CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&b, compute_[i]));
  }
  wait();
}

}  // namespace wave
}  // namespace cases
