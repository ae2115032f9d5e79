// What the stencil cases share (padded_grid.hpp): slab copies and the periodic ghost kernels.

#include "padded_grid.hpp"

#include <algorithm>

#include "cush/error.hpp"

namespace cases {

namespace {

// The periodic source of stored index i on an axis of n owned cells after h ghost cells (one
// wrap but where the axis has fewer cells than ghost layers).
__device__ inline long wrapped(long i, long n, long h) {
  long r = i - h;
  if (r < 0) r += n;
  else if (r >= n) r -= n;
  if (r < 0 || r >= n) r = (r % n + n) % n;
  return r + h;
}

// Every ghost cell of a block with h ghost layers, on a grid periodic on every axis and held by
// one block: each takes the owned cell it stands for, so all can be filled at once. Rows are
// `pitch` cells apart. Kept for axes shorter than the ghost layers; elsewhere the passes below are
// faster (probe_wave, run 136: 0.230 against 0.155 ms with one layer at 1024^3, 0.410 against
// 0.184 with four).
__global__ void periodic_halo_kernel(double* u, long nx, long ny, long nz, long pitch, long h) {
  const long px = nx + 2 * h, py = ny + 2 * h;
  const long z_faces = 2 * h * px * py, y_faces = 2 * h * px * nz, x_faces = 2 * h * ny * nz;
  const long total = z_faces + y_faces + x_faces;
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<long>(gridDim.x) * blockDim.x) {
    long i, j, k;
    if (t < z_faces) {  // the planes below and above the owned ones, whole
      const long layer = t / (px * py), r = t % (px * py);
      k = layer < h ? layer : nz + layer;
      i = r % px;
      j = r / px;
    } else if (t < z_faces + y_faces) {  // the rows before and after the owned ones, of the owned planes
      const long r = t - z_faces, layer = r / (px * nz), q = r % (px * nz);
      j = layer < h ? layer : ny + layer;
      i = q % px;
      k = q / px + h;
    } else {  // the cells before and after the owned ones, of the owned rows
      const long r = t - z_faces - y_faces, layer = r / (ny * nz), q = r % (ny * nz);
      i = layer < h ? layer : nx + layer;
      j = q % ny + h;
      k = q / ny + h;
    }
    u[(k * py + j) * pitch + i] = u[(wrapped(k, nz, h) * py + wrapped(j, ny, h)) * pitch + wrapped(i, nx, h)];
  }
}

// The x and y ghosts (h layers) of the stored planes [z_begin, z_end): per plane the rows before
// and after the owned ones (whole, corners included) and the cells before and after the owned
// ones of the owned rows. Every source is an owned cell, so there is no order.
__global__ void xy_halo_kernel(double* u, long nx, long ny, long z_begin, long planes, long pitch, long h) {
  const long px = nx + 2 * h, py = ny + 2 * h;
  const long rows = 2 * h * px, per_plane = rows + 2 * h * ny;
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < per_plane * planes;
       t += static_cast<long>(gridDim.x) * blockDim.x) {
    const long k = z_begin + t / per_plane;
    const long r = t % per_plane;
    long i, j;
    if (r < rows) {
      const long layer = r / px;
      j = layer < h ? layer : ny + layer;
      i = r % px;
    } else {
      const long layer = (r - rows) / ny;
      i = layer < h ? layer : nx + layer;
      j = (r - rows) % ny + h;
    }
    u[(k * py + j) * pitch + i] = u[(k * py + wrapped(j, ny, h)) * pitch + wrapped(i, nx, h)];
  }
}

// The fast path of both launches below (every axis at least h cells, index math in 32 bits), in
// passes that each depend on the one before: the cells before and after the owned ones of the
// owned rows, then the ghost rows (whole, their x ghosts included) from owned rows, then the ghost
// planes (whole) from owned planes. A warp handles 32 / (2 h) rows of the first pass, 32 cells of a
// row in the others. The combined kernels above divide 64-bit indices three times a cell and let
// a warp's x ghosts fall in 32 rows (cases/wave/README.md, "The staged kernel", has the times).
__global__ void x_ghosts_kernel(double* u, unsigned nx, unsigned ny, unsigned z_begin, unsigned rows, long pitch,
                                unsigned py, unsigned h) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= rows * 2 * h) return;
  const unsigned c = t % (2 * h), row = t / (2 * h);
  const unsigned j = row % ny + h, k = row / ny + z_begin;
  const unsigned i = c < h ? c : nx + c, from = c < h ? nx + c : c;  // one wrap: nx >= h
  double* r = u + (static_cast<long>(k) * py + j) * pitch;
  r[i] = r[from];
}

__global__ void y_ghosts_kernel(double* u, unsigned ny, unsigned z_begin, unsigned planes, unsigned px, long pitch,
                                unsigned py, unsigned h) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= planes * 2 * h * px) return;
  const unsigned i = t % px, r = t / px, layer = r % (2 * h), k = r / (2 * h) + z_begin;
  const unsigned j = layer < h ? layer : ny + layer, from = layer < h ? ny + layer : layer;
  double* plane = u + static_cast<long>(k) * py * pitch;
  plane[j * pitch + i] = plane[from * pitch + i];
}

