#pragma once
// Case "advection": the fused kernel with skewed stages, one barrier per plane.
//
// stencil_steps.cuh's kernel runs its T stages one after another on each arriving plane, with a
// barrier between them (stage s + 1 reads the plane stage s has just written), and gives each
// stage's strips to the threads separately: a stage with a few strips more than threads keeps a
// few warps busy while the others wait at the next barrier. Barrier waits were the largest stall
// (ncu, docs/results/temporal.md). Here stage s reads the plane stage s - 1 wrote one plane
// earlier, from the other half of a double-buffered plane, so the stages of a plane are
// independent: one barrier per plane, and the strips of all stages form one list, each stage's
// padded to whole warps, dealt to the threads in passes (a thread keeps its strips, and their
// partial sums in registers, for the whole run). Each stage adds a plane of delay: output plane
// q leaves at plane q + 2 T - 1 instead of q + T. The FMAs are push_strip's: the same bits.

#include "stencil_steps.cuh"

namespace cases {
namespace advection {

/// The skewed kernel's strips and shared memory for shape C.
template <class C>
struct SkewedPlan {
  static_assert(C::kThreads % 32 == 0, "the skewed kernel deals strips by whole warps");
  __host__ __device__ static constexpr int padded(int s) { return (C::strips(s) + 31) / 32 * 32; }
  /// The items of stages 1 .. s (end(0) = 0).
  __host__ __device__ static constexpr int end(int s) {
    int e = 0;
    for (int l = 1; l <= s; ++l) e += padded(l);
    return e;
  }
  static constexpr int kItems = end(C::kT);
  static constexpr int kPasses = (kItems + C::kThreads - 1) / C::kThreads;
  /// Where level `level`'s plane of `parity` starts: the S input slots first, then two planes of
  /// each level 1 .. T - 1.
  __host__ __device__ static constexpr int plane(int level, int parity) {
    int o = C::kS * C::cells(0);
    for (int l = 1; l < level; ++l) o += 2 * C::cells(l);
    return o + parity * C::cells(level);
  }
  static constexpr int kSharedCells = plane(C::kT, 0);
};

/// Strip `strip` of stage s at plane p: reads the plane of level s - 1 written at p - 1 (or input
/// plane p), writes level s's plane of parity p (or stores output plane p - 2 T + 1).
template <class C, int s>
__device__ __forceinline__ void skewed_strip(const FusedTile<C>& tile, double* shared, long p, int strip,
                                             double (&below)[C::kR], double (&here)[C::kR], const Coefficients& c) {
  using Plan = SkewedPlan<C>;
  constexpr int R = C::kR, W = C::width(s);
  if (strip >= C::strips(s)) return;  // a warp's padding
  const auto at = C::place(s, strip);
  const double* in = s == 1 ? tile.slot(p) : shared + Plan::plane(s - 1, static_cast<int>((p - 1) & 1));
  if constexpr (s < C::kT) {
    double* level = shared + Plan::plane(s, static_cast<int>(p & 1));
    push_strip<C, s>(in, below, here, c, at.column, at.group, [&](int column, int group, const double(&hi)[R]) {
#pragma unroll
      for (int o = 0; o < R; ++o) level[(group * R + o) * W + column] = hi[o];
    });
  } else {
    push_strip<C, s>(in, below, here, c, at.column, at.group, [&](int column, int group, const double(&hi)[R]) {
      tile.store(p - 2 * C::kT + 1, column, group, hi);
    });
  }
}

/// Item `item` of the list: the strip of the stage it falls in (uniform across a warp).
template <class C, int s = 1>
__device__ __forceinline__ void skewed_item(const FusedTile<C>& tile, double* shared, long p, int item,
                                            double (&below)[C::kR], double (&here)[C::kR], const Coefficients& c) {
  using Plan = SkewedPlan<C>;
  if constexpr (s == C::kT) {
    skewed_strip<C, s>(tile, shared, p, item - Plan::end(s - 1), below, here, c);
  } else {
    if (item < Plan::end(s)) skewed_strip<C, s>(tile, shared, p, item - Plan::end(s - 1), below, here, c);
    else skewed_item<C, s + 1>(tile, shared, p, item, below, here, c);
  }
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    stencil_skewed_kernel(const double* __restrict__ in, double* __restrict__ out, Box box, Coefficients c, int run,
                          int shift) {
  using Plan = SkewedPlan<C>;
  constexpr int T = C::kT, R = C::kR, P = Plan::kPasses;
  extern __shared__ double shared[];
  const FusedTile<C> tile(in, out, shared, box, run, shift);
  for (int s = 0; s < C::kS - 1; ++s) tile.fetch(tile.first() + s);
  double below[P][R] = {}, here[P][R] = {};
#pragma unroll(C::kUnroll)
  for (long p = tile.first(); p < tile.z_end + 2 * T - 1; ++p) {
    __pipeline_wait_prior(C::kS - 2);  // input plane p has landed (for this thread's copies)
    __syncthreads();                   // ... and for everyone's; every plane of p - 1 is written
    tile.fetch(p + C::kS - 1);         // into plane p - 1's slot
#pragma unroll
    for (int j = 0; j < P; ++j) {
      const int item = tile.tid + j * C::kThreads;
      if (j + 1 < P || item < Plan::kItems) skewed_item<C>(tile, shared, p, item, below[j], here[j], c);
    }
  }
}

/// Launches the skewed kernel of shape C over `box` (tiles and runs as tile_grid says).
template <class C>
void launch_stencil_skewed_tiles(const double* in, double* out, const Box& box, const Coefficients& c,
                                 cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const TileGrid t = tile_grid<C>(out, box);
  constexpr std::size_t bytes = sizeof(double) * SkewedPlan<C>::kSharedCells;
  if constexpr (bytes > 48 * 1024)  // above the default limit it must be asked for (per device)
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(stencil_skewed_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes)));
  stencil_skewed_kernel<C><<<t.grid, C::kThreads, bytes, stream>>>(in, out, box, c, t.run, t.shift);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace advection
}  // namespace cases
