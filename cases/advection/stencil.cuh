#pragma once
// Case "advection": the 27-point stencil kernel, a template over its tile shape so that
// bench/probes/probe_stencil.cu can time other shapes against the one the case uses (kStencilConfig).
//
// A block updates a tile of X x (Y * R) columns of the box over a run of z planes. The input
// planes stream through a ring of S shared-memory tiles (the tile plus one cell around it) by
// asynchronous copies issued S - 1 planes ahead, so that enough bytes are in flight to keep the
// memory busy. Each thread owns R neighbouring columns (in y) and adds every plane, with 27 FMAs
// per column, to the three output planes it touches: the one below it is then complete and
// stored. Three accumulators per column give 3 R independent chains of 9 FMAs. Each output sums
// the planes below, at and above it in that order, the same order however the box is split, so
// every variant gets the same bits. docs/results/advection.md has the measurements behind this.

#include <cuda_pipeline.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

/// A tile shape: X x Y threads, R output rows per thread, S ring stages.
template <int X, int Y, int R, int S>
struct StencilConfig {
  static constexpr int kX = X, kY = Y, kR = R, kS = S;
  static constexpr int kRows = Y * R;              // output rows of a tile
  static constexpr int kTileX = X + 2, kTileY = kRows + 2;
  static constexpr int kTile = kTileX * kTileY;    // cells of one ring stage
  static constexpr int kThreads = X * Y;
  static constexpr int kLoads = (kTile + kThreads - 1) / kThreads;
};

/// The shapes the case uses (bench/probe_stencil compares others): 64-wide tiles, and 128-wide
/// ones on rows they fill as well (3% faster at 1024^3, docs/results/advection.md).
using kStencilConfig = StencilConfig<64, 4, 4, 3>;
using kWideStencilConfig = StencilConfig<128, 2, 4, 3>;

template <class C>
__global__ void __launch_bounds__(C::kThreads)
    stencil_tile_kernel(const double* __restrict__ in, double* __restrict__ out, Box box, Coefficients c, int run, int shift) {
  constexpr int R = C::kR;
  extern __shared__ double ring_cells[];
  auto ring = reinterpret_cast<double(*)[C::kTile]>(ring_cells);  // kS stages
  const int tid = threadIdx.y * C::kX + threadIdx.x;
  const long x0 = box.x0 - shift + blockIdx.x * static_cast<long>(C::kX);  // tiles start aligned
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(C::kRows);
  const long x_last = box.x0 + box.nx, y_last = box.y0 + box.ny;  // the last stored ghost column and row
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  // This thread's share of a tile: cells beyond the box's ghost layer (left of it when the tile
  // starts before the box, right of it at the end) read the nearest valid one.
  long offset[C::kLoads];
#pragma unroll
  for (int k = 0; k < C::kLoads; ++k) {
    const int e = tid + k * C::kThreads < C::kTile ? tid + k * C::kThreads : C::kTile - 1;
    const long gx = x0 - 1 + e % C::kTileX, gy = y0 - 1 + e / C::kTileX;
    const long cx = gx < box.x0 - 1 ? box.x0 - 1 : (gx < x_last ? gx : x_last);
    offset[k] = (gy < y_last ? gy : y_last) * box.pitch_x + cx;
  }
  auto fetch = [&](long z) {  // plane z into its ring slot; always commits a group
    if (z <= z_end) {
      double* slot = ring[(z - z_begin + 1) % C::kS];
      const double* plane = in + z * sz;
#pragma unroll
      for (int k = 0; k < C::kLoads; ++k)
        if (tid + k * C::kThreads < C::kTile)
          __pipeline_memcpy_async(slot + tid + k * C::kThreads, plane + offset[k], sizeof(double));
    }
    __pipeline_commit();
  };
  for (int s = 0; s < C::kS - 1; ++s) fetch(z_begin - 1 + s);

  const int ty = threadIdx.y * R;
  const long x = x0 + threadIdx.x;
  double below[R] = {}, here[R] = {}, above[R];  // outputs at planes p - 1, p, p + 1
  for (long p = z_begin - 1; p <= z_end; ++p) {
    __pipeline_wait_prior(C::kS - 2);  // plane p has landed (for this thread's copies)
    __syncthreads();                   // ... and for everyone's; and all are done with plane p - 1
    fetch(p + C::kS - 1);              // into plane p - 1's slot
    const double* t = ring[(p - z_begin + 1) % C::kS];
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
        const double u = t[(ty + r) * C::kTileX + threadIdx.x + i];
#pragma unroll
        for (int o = 0; o < R; ++o) {
          const int j = r - o;
          if (j < 0 || j > 2) continue;
          above[o] = fma(c.a[3 * j + i], u, above[o]);    // plane p lies below output p + 1
          here[o] = fma(c.a[9 + 3 * j + i], u, here[o]);  // at output p
          hi[o] = fma(c.a[18 + 3 * j + i], u, hi[o]);     // above output p - 1, now complete
        }
      }
    if (p > z_begin && x >= box.x0 && x < x_last) {
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

/// Launches the kernel of shape C over `box`. Where rows are 128 bytes apart or a multiple of it,
/// tiles start on a 128-byte boundary at or before the box (threads left of the box store
/// nothing), so that only a row's two ends store part of a memory sector. Long z runs re-read
/// fewer planes (two per run) but must leave enough blocks to fill a GPU several times over; 2048
/// blocks do on current GPUs.
template <class C>
void launch_stencil_tiles(const double* in, double* out, const Box& box, const Coefficients& c, cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  constexpr long kLine = 128 / sizeof(double);
  const long shift = box.pitch_x % kLine == 0
                         ? static_cast<long>(reinterpret_cast<std::uintptr_t>(out + box.x0) % 128 / sizeof(double))
                         : 0;
  const long tiles_x = (box.nx + shift + C::kX - 1) / C::kX;
  const long columns = tiles_x * ((box.ny + C::kRows - 1) / C::kRows);
  long run = 128;
  while (run > 1 && columns * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 block(C::kX, C::kY, 1);
  const dim3 grid(static_cast<unsigned>(tiles_x),
                  static_cast<unsigned>((box.ny + C::kRows - 1) / C::kRows),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  constexpr std::size_t bytes = sizeof(double) * C::kS * C::kTile;
  if constexpr (bytes > 48 * 1024)  // above the default limit it must be asked for (per device)
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(stencil_tile_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  stencil_tile_kernel<C><<<grid, block, bytes, stream>>>(in, out, box, c, static_cast<int>(run), static_cast<int>(shift));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace advection
}  // namespace cases