__global__ void z_ghosts_kernel(double* u, unsigned nz, unsigned plane_cells, unsigned h) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x, layer = blockIdx.y;
  if (t >= plane_cells) return;
  const unsigned k = layer < h ? layer : nz + layer, from = layer < h ? nz + layer : layer;
  u[static_cast<long>(k) * plane_cells + t] = u[static_cast<long>(from) * plane_cells + t];
}

unsigned blocks_for(std::size_t threads) { return static_cast<unsigned>((threads + 255) / 256); }

/// True where the passes serve a buffer of `stored` planes: x and y have at least h cells, and
/// the indices fit 32 bits.
bool fast_ghosts(std::size_t nx, std::size_t ny, std::size_t stored, std::size_t h) {
  const std::size_t px = nx + 2 * h, py = ny + 2 * h, limit = std::size_t{1} << 32;
  return nx >= h && ny >= h && stored * py * padded_pitch(nx, h) < limit && stored * ny * 2 * h < limit &&
         stored * 2 * h * px < limit;
}

/// The first two passes over the stored planes [z_begin, z_begin + planes).
void launch_xy_passes(double* u, std::size_t nx, std::size_t ny, std::size_t z_begin, std::size_t planes,
                      cudaStream_t stream, std::size_t h) {
  const long pitch = static_cast<long>(padded_pitch(nx, h));
  const auto py = static_cast<unsigned>(ny + 2 * h), px = static_cast<unsigned>(nx + 2 * h);
  const auto rows = static_cast<unsigned>(planes * ny), hh = static_cast<unsigned>(h);
  x_ghosts_kernel<<<blocks_for(std::size_t{rows} * 2 * h), 256, 0, stream>>>(
      u, static_cast<unsigned>(nx), static_cast<unsigned>(ny), static_cast<unsigned>(z_begin), rows, pitch, py, hh);
  CUSH_CUDA_CHECK(cudaGetLastError());
  y_ghosts_kernel<<<blocks_for(planes * 2 * h * px), 256, 0, stream>>>(
      u, static_cast<unsigned>(ny), static_cast<unsigned>(z_begin), static_cast<unsigned>(planes), px, pitch, py, hh);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

cudaMemcpy3DParms slab_copy(std::size_t nx, std::size_t ny, const double* host, double* dev, std::size_t first,
                            std::size_t planes, bool to_device, std::size_t h) {
  cudaMemcpy3DParms p{};
  // cudaPitchedPtr has no const form; a device-to-host copy writes through it, as it should.
  const cudaPitchedPtr hp = make_cudaPitchedPtr(const_cast<double*>(host) + first * nx * ny, nx * sizeof(double), nx, ny);
  const cudaPitchedPtr d = make_cudaPitchedPtr(dev, padded_pitch(nx, h) * sizeof(double), nx + 2 * h, ny + 2 * h);
  p.srcPtr = to_device ? hp : d;
  p.dstPtr = to_device ? d : hp;
  (to_device ? p.dstPos : p.srcPos) = make_cudaPos(h * sizeof(double), h, h);
  p.extent = make_cudaExtent(nx * sizeof(double), ny, planes);
  p.kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return p;
}

void launch_xy_halo(double* u, std::size_t nx, std::size_t ny, std::size_t z_begin, std::size_t z_end,
                    cudaStream_t stream, std::size_t h) {
  if (z_end <= z_begin) return;
  if (fast_ghosts(nx, ny, z_end + h, h)) return launch_xy_passes(u, nx, ny, z_begin, z_end - z_begin, stream, h);
  const std::size_t total = 2 * h * (nx + 2 * h + ny) * (z_end - z_begin);
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 4096));
  xy_halo_kernel<<<blocks, 256, 0, stream>>>(u, static_cast<long>(nx), static_cast<long>(ny),
                                             static_cast<long>(z_begin), static_cast<long>(z_end - z_begin),
                                             static_cast<long>(padded_pitch(nx, h)), static_cast<long>(h));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_periodic_halo_general(double* u, std::size_t nx, std::size_t ny, std::size_t nz, cudaStream_t stream,
                                  std::size_t h) {
  const std::size_t px = nx + 2 * h, py = ny + 2 * h;
  const std::size_t total = 2 * h * (px * py + px * nz + ny * nz);
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 4096));
  periodic_halo_kernel<<<blocks, 256, 0, stream>>>(u, static_cast<long>(nx), static_cast<long>(ny),
                                                   static_cast<long>(nz), static_cast<long>(padded_pitch(nx, h)),
                                                   static_cast<long>(h));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_periodic_halo(double* u, std::size_t nx, std::size_t ny, std::size_t nz, cudaStream_t stream,
                          std::size_t h) {
  if (nz < h || !fast_ghosts(nx, ny, nz + 2 * h, h)) return launch_periodic_halo_general(u, nx, ny, nz, stream, h);
  launch_xy_passes(u, nx, ny, h, nz, stream, h);
  const std::size_t plane = (ny + 2 * h) * padded_pitch(nx, h);
  z_ghosts_kernel<<<dim3(blocks_for(plane), static_cast<unsigned>(2 * h)), 256, 0, stream>>>(
      u, static_cast<unsigned>(nz), static_cast<unsigned>(plane), static_cast<unsigned>(h));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cases
