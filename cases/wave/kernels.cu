// Case "wave": the GPU kernels shared by every variant (kernels.hpp).

#include "kernels.hpp"

#include <algorithm>

#include "coefficients.hpp"
#include "cush/error.hpp"

namespace cases {
namespace wave {

namespace {

// One thread per (x, y) column of the box, marching a run of z planes. The x and y neighbours come
// through the read-only cache; every node is step_host's chain of FMAs.
template <int R>
__global__ void leapfrog_kernel(const double* prev, const double* __restrict__ cur, double* next, Box box, Leapfrog l,
                                int run) {
  const long x = box.x0 + blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long y = box.y0 + blockIdx.y * static_cast<long>(blockDim.y) + threadIdx.y;
  if (x >= box.x0 + box.nx || y >= box.y0 + box.ny) return;
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sy = box.pitch_x, sz = box.pitch_x * box.pitch_y;
  for (long z = z_begin; z < z_end; ++z) {
    const long at = z * sz + y * sy + x;
    double sum = 0;
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      sum = fma(l.c[k], __ldg(cur + at + k) + __ldg(cur + at - k), sum);
      sum = fma(l.c[k], __ldg(cur + at + k * sy) + __ldg(cur + at - k * sy), sum);
      sum = fma(l.c[k], __ldg(cur + at + k * sz) + __ldg(cur + at - k * sz), sum);
    }
    next[at] = fma(l.courant2, sum, fma(l.centre, __ldg(cur + at), -prev[at]));
  }
}

// The periodic source of stored index i on an axis of n owned cells after h ghost cells.
__device__ inline long wrapped(long i, long n, long h) {
  long r = i - h;
  if (r < 0) r += n;
  else if (r >= n) r -= n;
  if (r < 0 || r >= n) r = (r % n + n) % n;
  return r + h;
}

// Every ghost of an n^3 grid held whole with h layers, from the owned cell it stands for.
__global__ void periodic_halo_kernel(double* u, long n, long h, long pitch) {
  const long p = n + 2 * h;
  const long z_faces = 2 * h * p * p, y_faces = 2 * h * p * n, x_faces = 2 * h * n * n;
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < z_faces + y_faces + x_faces;
       t += static_cast<long>(gridDim.x) * blockDim.x) {
    long i, j, k;
    if (t < z_faces) {
      const long layer = t / (p * p), r = t % (p * p);
      k = layer < h ? layer : n + layer;
      i = r % p;
      j = r / p;
    } else if (t < z_faces + y_faces) {
      const long r = t - z_faces, layer = r / (p * n), q = r % (p * n);
      j = layer < h ? layer : n + layer;
      i = q % p;
      k = q / p + h;
    } else {
      const long r = t - z_faces - y_faces, layer = r / (n * n), q = r % (n * n);
      i = layer < h ? layer : n + layer;
      j = q % n + h;
      k = q / n + h;
    }
    u[(k * p + j) * pitch + i] = u[(wrapped(k, n, h) * p + wrapped(j, n, h)) * pitch + wrapped(i, n, h)];
  }
}

// The x and y ghosts of the stored planes [z_begin, z_begin + planes) of a slab of n x n planes.
__global__ void xy_halo_kernel(double* u, long n, long z_begin, long planes, long h, long pitch) {
  const long p = n + 2 * h;
  const long rows = 2 * h * p, per_plane = rows + 2 * h * n;
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < per_plane * planes;
       t += static_cast<long>(gridDim.x) * blockDim.x) {
    const long k = z_begin + t / per_plane, r = t % per_plane;
    long i, j;
    if (r < rows) {
      const long layer = r / p;
      j = layer < h ? layer : n + layer;
      i = r % p;
    } else {
      const long layer = (r - rows) / n;
      i = layer < h ? layer : n + layer;
      j = (r - rows) % n + h;
    }
    u[(k * p + j) * pitch + i] = u[(k * p + wrapped(j, n, h)) * pitch + wrapped(i, n, h)];
  }
}

unsigned blocks_for(std::size_t total) { return static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 4096)); }

}  // namespace

Leapfrog leapfrog(int order, double courant) {
  check_courant(order, courant);
  const std::span<const double> c = coefficients(order);
  Leapfrog l;
  l.radius = static_cast<int>(c.size()) - 1;
  for (std::size_t k = 0; k < c.size(); ++k) l.c[k] = c[k];
  l.courant2 = courant * courant;
  l.centre = 2 + 6 * c[0] * l.courant2;
  return l;
}

void launch_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                 cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const dim3 block(32, 8);
  const long columns = ((box.nx + 31) / 32) * ((box.ny + 7) / 8);
  long run = 64;
  while (run > 1 && columns * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + 31) / 32), static_cast<unsigned>((box.ny + 7) / 8),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  switch (l.radius) {
    case 1: leapfrog_kernel<1><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
    case 2: leapfrog_kernel<2><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
    case 3: leapfrog_kernel<3><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
    default: leapfrog_kernel<4><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

cudaMemcpy3DParms slab_copy(std::size_t n, const double* host, double* dev, std::size_t first, std::size_t planes,
                            bool to_device, std::size_t h) {
  cudaMemcpy3DParms p{};
  // cudaPitchedPtr has no const form; a device-to-host copy writes through it, as it should.
  const cudaPitchedPtr hp = make_cudaPitchedPtr(const_cast<double*>(host) + first * n * n, n * sizeof(double), n, n);
  const cudaPitchedPtr dp = make_cudaPitchedPtr(dev, padded_pitch(n, h) * sizeof(double), n + 2 * h, n + 2 * h);
  p.srcPtr = to_device ? hp : dp;
  p.dstPtr = to_device ? dp : hp;
  (to_device ? p.dstPos : p.srcPos) = make_cudaPos(h * sizeof(double), h, h);
  p.extent = make_cudaExtent(n * sizeof(double), n, planes);
  p.kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return p;
}

void launch_xy_halo(double* u, std::size_t n, std::size_t z_begin, std::size_t z_end, std::size_t h,
                    cudaStream_t stream) {
  if (z_end <= z_begin) return;
  xy_halo_kernel<<<blocks_for(2 * h * (2 * n + 2 * h) * (z_end - z_begin)), 256, 0, stream>>>(
      u, static_cast<long>(n), static_cast<long>(z_begin), static_cast<long>(z_end - z_begin), static_cast<long>(h),
      static_cast<long>(padded_pitch(n, h)));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_periodic_halo(double* u, std::size_t n, std::size_t h, cudaStream_t stream) {
  const std::size_t p = n + 2 * h;
  periodic_halo_kernel<<<blocks_for(2 * h * (p * p + p * n + n * n)), 256, 0, stream>>>(
      u, static_cast<long>(n), static_cast<long>(h), static_cast<long>(padded_pitch(n, h)));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wave
}  // namespace cases
