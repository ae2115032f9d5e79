// Case "advection": the GPU kernels shared by every variant. A block of the grid is stored with
// `h` ghost layers on every side (x fastest); the stencil reads one layer around the cells it
// updates.

#include <algorithm>
#include <stdexcept>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "stencil.cuh"

namespace cases {
namespace advection {

namespace {

// Ghost cells of a slab with one ghost layer, each from the owned cell it stands for on a grid
// periodic along x and y (and z when the slab holds the whole grid): the cells i = 0, nx + 1 of
// the owned rows, the rows j = 0, ny + 1 whole, and with `z_faces` the planes k = 0, nz + 1
// whole, for the planes [k0, k1). Sources are owned cells only, so there is no order among the
// writes. blockIdx.z is the face. On the x faces a thread fills both ends of kXRows rows (one
// plane apart), its loads all issued before its stores: each access there is a sector of its
// own, and one cell a thread left the kernel latency-bound (220 us at 1024^3, 30% of the memory
// bandwidth). The other faces run along x, coalesced.
constexpr int kXRows = 4;

__global__ void wrap_ghosts_kernel(double* u, int nx, int ny, int nz, long pitch, int k0, int k1) {
  const int face = blockIdx.z;
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y * blockDim.y + threadIdx.y;
  const long rows = ny + 2;
  const auto wrap = [](int c, int n) { return c == 0 ? n : (c == n + 1 ? 1 : c); };
  if (face == 0) {  // x faces: a = j - 1, b = (k - k0) / kXRows
    if (a >= ny) return;
    double left[kXRows], right[kXRows];
#pragma unroll
    for (int q = 0; q < kXRows; ++q) {
      const int k = k0 + b * kXRows + q;
      if (k >= k1) break;
      const double* row = u + (k * rows + a + 1) * pitch;
      left[q] = row[nx];
      right[q] = row[1];
    }
#pragma unroll
    for (int q = 0; q < kXRows; ++q) {
      const int k = k0 + b * kXRows + q;
      if (k >= k1) break;
      double* row = u + (k * rows + a + 1) * pitch;
      row[0] = left[q];
      row[nx + 1] = right[q];
    }
    return;
  }
  int i, j, k;
  if (face < 3) {  // y faces: a = i, b = k - k0
    if (a >= nx + 2 || b >= k1 - k0) return;
    i = a;
    j = face == 1 ? 0 : ny + 1;
    k = b + k0;
  } else {  // z faces: a = i, b = j
    if (a >= nx + 2 || b >= ny + 2) return;
    i = a;
    j = b;
    k = face == 3 ? 0 : nz + 1;
  }
  u[(k * rows + j) * pitch + i] = u[(wrap(k, nz) * rows + wrap(j, ny)) * pitch + wrap(i, nx)];
}

void launch_wrap_ghosts(double* u, std::size_t nx, std::size_t ny, std::size_t nz, std::size_t k0, std::size_t k1,
                        bool z_faces, cudaStream_t stream) {
  if (k1 <= k0 && !z_faces) return;
  const dim3 block(32, 8);
  const std::size_t first = std::max(nx + 2, ny), second = std::max(std::max(k1 - k0, z_faces ? ny + 2 : 0), std::size_t{1});
  if ((second + 7) / 8 > 65535) throw std::invalid_argument("cases::advection: more than 524280 planes or rows");
  const dim3 grid(static_cast<unsigned>((first + 31) / 32), static_cast<unsigned>((second + 7) / 8), z_faces ? 5 : 3);
  wrap_ghosts_kernel<<<grid, block, 0, stream>>>(u, static_cast<int>(nx), static_cast<int>(ny), static_cast<int>(nz),
                                                 static_cast<long>(padded_pitch(nx)), static_cast<int>(k0),
                                                 static_cast<int>(k1));
  CUSH_CUDA_CHECK(cudaGetLastError());
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
  launch_wrap_ghosts(u, nx, ny, 0, z_begin, z_end, false, stream);
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
  launch_wrap_ghosts(u, nx, ny, nz, 1, nz + 1, true, stream);
}

}  // namespace advection
}  // namespace cases
