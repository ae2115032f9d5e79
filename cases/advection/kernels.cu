// Case "advection": the GPU kernels shared by every variant. A block of the grid is stored with
// `h` ghost layers on every side (x fastest); the stencil reads one layer around the cells it
// updates.

#include <cuda_pipeline.h>

#include <algorithm>

#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

namespace {

// A block updates a tile of kBlockX x kRowsPerBlock columns of the box over a run of z planes.
// The input planes stream through a ring of kStages shared-memory tiles (the tile plus one cell
// around it) by asynchronous copies issued kStages - 1 planes ahead, so enough bytes are in
// flight to keep the memory busy. (Loads straight into registers, one plane ahead, reached only
// 57% of the DRAM bandwidth at a quarter of the warps: latency-bound; docs/results/advection.md.)
// Each thread owns kRowsPerThread neighbouring columns and adds every plane, with 27 FMAs per
// column, to the three output planes it touches: the one below it is then complete and stored.
// Three accumulators per column give 3 x kRowsPerThread independent chains of 9 FMAs. Each output
// sums the planes below, at and above it in that order, the same order however the box is split,
// so every variant gets the same bits.
constexpr int kBlockX = 32;
constexpr int kBlockY = 4;
constexpr int kRowsPerThread = 4;
constexpr int kRowsPerBlock = kBlockY * kRowsPerThread;
constexpr int kTileX = kBlockX + 2;
constexpr int kTileY = kRowsPerBlock + 2;
constexpr int kTile = kTileX * kTileY;
constexpr int kThreads = kBlockX * kBlockY;
constexpr int kLoadsPerThread = (kTile + kThreads - 1) / kThreads;
constexpr int kStages = 4;

__global__ void __launch_bounds__(kThreads)
    stencil_kernel(const double* __restrict__ in, double* __restrict__ out, Box box, Coefficients c, int run) {
  constexpr int R = kRowsPerThread;
  __shared__ double ring[kStages][kTile];
  const int tid = threadIdx.y * kBlockX + threadIdx.x;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(kBlockX);
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(kRowsPerBlock);
  const long x_last = box.x0 + box.nx, y_last = box.y0 + box.ny;  // the last stored ghost column and row
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  // This thread's share of a tile: cells past the box's ghost layer read the last valid one.
  long offset[kLoadsPerThread];
#pragma unroll
  for (int k = 0; k < kLoadsPerThread; ++k) {
    const int e = tid + k * kThreads < kTile ? tid + k * kThreads : kTile - 1;
    const long gx = x0 - 1 + e % kTileX, gy = y0 - 1 + e / kTileX;
    offset[k] = (gy < y_last ? gy : y_last) * box.pitch_x + (gx < x_last ? gx : x_last);
  }
  auto fetch = [&](long z) {  // plane z into its ring slot; always commits a group
    if (z <= z_end) {
      double* slot = ring[(z - z_begin + 1) % kStages];
      const double* plane = in + z * sz;
#pragma unroll
      for (int k = 0; k < kLoadsPerThread; ++k)
        if (tid + k * kThreads < kTile) __pipeline_memcpy_async(slot + tid + k * kThreads, plane + offset[k], sizeof(double));
    }
    __pipeline_commit();
  };
  for (int s = 0; s < kStages - 1; ++s) fetch(z_begin - 1 + s);

  const int ty = threadIdx.y * R;
  const long x = x0 + threadIdx.x;
  double below[R] = {}, here[R] = {}, above[R];  // outputs at planes p - 1, p, p + 1
  for (long p = z_begin - 1; p <= z_end; ++p) {
    __pipeline_wait_prior(kStages - 2);  // plane p has landed (for this thread's copies)
    __syncthreads();                     // ... and for everyone's; and all are done with plane p - 1
    fetch(p + kStages - 1);              // into plane p - 1's slot
    const double* t = ring[(p - z_begin + 1) % kStages];
    double hi[R];
#pragma unroll
    for (int o = 0; o < R; ++o) {
      above[o] = 0;
      hi[o] = below[o];
    }
#pragma unroll
    for (int r = 0; r < R + 2; ++r)
#pragma unroll
      for (int i = 0; i < 3; ++i) {
        const double u = t[(ty + r) * kTileX + threadIdx.x + i];
#pragma unroll
        for (int o = 0; o < R; ++o) {
          const int j = r - o;
          if (j < 0 || j > 2) continue;
          above[o] = fma(c.a[3 * j + i], u, above[o]);     // plane p lies below output p + 1
          here[o] = fma(c.a[9 + 3 * j + i], u, here[o]);   // at output p
          hi[o] = fma(c.a[18 + 3 * j + i], u, hi[o]);      // above output p - 1, now complete
        }
      }
    if (p > z_begin && x < x_last) {
      double* q = out + (p - 1) * sz + x;
#pragma unroll
      for (int o = 0; o < R; ++o)
        if (y0 + ty + o < y_last) q[(y0 + ty + o) * box.pitch_x] = hi[o];
    }
#pragma unroll
    for (int o = 0; o < R; ++o) {
      below[o] = here[o];
      here[o] = above[o];
    }
  }
}

// Every ghost cell of a block with one ghost layer, on a grid periodic on every axis and held by
// one block: each takes the interior cell it stands for, so all can be filled at once.
__global__ void periodic_halo_kernel(double* u, long nx, long ny, long nz) {
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
    u[(k * py + j) * px + i] = u[(sk * py + sj) * px + si];
  }
}

