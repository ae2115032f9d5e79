#pragma once
// Case "wave": the streaming kernel, T leapfrog steps per trip through memory (2.5D temporal
// blocking; T = 1 is a one-step kernel), a template over the stencil's radius, T and the tile's
// shape, so that bench/probes/probe_wave.cu can time shapes against each other.
//
// A block computes a W x H tile of (x, y) columns, the (W - 2 T r) x (H - 2 T r) it stores and
// T r ghost columns on every side, and marches its z run plane by plane. Thread (tx, ty) keeps, for its NY columns (x = tx, rows ty NY ..), a queue
// of the last 2 r + 1 planes of every level l = 0 .. T - 1 (level 0 = u^n, read from memory;
// level l = u^{n+l}) in registers: the z neighbours, the centre and, for level l + 2, the older
// level. The queue's middle plane of each level also goes to one plane of shared memory, where
// the x and y neighbours are read. When input plane p arrives, stage l = 1 .. T computes level l
// at plane p - l r (from level l - 1 at planes p - (l + 1) r .. p - (l - 1) r and level l - 2 at
// plane p - l r; level -1 = u^{n-1} comes from memory), one __syncthreads() between stages.
// Stage T stores level T and level T - 1 of the same plane (the leapfrog's next pair; for T = 1
// the second may be left out, and level 1 stored over u^{n-1} in place: each thread reads the
// older level only at the cells it writes, before it writes them). Level l is right on the stored
// cells grown by (T - l) r; the rest of a level is computed from clamped reads and never stored.
//
// Every cell of every level is step_host's chain of FMAs (reference.hpp), so a launch of T steps
// gives the bits of T one-step launches. The price: the grown tile is computed and read again by
// the neighbouring tiles (redundancy), and each z run re-reads T r planes at either end.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace wave {

/// A tile: radius R, T steps, W x TY threads, NY rows per thread (H = TY NY rows), at least
/// MinBlocks blocks an SM, the plane loop unrolled Unroll times (2 R + 1: the queues rotate by
/// renaming registers instead of moving them).
template <int R, int T, int W, int TY, int NY, int MinBlocks = 1, int Unroll = 1>
struct WaveStepsConfig {
  static_assert(R >= 1 && R <= 4 && T >= 1 && NY >= 1);
  static constexpr int kR = R, kT = T, kW = W, kTY = TY, kNY = NY, kMinBlocks = MinBlocks, kUnroll = Unroll;
  static constexpr int kH = TY * NY;
  static constexpr int kGrow = T * R;          ///< ghost cells of the tile on every side
  static constexpr int kX = W - 2 * kGrow;     ///< stored columns of a tile
  static constexpr int kY = kH - 2 * kGrow;    ///< stored rows
  static_assert(kX > 0 && kY > 0, "the tile must be wider than its ghost cells");
  static constexpr int kThreads = W * TY;
  static constexpr int kQueue = 2 * R + 1;
  /// One level's plane in shared memory: R rows and R cells of slack before and after, so that
  /// the neighbours of any cell are inside (the grown tile's edge cells read garbage, unused).
  static constexpr int kPlane = (kH + 2 * R) * W + 2 * R;
  static constexpr int kOrigin = R * W + R;
  static constexpr std::size_t kSharedBytes = sizeof(double) * T * kPlane;
};

/// The shape the case uses (bench/probes/probe_wave.cu compares others): 512 threads, 64 x 32
/// cells grown.
template <int R, int T>
using WaveShape = WaveStepsConfig<R, T, 64, 8, 4>;

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    wave_steps_kernel(WaveLevels lv, Box box, Leapfrog l, int run) {
  constexpr int R = C::kR, T = C::kT, W = C::kW, NY = C::kNY, G = C::kGrow, Q = C::kQueue;
  extern __shared__ double shared[];
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(C::kX) - G;  // the grown tile's corner
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(C::kY) - G;
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;

  // This thread's cells in a plane: level 0 read on the box grown by T r (clamped: the cells past
  // it feed no stored cell), u^{n-1} only where level 1 is needed, cells stored inside the box.
  const long gx = x0 + tx;
  const long cx = gx < box.x0 - G ? box.x0 - G : (gx < box.x0 + box.nx + G ? gx : box.x0 + box.nx + G - 1);
  // u^{n-1} on the tile grown by (T - 1) r (for T = 1 the tile: no other block's cells, which an
  // in-place launch overwrites) and inside the box grown as much.
  const bool older_x = tx >= R && tx < W - R && gx >= box.x0 - (G - R) && gx < box.x0 + box.nx + (G - R);
  const bool store_x = tx >= G && tx < W - G && gx < box.x0 + box.nx;
  int at[NY];
  bool older_at[NY], store_at[NY];
#pragma unroll
  for (int j = 0; j < NY; ++j) {
    const long gy = y0 + ty * NY + j;
    const long cy = gy < box.y0 - G ? box.y0 - G : (gy < box.y0 + box.ny + G ? gy : box.y0 + box.ny + G - 1);
    at[j] = static_cast<int>(cy * box.pitch_x + cx);
    const int row = ty * NY + j;
    older_at[j] = older_x && row >= R && row < C::kH - R && gy >= box.y0 - (G - R) && gy < box.y0 + box.ny + (G - R);
    store_at[j] = store_x && row >= G && row < C::kH - G && gy < box.y0 + box.ny;
  }

  double queue[T][Q][NY];  // queue[l][i][j]: level l at plane (the newest) - 2 R + i
#pragma unroll
  for (int lv_ = 0; lv_ < T; ++lv_)
#pragma unroll
    for (int i = 0; i < Q; ++i)
#pragma unroll
      for (int j = 0; j < NY; ++j) queue[lv_][i][j] = 0;

  // Plane p's level 0 and plane p - R's u^{n-1}, one plane ahead.
  const long first = z_begin - G, last = z_end + G;  // input planes [first, last)
  const long older_first = z_begin - (G - R), older_last = z_end + (G - R);
  auto load = [&](long p, double (&u)[NY], double (&o)[NY]) {
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      u[j] = p < last ? __ldg(lv.current + p * sz + at[j]) : 0.0;
      const long q = p - R;
      o[j] = q >= older_first && q < older_last && older_at[j] ? lv.older[q * sz + at[j]] : 0.0;  // may be lv.next
    }
  };
  double u_next[NY], o_next[NY];
  load(first, u_next, o_next);

  const int self = C::kOrigin + ty * NY * W + tx;  // this thread's first cell in a shared plane
