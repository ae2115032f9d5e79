// Case "advection": the GPU kernels shared by every variant. A block of the grid is stored with
// `h` ghost layers on every side (x fastest); the stencil reads one layer around the cells it
// updates.

#include <algorithm>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "stencil.cuh"

namespace cases {
namespace advection {

namespace {

// Every ghost cell of a block with one ghost layer, on a grid periodic on every axis and held by
// one block: each takes the interior cell it stands for, so all can be filled at once. Rows are
// `pitch` cells apart. On padded rows it takes 0.22 ms at 1024^3 (ncu), on packed rows 0.12: there
// an x ghost's sector also holds the owned cells read as sources, so it is already cached when
// the ghost is stored; beside padding it must be read from memory first. (A rewrite with a face
// per blockIdx.z took the same 0.22 ms on padded rows.)
__global__ void periodic_halo_kernel(double* u, long nx, long ny, long nz, long pitch) {
  const long px = nx + 2, py = ny + 2;
  const long z_faces = 2 * px * py, y_faces = 2 * px * nz, x_faces = 2 * ny * nz;
  const long total = z_faces + y_faces + x_faces;
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<long>(gridDim.x) * blockDim.x) {
    long i, j, k;
    if (t < z_faces) {  // planes k = 0 and k = nz + 1, whole
      const long r = t % (px * py);
      k = t < px * py ? 0 : nz + 1;
      i = r % px;
      j = r / px;
    } else if (t < z_faces + y_faces) {  // rows j = 0 and j = ny + 1 of the inner planes
      const long r = t - z_faces;
      const long half = px * nz;
      j = r < half ? 0 : ny + 1;
      i = (r % half) % px;
      k = (r % half) / px + 1;
    } else {  // cells i = 0 and i = nx + 1 of the inner rows
      const long r = t - z_faces - y_faces;
      const long half = ny * nz;
      i = r < half ? 0 : nx + 1;
      j = (r % half) % ny + 1;
      k = (r % half) / ny + 1;
    }
    const long si = i == 0 ? nx : (i == nx + 1 ? 1 : i);
    const long sj = j == 0 ? ny : (j == ny + 1 ? 1 : j);
    const long sk = k == 0 ? nz : (k == nz + 1 ? 1 : k);
    u[(k * py + j) * pitch + i] = u[(sk * py + sj) * pitch + si];
  }
}

// The x and y ghosts of the stored planes [z_begin, z_end): per plane the rows j = 0 and
// j = ny + 1 (whole, corners included) and the cells i = 0, i = nx + 1 of the inner rows. A row
// ghost's source is an owned row, and the corner sources are owned cells, so there is no order.
__global__ void xy_halo_kernel(double* u, long nx, long ny, long z_begin, long planes, long pitch) {
  const long px = nx + 2, py = ny + 2;
  const long per_plane = 2 * px + 2 * ny;
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < per_plane * planes;
       t += static_cast<long>(gridDim.x) * blockDim.x) {
    const long k = z_begin + t / per_plane;
    const long r = t % per_plane;
    long i, j;
    if (r < 2 * px) {
      j = r < px ? 0 : ny + 1;
      i = r % px;
    } else {
      const long q = r - 2 * px;
      i = q < ny ? 0 : nx + 1;
      j = q % ny + 1;
    }
    const long si = i == 0 ? nx : (i == nx + 1 ? 1 : i);
    const long sj = j == 0 ? ny : (j == ny + 1 ? 1 : j);
    u[(k * py + j) * pitch + i] = u[(k * py + sj) * pitch + si];
  }
}

// The stencil on a box too thin for tiles (the faces of an overlapped step's boundary): a thread
// per cell, 27 loads (mostly cache hits) and the tile kernel's order of FMAs, so the same bits.
__global__ void thin_stencil_kernel(const double* __restrict__ in, double* __restrict__ out, Box box, Coefficients c) {
  const unsigned cells = static_cast<unsigned>(box.nx * box.ny * box.nz);
  const long sz = box.pitch_x * box.pitch_y;
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < cells; t += gridDim.x * blockDim.x) {
    const unsigned x = t % static_cast<unsigned>(box.nx), r = t / static_cast<unsigned>(box.nx);
    const unsigned y = r % static_cast<unsigned>(box.ny), z = r / static_cast<unsigned>(box.ny);
    const long at = (box.z0 + z) * sz + (box.y0 + y) * box.pitch_x + box.x0 + x;
    double sum = 0;
#pragma unroll
    for (int q = 0; q < 27; ++q)
      sum = fma(c.a[q], __ldg(in + at + (q / 9 - 1) * sz + (q / 3 % 3 - 1) * box.pitch_x + (q % 3 - 1)), sum);
    out[at] = sum;
  }
}

}  // namespace