// The x and y ghosts of the stored planes [z_begin, z_end): per plane the rows j = 0 and
// j = ny + 1 (whole, corners included) and the cells i = 0, i = nx + 1 of the inner rows. A row
// ghost's source is an owned row, and the corner sources are owned cells, so there is no order.
__global__ void xy_halo_kernel(double* u, long nx, long ny, long z_begin, long planes) {
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
    u[(k * py + j) * px + i] = u[(k * py + sj) * px + si];
  }
}

}  // namespace

cudaMemcpy3DParms slab_copy(std::size_t nx, std::size_t ny, const double* host, double* dev, std::size_t first,
                            std::size_t planes, bool to_device) {
  cudaMemcpy3DParms p{};
  // cudaPitchedPtr has no const form; a device-to-host copy writes through it, as it should.
  const cudaPitchedPtr h = make_cudaPitchedPtr(const_cast<double*>(host) + first * nx * ny, nx * sizeof(double), nx, ny);
  const cudaPitchedPtr d = make_cudaPitchedPtr(dev, (nx + 2) * sizeof(double), nx + 2, ny + 2);
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
                                             static_cast<long>(z_begin), static_cast<long>(z_end - z_begin));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_stencil(const double* in, double* out, const Box& box, const Coefficients& c, cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const long columns = (box.nx + kBlockX - 1) / kBlockX * ((box.ny + kRowsPerBlock - 1) / kRowsPerBlock);
  // Long z runs re-read fewer planes (2 per run) but must still leave enough blocks to fill a GPU
  // several times over; 2048 blocks of 128 threads do on any current GPU.
  long run = 128;
  while (run > 1 && columns * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 block(kBlockX, kBlockY, 1);
  const dim3 grid(static_cast<unsigned>((box.nx + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>((box.ny + kRowsPerBlock - 1) / kRowsPerBlock),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  stencil_kernel<<<grid, block, 0, stream>>>(in, out, box, c, static_cast<int>(run));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_periodic_halo(double* u, std::size_t nx, std::size_t ny, std::size_t nz, cudaStream_t stream) {
  const std::size_t total = 2 * (nx + 2) * (ny + 2) + 2 * (nx + 2) * nz + 2 * ny * nz;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 4096));
  periodic_halo_kernel<<<blocks, 256, 0, stream>>>(u, static_cast<long>(nx), static_cast<long>(ny),
                                                   static_cast<long>(nz));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace advection
}  // namespace cases
