#pragma once
// Case "advection": the fused kernel, T time steps of the 27-point stencil per trip through
// memory (2.5D temporal blocking), a template over its tile shape so that
// bench/probes/probe_steps.cu can time shapes against each other.
//
// A block owns a tile of X x (Y * R) output columns and streams z planes through it, like the
// one-step kernel (stencil.cuh). Input planes (time level 0) arrive in a ring of S shared-memory
// slots by asynchronous copies, on the tile grown by T cells on every side. Stage s = 1 .. T
// turns level s - 1 into level s on the tile grown by T - s cells: each thread owns strips of R
// neighbouring cells in y, adds every arriving plane of level s - 1 to the three planes of level
// s it touches (27 FMAs per cell, in the one-step kernel's order: below, here, above; within a
// plane by row, then column), and hands the completed plane to stage s + 1 through one plane of
// shared memory; stage T stores to global memory. So level s of plane q is finished when input
// plane q + s arrives, and each launch leaves its box at one time level, as an exchange needs.
// Every cell of every level is the same FMA chain as in the one-step kernel, so a launch of T
// steps gives the bits of T one-step launches.
//
// The price: each stage computes its grown tile (redundancy), and each z run re-reads T planes
// at either end. Shapes wrapped in Factorized<> evaluate the stencil as three 3-point passes
// (push_split_strip; Options::factorized) with the same tiles, stages and state: 9 FMAs an
// update instead of 27, other bits. docs/results/temporal.md has the measurements.

#include <cuda_pipeline.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

/// One 3-point pass of the factorized stencil: w[0] m + w[1] z + w[2] p for the offsets -1, 0, +1,
/// in that order. A factorized update is a z pass over three y passes over three x passes each;
/// every kernel (tiles, fused, thin) evaluates it so, so all give the same bits.
__device__ __forceinline__ double split_pass(const double* w, double m, double z, double p) {
  return fma(w[2], p, fma(w[1], z, w[0] * m));
}

/// A fused tile: X x (Y R) output cells, R rows per strip, T steps, S ring slots for the input
/// planes; `Threads` threads (0: X * Y, a strip of the tile each; more give the grown tiles of the
/// first stages one strip a thread too); at least `MinBlocks` blocks resident per SM (registers
/// capped to fit), the plane loop unrolled `Unroll` times (so that the partial sums' hand-over
/// between planes needs no register moves).
template <int X, int Y, int R, int T, int S = 3, int MinBlocks = 1, int Unroll = 1, int Threads = 0>
struct StepsConfig {
  static_assert(T >= 1 && S >= 2 && (Threads == 0 || Threads >= X * Y));
  static constexpr int kX = X, kY = Y, kR = R, kT = T, kS = S, kMinBlocks = MinBlocks, kUnroll = Unroll;
  static constexpr int kThreads = Threads == 0 ? X * Y : Threads;
  static constexpr int kRows = Y * R;  // output rows of a tile
  /// Level l (0 = the input, T = the output) covers the tile grown by T - l cells.
  __host__ __device__ static constexpr int width(int level) { return X + 2 * (T - level); }
  __host__ __device__ static constexpr int height(int level) { return kRows + 2 * (T - level); }
  /// Stage s computes level s in strips of R rows: groups(s) of them per column.
  __host__ __device__ static constexpr int groups(int s) { return (height(s) + R - 1) / R; }
  __host__ __device__ static constexpr int strips(int s) { return width(s) * groups(s); }
  __host__ __device__ static constexpr int per_thread(int s) { return (strips(s) + kThreads - 1) / kThreads; }
  /// Rows of a level's plane in shared memory: those written (a strip's rows past the level's
  /// height, loaded input rows) or read by the next stage, whichever are more.
  __host__ __device__ static constexpr int rows(int level) {
    const int written = level == 0 ? height(0) : groups(level) * R;
    const int read = level < T ? groups(level + 1) * R + 2 : 0;
    return written > read ? written : read;
  }
  __host__ __device__ static constexpr int cells(int level) { return width(level) * rows(level); }
  /// Where a level's plane starts in shared memory: the S input slots first, then levels 1 .. T - 1.
  __host__ __device__ static constexpr int offset(int level) {
    int o = S * cells(0);
    for (int l = 1; l < level; ++l) o += cells(l);
    return o;
  }
  static constexpr int kSharedCells = offset(T);
  static constexpr int kLoads = (cells(0) + kThreads - 1) / kThreads;
  static constexpr bool kSplit = false;  // the 27-term chain (push_full_strip)
  /// Where strip i of stage s lies: row by row over the stage's width.
  struct Place {
    int column = 0, group = 0;
  };
  __host__ __device__ static constexpr Place place(int s, int i) { return {i % width(s), i / width(s)}; }
};

