#pragma once
// Case "wave": the streaming kernel, T leapfrog steps per trip through memory (2.5D temporal
// blocking; T = 1 is a one-step kernel), a template over the stencil's radius, T and the tile's
// shape, so that bench/probes/probe_wave.cu can time shapes against each other.
//
// A block's threads hold a W x H tile of (x, y) columns and march its z run plane by plane; the
// block stores the (W - 2 g) x (H - 2 g) columns in the middle, and the g columns around them on
// every side are ghosts, computed and never stored. Thread (tx, ty) keeps, for its NY columns
// (x = tx, rows ty NY ..), a queue of the last 2 r + 1 planes of every level l = 0 .. T - 1
// (level 0 = u^n, read from memory; level l = u^{n+l}) in registers: the z neighbours, the centre
// and, for level l + 2, the older level. The queue's middle plane of each level also goes to one
// plane of shared memory, where the x and y neighbours are read. When input plane p arrives, stage
// l = 1 .. T computes level l at plane p - l r (from level l - 1 at planes p - (l + 1) r ..
// p - (l - 1) r and level l - 2 at plane p - l r; level -1 = u^{n-1} comes from memory), one
// __syncthreads() between stages. Stage T stores level T and level T - 1 of the same plane (the
// leapfrog's next pair; for T = 1 the second may be left out, and level 1 stored over u^{n-1} in
// place: each thread reads the older level only at the cells it writes, before it writes them).
//
// Level 0 is needed on the stored columns grown by T r. Two ways to get it (`Ring`):
//   - grown tile (Ring = false): g = T r, the threads' tile is all of it, and its outer r columns
//     compute a level 1 no one uses;
//   - loaded ring (Ring = true): g = (T - 1) r, and the ring of r columns around the threads' tile
//     is loaded into level 0's shared plane by extra loads spread over the block (`kRing` cells a
//     plane). At T = 1 every thread stores its columns: a one-step kernel with no wasted work.
// Level l is right on the stored cells grown by (T - l) r; the rest of a level is computed from
// clamped reads (or the slack of the shared plane) and never stored.
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
#include "leapfrog_cell.cuh"

