// Case "advection", single-GPU CUDA reference: the whole grid on device 0 with one ghost layer,
// the periodic halo filled on the GPU before every step (seed 000 §2.3.5).

#include <cuda_runtime.h>

#include <utility>

#include "advection.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

namespace {
// Host array (nx x ny x nz, x fastest) <-> the interior of a stored block with one ghost layer.
cudaMemcpy3DParms interior_copy(Grid g, double* host, double* dev, bool to_device) {
  cudaMemcpy3DParms p{};
  const cudaPitchedPtr h = make_cudaPitchedPtr(host, g.nx * sizeof(double), g.nx, g.ny);
  const cudaPitchedPtr d = make_cudaPitchedPtr(dev, (g.nx + 2) * sizeof(double), g.nx + 2, g.ny + 2);
  p.srcPtr = to_device ? h : d;
  p.dstPtr = to_device ? d : h;
  (to_device ? p.dstPos : p.srcPos) = make_cudaPos(sizeof(double), 1, 1);
  p.extent = make_cudaExtent(g.nx * sizeof(double), g.ny, g.nz);
  p.kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return p;
}
}  // namespace

void single(const double* in, double* out, Grid g, const std::array<double, 27>& a, std::size_t steps, int /*gpus*/) {
  const Coefficients c = kernel_coefficients(a);
  const std::size_t stored = (g.nx + 2) * (g.ny + 2) * (g.nz + 2);
  const Box box{1, 1, 1, static_cast<long>(g.nx), static_cast<long>(g.ny), static_cast<long>(g.nz),
                static_cast<long>(g.nx + 2), static_cast<long>(g.ny + 2)};
  double* u = nullptr;
  double* v = nullptr;
  cudaStream_t stream = nullptr;
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  CUSH_CUDA_CHECK(cudaStreamCreate(&stream));
  CUSH_CUDA_CHECK(cudaMalloc(&u, stored * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&v, stored * sizeof(double)));
  const cudaMemcpy3DParms up = interior_copy(g, const_cast<double*>(in), u, true);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&up, stream));
  for (std::size_t s = 0; s < steps; ++s) {
    launch_periodic_halo(u, g.nx, g.ny, g.nz, stream);
    launch_stencil(u, v, box, c, stream);
    std::swap(u, v);
  }
  const cudaMemcpy3DParms down = interior_copy(g, out, u, false);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&down, stream));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSH_CUDA_CHECK(cudaFree(u));
  CUSH_CUDA_CHECK(cudaFree(v));
  CUSH_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace advection
}  // namespace cases