/// Shape C with its strips dealt so that whole warps run along a row: strip i of stage s takes
/// the tile's X middle columns one a lane (X a multiple of 32), then the 2 (T - s) border columns
/// of every group. Row by row, a warp's strips wrap from one row of a stage's plane to the next
/// (widths X + 2 (T - s)), and its shared loads and stores conflict in banks.
template <class C>
struct Lanes : C {
  static_assert(C::kX % 32 == 0 && C::kThreads % 32 == 0);
  __host__ __device__ static constexpr typename C::Place place(int s, int i) {
    const int m = C::kT - s, main = C::kX * C::groups(s);
    if (i < main) return {m + i % C::kX, i / C::kX};
    const int j = i - main, border = m > 0 ? 2 * m : 1, b = j % border;
    return {b < m ? b : C::kX + b, j / border};
  }
};

/// Shape C with the stencil as three 3-point passes, one per axis (push_split_strip; needs
/// Coefficients::factorized). The same tiles, stages and schedules.
template <class C>
struct Factorized : C {
  static constexpr bool kSplit = true;
};

/// The fused shapes the case uses, per number of steps (T = 1 is the one-step kernel of
/// stencil.cuh): 128 threads for T = 2 and 3 (3 blocks an SM, against 1 of 256), 256 for T = 4
/// (less redundancy). docs/results/temporal.md compares others (bench/probes/probe_steps.cu).
using kSteps2Config = StepsConfig<32, 4, 4, 2>;
using kSteps3Config = StepsConfig<32, 4, 4, 3>;
using kSteps4Config = StepsConfig<64, 4, 4, 4>;

/// The factorized form's shapes (Options::factorized): one step on the one-step kernel's tiles
/// (64 or 128 wide, 16 or 8 rows, 3 input slots); fused, 32 x 32 tiles in strips of 8 rows for
/// T = 2 (128 threads) and T = 3 (192 threads, so that each stage has at most one strip a
/// thread; 4 input slots; registers capped for 2 blocks an SM), 32 x 16 in strips of 4 rows for
/// T = 4 (8 rows there need more than 255 registers); strips dealt by Lanes (as fast as row by
/// row, within 4 %). bench/probes/probe_steps.cu compares others (docs/results/temporal.md).
using kSplitConfig = Factorized<StepsConfig<64, 4, 4, 1>>;
using kSplitWideConfig = Factorized<StepsConfig<128, 2, 4, 1>>;
using kSplitSteps2Config = Factorized<Lanes<StepsConfig<32, 4, 8, 2>>>;
using kSplitSteps3Config = Factorized<Lanes<StepsConfig<32, 4, 8, 3, 4, 2, 1, 192>>>;
using kSplitSteps4Config = Factorized<Lanes<StepsConfig<32, 4, 4, 4>>>;

/// One strip of stage s (R cells of level s at `column`, rows group * R ..): adds plane `in` of
/// level s - 1 (rows C::width(s - 1) apart) to the partial sums of the two planes above the one it
/// completes (`below`, `here`: the planes it lies above and at), and hands the completed plane to
/// done(column, group, hi). The one-step kernel's order: every cell is one chain of 27 FMAs over
/// the planes below, at and above it, each plane by row, then column.
template <class C, int s, class Done>
__device__ __forceinline__ void push_full_strip(const double* in, double (&below)[C::kR], double (&here)[C::kR],
                                                const Coefficients& c, int column, int group, Done&& done) {
  constexpr int R = C::kR, W_in = C::width(s - 1);
  const double* t = in + group * R * W_in + column;
  double above[R], hi[R];
#pragma unroll
  for (int o = 0; o < R; ++o) {
    above[o] = 0;
    hi[o] = below[o];
  }
#pragma unroll
  for (int r = 0; r < R + 2; ++r)
#pragma unroll
    for (int x = 0; x < 3; ++x) {
      const double u = t[r * W_in + x];
#pragma unroll
      for (int o = 0; o < R; ++o) {
        const int j = r - o;
        if (j < 0 || j > 2) continue;
        above[o] = fma(c.a[3 * j + x], u, above[o]);    // the plane below output q + 1
        here[o] = fma(c.a[9 + 3 * j + x], u, here[o]);  // at output q
        hi[o] = fma(c.a[18 + 3 * j + x], u, hi[o]);     // above output q - 1, now complete
      }
    }
  done(column, group, hi);
#pragma unroll
  for (int o = 0; o < R; ++o) {
    below[o] = here[o];
    here[o] = above[o];
  }
}