namespace cases {
namespace wave {

/// A cell of a tile's ring in the frame of a shared plane, where (R, R) is the tile's corner.
struct RingCell {
  int y, x;
};

/// Cell i (0 <= i < 2 r (w + h)) of the ring of a w x h tile: r rows of w cells above the tile,
/// r rows below, then r cells either side of each of its h rows (not the corners: the stencil is
/// a cross). Host-tested (test_wave_steps_host.cu).
__host__ __device__ inline RingCell ring_cell(int i, int r, int w, int h) {
  const int band = r * w;
  if (i < band) return {i / w, r + i % w};
  if (i < 2 * band) return {h + r + (i - band) / w, r + (i - band) % w};
  const int j = i - 2 * band, c = j % (2 * r);
  return {r + j / (2 * r), c < r ? c : w + c};
}

/// A tile: radius R, T steps, W x TY threads, NY rows per thread (H = TY NY rows), at least
/// MinBlocks blocks an SM, the plane loop unrolled Unroll times (2 R + 1: the queues rotate by
/// renaming registers instead of moving them), level 0's outer ring loaded (Ring) or computed.
template <int R, int T, int W, int TY, int NY, int MinBlocks = 1, int Unroll = 1, bool Ring = false>
struct WaveStepsConfig {
  static_assert(R >= 1 && R <= 4 && T >= 1 && NY >= 1);
  static constexpr int kR = R, kT = T, kW = W, kTY = TY, kNY = NY, kMinBlocks = MinBlocks, kUnroll = Unroll;
  static constexpr bool kLoadRing = Ring;
  static constexpr int kH = TY * NY;
  static constexpr int kReach = T * R;                 ///< level 0 is read this far past the stored cells
  static constexpr int kGrow = Ring ? kReach - R : kReach;  ///< ghost columns of the threads' tile on every side
  static constexpr int kX = W - 2 * kGrow;             ///< stored columns of a tile
  static constexpr int kY = kH - 2 * kGrow;            ///< stored rows
  static_assert(kX > 0 && kY > 0, "the tile must be wider than its ghost cells");
  static constexpr int kThreads = W * TY;
  static constexpr int kQueue = 2 * R + 1;
  /// A row of a shared plane: the threads' W cells, and with a ring its R cells on either side.
  static constexpr int kPitch = Ring ? W + 2 * R : W;
  /// One level's plane in shared memory: R rows and R cells of slack before and after, so that
  /// the neighbours of any cell are inside (without a ring, the grown tile's edge cells read
  /// garbage, unused).
  static constexpr int kPlane = (kH + 2 * R) * kPitch + 2 * R;
  static constexpr int kOrigin = R * kPitch + R;
  /// Level 0's cells a plane loaded beside the threads' own (the ring: R rows above and below the
  /// tile, R columns either side; the stencil is a cross, so not the corners), and per thread.
  static constexpr int kRing = Ring ? 2 * R * (W + kH) : 0;
  static constexpr int kRingPerThread = (kRing + kThreads - 1) / kThreads;
  static constexpr std::size_t kSharedBytes = sizeof(double) * T * kPlane;
};

/// The shapes the case uses (bench/probes/probe_wave.cu compares others): 512 threads holding 64 x
/// 32 columns; for one step at orders 6 and 8 with the ring loaded, 64 x 24 columns (at order 6
/// 768 threads of 2 rows, 2 % faster than 512 of 4 rows holding 64 x 32; at order 8 512 threads of
/// 3 rows: 4 columns of 9 planes a thread leave no room for 64 x 32, and the ring of 64 x 24 is a
/// smaller share of the loads than 64 x 16's, two blocks of which ran 3 % slower).
template <int R, int T>
struct CaseShape {
  using type = WaveStepsConfig<R, T, 64, 8, 4>;
};
template <>
struct CaseShape<3, 1> {
  using type = WaveStepsConfig<3, 1, 64, 12, 2, 1, 1, true>;
};
template <>
struct CaseShape<4, 1> {
  using type = WaveStepsConfig<4, 1, 64, 8, 3, 1, 1, true>;
};
template <int R, int T>
using WaveShape = typename CaseShape<R, T>::type;

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    wave_steps_kernel(WaveLevels lv, Box box, Leapfrog l, int run) {
  constexpr int R = C::kR, T = C::kT, W = C::kW, NY = C::kNY, G = C::kGrow, Q = C::kQueue;
  constexpr int P = C::kPitch, E = C::kReach;
  extern __shared__ double shared[];
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(C::kX) - G;  // the threads' tile's corner
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(C::kY) - G;
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  // Level 0 is read on the box grown by T r, clamped: the cells past it feed no stored cell.
  const auto clamp_x = [&](long gx) { return gx < box.x0 - E ? box.x0 - E : (gx < box.x0 + box.nx + E ? gx : box.x0 + box.nx + E - 1); };
  const auto clamp_y = [&](long gy) { return gy < box.y0 - E ? box.y0 - E : (gy < box.y0 + box.ny + E ? gy : box.y0 + box.ny + E - 1); };

  // This thread's cells in a plane: level 0 where it reads, u^{n-1} only where level 1 is needed
  // (on the tile grown by (T - 1) r: for T = 1 the stored cells, no other block's, which an
  // in-place launch overwrites; inside the box grown as much), cells stored inside the box.
  constexpr int older_edge = G - (T - 1) * R;  // R with a grown tile, 0 with a ring
  const long gx = x0 + tx;
  const long cx = clamp_x(gx);
  const bool older_x = tx >= older_edge && tx < W - older_edge && gx >= box.x0 - (E - R) && gx < box.x0 + box.nx + (E - R);
  const bool store_x = tx >= G && tx < W - G && gx < box.x0 + box.nx;
  int at[NY];
  bool older_at[NY], store_at[NY];
#pragma unroll
  for (int j = 0; j < NY; ++j) {
    const long gy = y0 + ty * NY + j;
    at[j] = static_cast<int>(clamp_y(gy) * box.pitch_x + cx);
    const int row = ty * NY + j;
    older_at[j] = older_x && row >= older_edge && row < C::kH - older_edge && gy >= box.y0 - (E - R) &&
                  gy < box.y0 + box.ny + (E - R);
    store_at[j] = store_x && row >= G && row < C::kH - G && gy < box.y0 + box.ny;
  }
  // With a ring: the ring cells this thread loads (cell i = threadIdx.x + k threads of the ring),
  // where they are in a plane of the array and in level 0's shared plane.
  constexpr int K = C::kRingPerThread;
  int ring_at[K > 0 ? K : 1], ring_shared[K > 0 ? K : 1];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * C::kThreads;
    const RingCell f = ring_cell(i, R, W, C::kH);
    const bool valid = i < C::kRing;
    ring_shared[k] = valid ? f.y * P + f.x : -1;
    ring_at[k] = valid ? static_cast<int>(clamp_y(y0 - R + f.y) * box.pitch_x + clamp_x(x0 - R + f.x)) : 0;
  }