#pragma unroll(C::kUnroll)
  for (long p = first; p < last; ++p) {
    double u[NY], older[NY];
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      u[j] = u_next[j];
      older[j] = o_next[j];
    }
    load(p + 1, u_next, o_next);

    // Level 0: plane p into the queue, its middle plane into shared memory.
#pragma unroll
    for (int j = 0; j < NY; ++j) {
#pragma unroll
      for (int i = 0; i + 1 < Q; ++i) queue[0][i][j] = queue[0][i + 1][j];
      queue[0][Q - 1][j] = u[j];
      shared[self + j * W] = queue[0][R][j];
    }
    __syncthreads();

#pragma unroll
    for (int s = 1; s <= T; ++s) {
      const double* plane = shared + (s - 1) * C::kPlane + self;
      double next[NY];
#pragma unroll
      for (int j = 0; j < NY; ++j) {
        const double* c = plane + j * W;
        double sum = 0;
#pragma unroll
        for (int k = 1; k <= R; ++k) {
          const double up = j + k < NY ? queue[s - 1][R][j + k] : c[k * W];
          const double down = j - k >= 0 ? queue[s - 1][R][j - k] : c[-k * W];
          sum = fma(l.c[k], c[k] + c[-k], sum);
          sum = fma(l.c[k], up + down, sum);
          sum = fma(l.c[k], queue[s - 1][R + k][j] + queue[s - 1][R - k][j], sum);
        }
        const double prev = s == 1 ? older[j] : queue[s >= 2 ? s - 2 : 0][0][j];
        next[j] = fma(l.courant2, sum, fma(l.centre, queue[s - 1][R][j], -prev));
      }
      if (s < T) {
        double* out = shared + s * C::kPlane + self;
#pragma unroll
        for (int j = 0; j < NY; ++j) {
#pragma unroll
          for (int i = 0; i + 1 < Q; ++i) queue[s < T ? s : 0][i][j] = queue[s < T ? s : 0][i + 1][j];
          queue[s < T ? s : 0][Q - 1][j] = next[j];
          out[j * W] = queue[s < T ? s : 0][R][j];
        }
        __syncthreads();
      } else {
        const long q = p - G;  // the plane levels T and T - 1 are at
        if (q >= z_begin && q < z_end) {
#pragma unroll
          for (int j = 0; j < NY; ++j)
            if (store_at[j]) {
              const long o = q * sz + at[j];
              lv.next[o] = next[j];
              if (lv.next_older != nullptr) lv.next_older[o] = queue[T - 1][R][j];
            }
        }
      }
    }
    if constexpr (T == 1) __syncthreads();  // stage 1 done with the shared plane before the next
  }
}

/// Where the tiles of shape C go over `box` (z runs as long as leave 2048 blocks), and the launch.
template <class C>
void launch_wave_steps_tiles(const WaveLevels& lv, const Box& box, const Leapfrog& l, cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  if (box.pitch_x * (box.pitch_y + 2 * C::kGrow) >= (1L << 31))
    throw std::invalid_argument("cases::wave: planes of 2^31 cells or more are beyond the streaming kernel");
  if (l.radius != C::kR)
    throw std::invalid_argument("cases::wave: a kernel of radius " + std::to_string(C::kR) + " for order " +
                                std::to_string(2 * l.radius));
  const long tiles = ((box.nx + C::kX - 1) / C::kX) * ((box.ny + C::kY - 1) / C::kY);
  long run = 128;
  while (run > 8 && tiles * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + C::kX - 1) / C::kX), static_cast<unsigned>((box.ny + C::kY - 1) / C::kY),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  if constexpr (C::kSharedBytes > 48 * 1024)  // above the default limit it must be asked for (per device)
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(wave_steps_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(C::kSharedBytes)));
  wave_steps_kernel<C><<<grid, C::kThreads, C::kSharedBytes, stream>>>(lv, box, l, static_cast<int>(run));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wave
}  // namespace cases