cudaMemcpy3DParms slab_copy(std::size_t nx, std::size_t ny, const double* host, double* dev, std::size_t first,
                            std::size_t planes, bool to_device) {
  cudaMemcpy3DParms p{};
  // cudaPitchedPtr has no const form; a device-to-host copy writes through it, as it should.
  const cudaPitchedPtr h = make_cudaPitchedPtr(const_cast<double*>(host) + first * nx * ny, nx * sizeof(double), nx, ny);
  const cudaPitchedPtr d = make_cudaPitchedPtr(dev, padded_pitch(nx) * sizeof(double), nx + 2, ny + 2);
  p.srcPtr = to_device ? h : d;
  p.dstPtr = to_device ? d : h;
  (to_device ? p.dstPos : p.srcPos) = make_cudaPos(sizeof(double), 1, 1);
  p.extent = make_cudaExtent(nx * sizeof(double), ny, planes);
  p.kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return p;
}

void launch_xy_halo(double* u, std::size_t nx, std::size_t ny, std::size_t z_begin, std::size_t z_end,
                    cudaStream_t stream) {
  if (z_end <= z_begin) return;
  const std::size_t total = (2 * (nx + 2) + 2 * ny) * (z_end - z_begin);
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 4096));
  xy_halo_kernel<<<blocks, 256, 0, stream>>>(u, static_cast<long>(nx), static_cast<long>(ny),
                                             static_cast<long>(z_begin), static_cast<long>(z_end - z_begin),
                                             static_cast<long>(padded_pitch(nx)));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_stencil(const double* in, double* out, const Box& box, const Coefficients& c, cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const long cells = box.nx * box.ny * box.nz;
  if ((box.nx < kStencilConfig::kX / 4 || box.ny < kStencilConfig::kRows / 4) && cells < (1L << 31)) {
    // Tiles would load far more cells than they update.
    const unsigned blocks = static_cast<unsigned>(std::min<long>((cells + 255) / 256, 8192));
    thin_stencil_kernel<<<blocks, 256, 0, stream>>>(in, out, box, c);
    CUSH_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const auto filled = [&](long width) { return static_cast<double>(box.nx) / static_cast<double>((box.nx + width - 1) / width * width); };
  if (box.nx >= 512 && filled(kWideStencilConfig::kX) >= filled(kStencilConfig::kX) - 0.01) {
    launch_stencil_tiles<kWideStencilConfig>(in, out, box, c, stream);
  } else {
    launch_stencil_tiles<kStencilConfig>(in, out, box, c, stream);
  }
}

void launch_periodic_halo(double* u, std::size_t nx, std::size_t ny, std::size_t nz, cudaStream_t stream) {
  const std::size_t total = 2 * (nx + 2) * (ny + 2) + 2 * (nx + 2) * nz + 2 * ny * nz;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 4096));
  periodic_halo_kernel<<<blocks, 256, 0, stream>>>(u, static_cast<long>(nx), static_cast<long>(ny),
                                                   static_cast<long>(nz), static_cast<long>(padded_pitch(nx)));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace advection
}  // namespace cases