/// The same strip with the factorized stencil (split_pass's order, above): plane `in`'s x
/// pass on the strip's R + 2 rows, then its y pass on the R cells gives S(p); `below` and `here`
/// hold S(p - 2) and S(p - 1), and the z pass completes the plane below `in`. 9 R + 6 FMAs a strip
/// against the full chain's 27 R.
template <class C, int s, class Done>
__device__ __forceinline__ void push_split_strip(const double* in, double (&below)[C::kR], double (&here)[C::kR],
                                                 const Coefficients& c, int column, int group, Done&& done) {
  constexpr int R = C::kR, W_in = C::width(s - 1);
  const double* t = in + group * R * W_in + column;
  double sx[R + 2], sy[R], hi[R];
#pragma unroll
  for (int r = 0; r < R + 2; ++r) sx[r] = split_pass(c.w, t[r * W_in], t[r * W_in + 1], t[r * W_in + 2]);
#pragma unroll
  for (int o = 0; o < R; ++o) {
    sy[o] = split_pass(c.w + 3, sx[o], sx[o + 1], sx[o + 2]);
    hi[o] = split_pass(c.w + 6, below[o], here[o], sy[o]);
  }
  done(column, group, hi);
#pragma unroll
  for (int o = 0; o < R; ++o) {
    below[o] = here[o];
    here[o] = sy[o];
  }
}

/// push_full_strip or push_split_strip, as shape C says.
template <class C, int s, class Done>
__device__ __forceinline__ void push_strip(const double* in, double (&below)[C::kR], double (&here)[C::kR],
                                           const Coefficients& c, int column, int group, Done&& done) {
  if constexpr (C::kSplit)
    push_split_strip<C, s>(in, below, here, c, column, group, done);
  else
    push_full_strip<C, s>(in, below, here, c, column, group, done);
}

/// Stage s of a fused tile: this thread's strips of level s, each with the partial sums of the
/// two planes (below and here) that the next arriving plane of level s - 1 still adds to.
template <class C, int s>
struct FusedStage {
  static constexpr int K = C::per_thread(s), R = C::kR;
  double below[K][R] = {}, here[K][R] = {};

  /// Adds plane `in` of level s - 1 to every strip; done(column, group, hi) takes each strip's
  /// completed plane (the one below `in`).
  template <class Done>
  __device__ __forceinline__ void add(const double* in, const Coefficients& c, int tid, Done&& done) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int i = tid + k * C::kThreads;
      // With X * Y threads k = 0 always has one: strips(s) >= strips(T) = X * Y.
      if ((k > 0 || C::kThreads > C::kX * C::kY) && i >= C::strips(s)) continue;
      const auto at = C::place(s, i);
      push_strip<C, s>(in, below[k], here[k], c, at.column, at.group, done);
    }
  }
};

/// Stages s .. T: each hands its completed plane to the next through shared memory.
template <class C, int s = 1, bool last = (s == C::kT)>
struct FusedStages {
  FusedStage<C, s> stage;
  FusedStages<C, s + 1> rest;
  template <class Store>
  __device__ __forceinline__ void add(const double* in, double* shared, const Coefficients& c, int tid, Store&& store) {
    double* level = shared + C::offset(s);
    stage.add(in, c, tid, [&](int column, int group, const double(&hi)[C::kR]) {
#pragma unroll
      for (int o = 0; o < C::kR; ++o) level[(group * C::kR + o) * C::width(s) + column] = hi[o];
    });
    __syncthreads();  // level s complete for stage s + 1; stage s + 1 done with its last plane
    rest.add(level, shared, c, tid, store);
  }
};

template <class C, int s>
struct FusedStages<C, s, true> {
  FusedStage<C, s> stage;
  template <class Store>
  __device__ __forceinline__ void add(const double* in, double*, const Coefficients& c, int tid, Store&& store) {
    stage.add(in, c, tid, store);
  }
};

/// What a block of a fused kernel knows about its tile: where it lies, its z run, and the input
/// ring (S slots of level 0 at the start of shared memory) that it fills by asynchronous copies.
template <class C>
struct FusedTile {
  static constexpr int T = C::kT, R = C::kR, W0 = C::width(0);
  const double* in;
  double* out;
  double* ring;
  Box box;
  int tid;
  long x0, y0, x_last, y_last, z_begin, z_end, sz;
  int offset[C::kLoads];  // this thread's cells of a level-0 plane, from the plane's start

