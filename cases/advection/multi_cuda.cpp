// Case "advection", multi-GPU raw CUDA: the grid split along z into one slab per GPU, each stored
// with one ghost layer. Per step every GPU fills its x and y ghosts (periodic within a plane),
// pushes its first and last planes into the ghost planes of the GPUs below and above
// (cudaMemcpyPeerAsync on a second stream), and updates its slab; with Schedule::overlap it
// updates the planes that need no ghost plane while the pushes run. Events order the GPUs. With
// T steps fused, all of that every T steps: T ghost layers, T planes pushed each way, one launch
// of the fused kernel.

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "advection.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

MultiCuda::MultiCuda(Grid g, const std::array<double, 27>& a, const Devices& devices, Options options)
    : g_(g), a_(checked_coefficients(a, options)), ids_(devices.cuda), gpus_(devices.count()), options_(options), h_(checked_fused_steps(options.steps)),
      planes_(gpus_), first_plane_(gpus_), compute_(gpus_), comm_(gpus_), ready_(gpus_), sent_(gpus_), u_(gpus_), v_(gpus_) {
  const int gpus = gpus_;
  if (g.nz < static_cast<std::size_t>(gpus) * h_)
    throw std::invalid_argument("cases::advection::MultiCuda: fewer z planes per GPU than options.steps (ghost planes)");
  const std::size_t plane = padded_pitch(g.nx, h_) * (g.ny + 2 * h_);
  std::size_t z = 0;
  for (int i = 0; i < gpus; ++i) {
    planes_[i] = g.nz / gpus + (static_cast<std::size_t>(i) < g.nz % gpus ? 1 : 0);
    first_plane_[i] = z;
    z += planes_[i];
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    for (int peer : {(i + gpus - 1) % gpus, (i + 1) % gpus}) {
      if (ids_[peer] == ids_[i]) continue;  // the same GPU: nothing to enable
      const cudaError_t e = cudaDeviceEnablePeerAccess(ids_[peer], 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CUSH_CUDA_CHECK(e);
    }
    CUSH_CUDA_CHECK(cudaStreamCreate(&compute_[i]));
    CUSH_CUDA_CHECK(cudaStreamCreate(&comm_[i]));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&ready_[i], cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&sent_[i], cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaMalloc(&u_[i], (lead(h_) + plane * (planes_[i] + 2 * h_)) * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMalloc(&v_[i], (lead(h_) + plane * (planes_[i] + 2 * h_)) * sizeof(double)));
    u_[i] += lead(h_);  // the first ghost cell; rows' first owned cells 128-byte aligned
    v_[i] += lead(h_);
  }
}

MultiCuda::~MultiCuda() {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(ids_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(u_[i] - lead(h_)));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(v_[i] - lead(h_)));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(ready_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(sent_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(compute_[i]));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(comm_[i]));
  }
}

void MultiCuda::upload(const double* in) {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    const cudaMemcpy3DParms p = slab_copy(g_.nx, g_.ny, in, u_[i], first_plane_[i], planes_[i], true, h_);
    CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&p, compute_[i]));
  }
}

void MultiCuda::step(std::size_t fused) {
  const std::size_t h = h_, plane = padded_pitch(g_.nx, h) * (g_.ny + 2 * h);
  const Coefficients c = kernel_coefficients(a_, options_.factorized);
  auto box = [&](std::size_t z0, std::size_t nz) {  // stored planes [z0, z0 + nz)
    return Box{static_cast<long>(h), static_cast<long>(h), static_cast<long>(z0), static_cast<long>(g_.nx),
               static_cast<long>(g_.ny), static_cast<long>(nz), static_cast<long>(padded_pitch(g_.nx, h)),
               static_cast<long>(g_.ny + 2 * h)};
  };
  for (int i = 0; i < gpus_; ++i) {  // x and y ghosts of the owned planes
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    launch_xy_halo(u_[i], g_.nx, g_.ny, h, planes_[i] + h, compute_[i], h);
    CUSH_CUDA_CHECK(cudaEventRecord(ready_[i], compute_[i]));
  }
  // The first h planes down, the last h up. A receiver last read the ghost planes written here
  // two cycles ago; this GPU's ready_ comes after its previous cycle, which waited for the
  // receiver's pushes, which came after the receiver's read: no further wait is needed.
  for (int i = 0; i < gpus_; ++i) {
    const int below = (i + gpus_ - 1) % gpus_;
    const int above = (i + 1) % gpus_;
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(comm_[i], ready_[i], 0));
    CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(u_[below] + (planes_[below] + h) * plane, ids_[below], u_[i] + h * plane, ids_[i],
                                        h * plane * sizeof(double), comm_[i]));
    CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(u_[above], ids_[above], u_[i] + planes_[i] * plane, ids_[i],
                                        h * plane * sizeof(double), comm_[i]));
    CUSH_CUDA_CHECK(cudaEventRecord(sent_[i], comm_[i]));
  }
  for (int i = 0; i < gpus_; ++i) {
    const std::size_t n = planes_[i];
    const bool overlap = options_.schedule == Schedule::overlap && n > 2 * fused;
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    if (overlap) launch_stencil_steps(u_[i], v_[i], box(h + fused, n - 2 * fused), c, fused, compute_[i]);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_[i], sent_[(i + gpus_ - 1) % gpus_], 0));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_[i], sent_[(i + 1) % gpus_], 0));
    if (overlap) {
      launch_stencil_steps(u_[i], v_[i], box(h, fused), c, fused, compute_[i]);
      launch_stencil_steps(u_[i], v_[i], box(h + n - fused, fused), c, fused, compute_[i]);
    } else {
      launch_stencil_steps(u_[i], v_[i], box(h, n), c, fused, compute_[i]);
    }
  }
  std::swap(u_, v_);
}

void MultiCuda::run(std::size_t steps) {
  for (std::size_t s = 0; s < steps; s += h_) step(std::min(h_, steps - s));
}

void MultiCuda::wait() {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(compute_[i]));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(comm_[i]));
  }
}

void MultiCuda::download(double* out) {
  for (int i = 0; i < gpus_; ++i) {
    CUSH_CUDA_CHECK(cudaSetDevice(ids_[i]));
    const cudaMemcpy3DParms p = slab_copy(g_.nx, g_.ny, out, u_[i], first_plane_[i], planes_[i], false, h_);
    CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&p, compute_[i]));
  }
  wait();
}

}  // namespace advection
}  // namespace cases