  double queue[T][Q][NY];  // queue[l][i][j]: level l at plane (the newest) - 2 R + i
#pragma unroll
  for (int lv_ = 0; lv_ < T; ++lv_)
#pragma unroll
    for (int i = 0; i < Q; ++i)
#pragma unroll
      for (int j = 0; j < NY; ++j) queue[lv_][i][j] = 0;

  // Plane p's level 0, plane p - R's u^{n-1} and plane p - R's ring (level 0), one plane ahead.
  const long first = z_begin - E, last = z_end + E;  // input planes [first, last)
  const long older_first = z_begin - (E - R), older_last = z_end + (E - R);
  auto load = [&](long p, double (&u)[NY], double (&o)[NY], double (&ring)[K > 0 ? K : 1]) {
    const long q = p - R;
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      u[j] = p < last ? __ldg(lv.current + p * sz + at[j]) : 0.0;
      o[j] = q >= older_first && q < older_last && older_at[j] ? lv.older[q * sz + at[j]] : 0.0;  // may be lv.next
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      ring[k] = q >= first && q < last && ring_shared[k] >= 0 ? __ldg(lv.current + q * sz + ring_at[k]) : 0.0;
  };
  double u_next[NY], o_next[NY], ring_next[K > 0 ? K : 1];
  load(first, u_next, o_next, ring_next);

  const int self = C::kOrigin + ty * NY * P + tx;  // this thread's first cell in a shared plane
#pragma unroll(C::kUnroll)
  for (long p = first; p < last; ++p) {
    double u[NY], older[NY], ring[K > 0 ? K : 1];
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      u[j] = u_next[j];
      older[j] = o_next[j];
    }
#pragma unroll
    for (int k = 0; k < K; ++k) ring[k] = ring_next[k];
    load(p + 1, u_next, o_next, ring_next);

    // Level 0: plane p into the queue, its middle plane (p - R) and the ring into shared memory.
#pragma unroll
    for (int j = 0; j < NY; ++j) {
#pragma unroll
      for (int i = 0; i + 1 < Q; ++i) queue[0][i][j] = queue[0][i + 1][j];
      queue[0][Q - 1][j] = u[j];
      shared[self + j * P] = queue[0][R][j];
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (ring_shared[k] >= 0) shared[ring_shared[k]] = ring[k];
    __syncthreads();

#pragma unroll
    for (int s = 1; s <= T; ++s) {
      const double* plane = shared + (s - 1) * C::kPlane + self;
      double next[NY];
#pragma unroll
      for (int j = 0; j < NY; ++j) {
        const double prev = s == 1 ? older[j] : queue[s >= 2 ? s - 2 : 0][0][j];
        next[j] = leapfrog_cell<R, NY, P>(plane + j * P, queue[s - 1], j, l, prev);
      }
      if (s < T) {
        double* out = shared + s * C::kPlane + self;
#pragma unroll
        for (int j = 0; j < NY; ++j) {
#pragma unroll
          for (int i = 0; i + 1 < Q; ++i) queue[s < T ? s : 0][i][j] = queue[s < T ? s : 0][i + 1][j];
          queue[s < T ? s : 0][Q - 1][j] = next[j];
          out[j * P] = queue[s < T ? s : 0][R][j];
        }
        __syncthreads();
      } else {
        const long q = p - E;  // the plane levels T and T - 1 are at
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
  if (box.pitch_x * (box.pitch_y + 2 * C::kReach) >= (1L << 31))
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