  __device__ FusedTile(const double* in_, double* out_, double* shared, const Box& b, int run, int shift)
      : in(in_), out(out_), ring(shared), box(b), tid(static_cast<int>(threadIdx.x)) {
    x0 = box.x0 - shift + blockIdx.x * static_cast<long>(C::kX);  // tiles start aligned
    y0 = box.y0 + blockIdx.y * static_cast<long>(C::kRows);
    x_last = box.x0 + box.nx;
    y_last = box.y0 + box.ny;
    z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
    z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
    sz = box.pitch_x * box.pitch_y;
    // Level 0's cell (lx, ly) is the stored cell (x0 - T + lx, y0 - T + ly); cells beyond the box
    // grown by T read the nearest one inside (their levels feed no stored cell).
#pragma unroll
    for (int k = 0; k < C::kLoads; ++k) {
      const int e = tid + k * C::kThreads < C::cells(0) ? tid + k * C::kThreads : C::cells(0) - 1;
      long gx = x0 - T + e % W0, gy = y0 - T + e / W0;
      gx = gx < box.x0 - T ? box.x0 - T : (gx < x_last + T ? gx : x_last + T - 1);
      gy = gy < box.y0 - T ? box.y0 - T : (gy < y_last + T ? gy : y_last + T - 1);
      offset[k] = static_cast<int>(gy * box.pitch_x + gx);
    }
  }
  /// The first input plane.
  [[nodiscard]] __device__ long first() const { return z_begin - T; }
  /// Input plane z's ring slot.
  [[nodiscard]] __device__ double* slot(long z) const { return ring + (z - first()) % C::kS * C::cells(0); }
  /// Input plane z into its slot (nothing past the last one); always commits a group.
  __device__ void fetch(long z) const {
    if (z < z_end + T) {
      double* to = slot(z);
      const double* plane = in + z * sz;
#pragma unroll
      for (int k = 0; k < C::kLoads; ++k)
        if (tid + k * C::kThreads < C::cells(0))
          __pipeline_memcpy_async(to + tid + k * C::kThreads, plane + offset[k], sizeof(double));
    }
    __pipeline_commit();
  }
  /// Stores a strip of output plane q (column and group of level T, which is the tile).
  __device__ void store(long q, int column, int group, const double (&hi)[R]) const {
    const long x = x0 + column;
    if (q < z_begin || q >= z_end || x < box.x0 || x >= x_last) return;
    double* o = out + q * sz + x;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (y0 + group * R + r < y_last) o[(y0 + group * R + r) * box.pitch_x] = hi[r];
  }
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    stencil_steps_kernel(const double* __restrict__ in, double* __restrict__ out, Box box, Coefficients c, int run,
                         int shift) {
  constexpr int T = C::kT, R = C::kR;
  extern __shared__ double shared[];
  const FusedTile<C> tile(in, out, shared, box, run, shift);
  for (int s = 0; s < C::kS - 1; ++s) tile.fetch(tile.first() + s);

  FusedStages<C> stages;
#pragma unroll(C::kUnroll)
  for (long p = tile.first(); p < tile.z_end + T; ++p) {
    __pipeline_wait_prior(C::kS - 2);  // input plane p has landed (for this thread's copies)
    __syncthreads();                   // ... and for everyone's; all are done with plane p - 1
    tile.fetch(p + C::kS - 1);         // into plane p - 1's slot
    stages.add(tile.slot(p), shared, c, tile.tid,
               [&](int column, int group, const double(&hi)[R]) { tile.store(p - T, column, group, hi); });
  }
}

/// Where the tiles of shape C go over `box`: tiles aligned as launch_stencil_tiles' (rows 128
/// bytes apart or a multiple: tiles start on a 128-byte boundary at or before the box); z runs as
/// long as leave 2048 blocks, each re-reading 2 T planes.
struct TileGrid {
  dim3 grid;
  int run = 0;
  int shift = 0;
};

template <class C>
TileGrid tile_grid(const double* out, const Box& box) {
  if (box.pitch_x * (box.pitch_y + 2 * C::kT) >= (1L << 31))
    throw std::invalid_argument("cases::advection: planes of 2^31 cells or more are beyond the fused kernel");
  constexpr long kLine = 128 / sizeof(double);
  const long shift = box.pitch_x % kLine == 0
                         ? static_cast<long>(reinterpret_cast<std::uintptr_t>(out + box.x0) % 128 / sizeof(double))
                         : 0;
  const long tiles_x = (box.nx + shift + C::kX - 1) / C::kX;
  const long columns = tiles_x * ((box.ny + C::kRows - 1) / C::kRows);
  long run = 128;
  while (run > 1 && columns * ((box.nz + run - 1) / run) < 2048) run /= 2;
  return TileGrid{dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>((box.ny + C::kRows - 1) / C::kRows),
                       static_cast<unsigned>((box.nz + run - 1) / run)),
                  static_cast<int>(run), static_cast<int>(shift)};
}

/// Launches the fused kernel of shape C over `box`.
template <class C>
void launch_stencil_steps_tiles(const double* in, double* out, const Box& box, const Coefficients& c,
                                cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const TileGrid t = tile_grid<C>(out, box);
  constexpr std::size_t bytes = sizeof(double) * C::kSharedCells;
  if constexpr (bytes > 48 * 1024)  // above the default limit it must be asked for (per device)
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(stencil_steps_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes)));
  stencil_steps_kernel<C><<<t.grid, C::kThreads, bytes, stream>>>(in, out, box, c, t.run, t.shift);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace advection
}  // namespace cases
