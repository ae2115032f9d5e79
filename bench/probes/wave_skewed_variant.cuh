#pragma once
// probe_wave's skewed (wavefront) variant of the wave case's streaming kernel: the tiling whose
// schedule cases/wave/skewed.{hpp,cpp} and skewed_pipeline.{hpp,cpp} prove on the host
// (cases/wave/README.md, "The skewed kernel worked out further"). No cell is computed twice.
//
// A tile stores X x Y columns. Its level l (l = 0 .. T) lies on the X x Y columns moved (T - l) R
// towards +x and +y from the stored ones, so level l needs level l - 1 on strips 2 R wide left of
// and above its own footprint, which its -x, -y and -x-y neighbours computed. The block's
// W x H threads keep their columns at every level (W = X + (T + 1) R, H = Y + (T + 1) R; level l's
// footprint starts at column a_l = (T - l + 1) R of the block); each computes every level at its
// columns as the streaming kernel does, and where a level's cell lies on such a strip, the
// neighbour's value (the same bits, computed once) replaces the garbage it computed.
//
//  - Tickets: a block takes its tile from an atomicAdd, tiles numbered x fastest, then y, then z
//    runs (or z runs fastest: kZFirst), so the -x, -y and -x-y neighbours hold smaller tickets:
//    they run or ran, and a block that waits for them cannot deadlock, on any number of SMs.
//  - Publishing: at every input plane, a tile writes level s = 1 .. T - 1 (the plane it computed
//    at that input plane) of its cells within 2 R of its +x edge and of its +y edge (the corner's
//    in both) to a global buffer that holds every plane (never reused in a launch), and after the
//    barrier that follows its stage T - 1 thread 0 stores the number of input planes published
//    (a release at GPU scope), every kEvery planes (4 gained 3 % on 1, 16 lost 30 %: runs 173-175).
//  - Reading: at input plane i, thread 0 waits until each neighbour published plane i + 1 (an
//    acquire load, made again only while the value it last saw falls short: polled at every plane,
//    the loads cost a fifth of the time at T = 2, run 173), then the block copies the strips of plane i + 1
//    into shared memory (cp.async, 16 bytes, through L2 only), a plane ahead of their use.
// Every cell gives the bits of T column-kernel steps (probe_wave checks it), but the kernel is
// slower than the streaming one: cases/wave/README.md, "The skewed kernel on the GPU", says why.
// The cells of tiles left of or above the box (the -1 column and row of tiles) compute the low
// edge of every level from the periodic ghosts, T R deep; their own -x or -y strips are garbage
// that reaches no stored cell (X, Y >= 2 T R).

#include <cuda/atomic>
#include <type_traits>

#include "wave_staged.cuh"  // staged::copy16, commit, wait_all_but
#include "wave_steps.cuh"   // leapfrog_cell, WaveLevels, Box

namespace probe {

template <int R, int T, int W, int TY, int NY, int Every = 1, int MinBlocks = 1, bool ZFirst = false, int Exchange = 2>
struct SkewedConfig {
  /// 2: the kernel; for timing only, wrong results: 1 leaves out the waits and flags (the strips
  /// still written and copied), 0 also the strips' writes and copies (what is left: the masks'
  /// tests and the staged reads)
  static constexpr int kExchange = Exchange;
  static_assert(R >= 1 && T >= 2 && NY >= 1 && Every >= 1);
  static constexpr int kMinBlocks = MinBlocks;
  /// Tickets z run fastest (consecutive tickets in different z runs, whose tiles do not wait on
  /// each other) instead of x fastest.
  static constexpr bool kZFirst = ZFirst;
  static constexpr int kR = R, kT = T, kW = W, kTY = TY, kNY = NY, kH = TY * NY, kThreads = W * TY;
  static constexpr int kEvery = Every;  ///< a tile's flag is raised every kEvery input planes (and at its last)
  static constexpr int kQueue = 2 * R + 1, kReach = T * R;
  static constexpr int kX = W - (T + 1) * R;  ///< stored columns of a tile
  static constexpr int kY = kH - (T + 1) * R;
  static_assert(kX >= 2 * T * R && kY >= 2 * T * R, "the -1 tiles' garbage must stay off the cells they give");
  static constexpr int kPitch = W;
  static constexpr int kPlane = (kH + 2 * R) * W + 2 * R;
  static constexpr int kOrigin = R * W + R;
  /// A level's published cells a plane (kSlot doubles): the right strip, cell (r, c) of the
  /// footprint with c >= X - 2R at r 2R + c - (X - 2R), then the bottom strip, r >= Y - 2R, at
  /// 2R Y + (r - (Y - 2R)) X + c (the corner cells in both).
  static constexpr int kSlot = 2 * R * (kX + kY);
  /// What a tile stages a level and plane: the x area, (Y + 2R) rows of 2R (the -x-y neighbour's
  /// corner, then the -x neighbour's right strip), then the y area, 2R rows of X (the -y
  /// neighbour's bottom strip).
  static constexpr int kXArea = 2 * R * (kY + 2 * R);
  static constexpr int kStage = kXArea + 2 * R * kX;
  static constexpr int kStaged = T * kPlane;  ///< where the staged strips start in shared memory
  static constexpr std::size_t kSharedBytes = sizeof(double) * (static_cast<std::size_t>(T) * kPlane + 2 * (T - 1) * kStage);
  static_assert(kPlane % 2 == 0 && kSlot % 2 == 0 && kXArea % 2 == 0 && kStage % 2 == 0, "16-byte copies");
};

/// The launch's scratch: tickets, the planes each tile published, the strips.
struct SkewedScratch {
  int* counter = nullptr;
  int* flags = nullptr;
  double* edge = nullptr;
  int tiles_x = 0, tiles_y = 0, runs = 0, iters = 0;  ///< iters: input planes of a full z run
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    skewed_kernel(cases::wave::WaveLevels lv, cases::wave::Box box, cases::wave::Leapfrog l, int run, SkewedScratch st) {
  constexpr int R = C::kR, T = C::kT, W = C::kW, NY = C::kNY, Q = C::kQueue, P = C::kPitch, E = C::kReach;
  constexpr int X = C::kX, Y = C::kY;
  extern __shared__ __align__(16) double shared[];
  __shared__ int ticket_shared;
  if (threadIdx.x == 0) ticket_shared = atomicAdd(st.counter, 1);
  __syncthreads();
  const int ticket = ticket_shared;
  int ti, tj, tz;
  if constexpr (C::kZFirst) {
    tz = ticket % st.runs;
    ti = ticket / st.runs % st.tiles_x;
    tj = ticket / st.runs / st.tiles_x;
  } else {
    ti = ticket % st.tiles_x;
    tj = ticket / st.tiles_x % st.tiles_y;
    tz = ticket / (st.tiles_x * st.tiles_y);
  }
  const int tile = (tz * st.tiles_y + tj) * st.tiles_x + ti;  // flags and strips by tile, not ticket
  const bool has_x = ti > 0, has_y = tj > 0;
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const long x0 = box.x0 + (ti - 1) * static_cast<long>(X) - R;  // column 0 of the block
  const long y0 = box.y0 + (tj - 1) * static_cast<long>(Y) - R;
  const long z_begin = box.z0 + tz * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  const auto clamp_x = [&](long gx) { return gx < box.x0 - E ? box.x0 - E : (gx < box.x0 + box.nx + E ? gx : box.x0 + box.nx + E - 1); };
  const auto clamp_y = [&](long gy) { return gy < box.y0 - E ? box.y0 - E : (gy < box.y0 + box.ny + E ? gy : box.y0 + box.ny + E - 1); };

  // Level 0 at every column (from memory); u^{n-1} on level 1's footprint; level T stored on its own.
  const long gx = x0 + tx;
  const long cx = clamp_x(gx);
  const bool older_x = tx >= T * R && tx < T * R + X && gx >= box.x0 - (E - R) && gx < box.x0 + box.nx + (E - R);
  const bool store_x = tx >= R && tx < R + X && gx >= box.x0 && gx < box.x0 + box.nx;
  int at[NY];
  bool older_at[NY], store_at[NY];
#pragma unroll
  for (int j = 0; j < NY; ++j) {
    const int row = ty * NY + j;
    const long gy = y0 + row;
    at[j] = static_cast<int>(clamp_y(gy) * box.pitch_x + cx);
    older_at[j] = older_x && row >= T * R && row < T * R + Y && gy >= box.y0 - (E - R) && gy < box.y0 + box.ny + (E - R);
    store_at[j] = store_x && row >= R && row < R + Y && gy >= box.y0 && gy < box.y0 + box.ny;
  }

  double queue[T][Q][NY];
#pragma unroll
  for (int a = 0; a < T; ++a)
#pragma unroll
    for (int i = 0; i < Q; ++i)
#pragma unroll
      for (int j = 0; j < NY; ++j) queue[a][i][j] = 0;

  const long first = z_begin - E, last = z_end + E;
  const int iters = static_cast<int>(last - first);
  const long older_first = z_begin - (E - R), older_last = z_end + (E - R);
  auto load = [&](long p, double (&u)[NY], double (&o)[NY]) {
    const long q = p - R;
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      u[j] = p < last ? __ldg(lv.current + p * sz + at[j]) : 0.0;
      o[j] = q >= older_first && q < older_last && older_at[j] ? lv.older[q * sz + at[j]] : 0.0;
    }
  };

  // The neighbours' progress and strips.
  const int nx_ = tile - 1, ny_ = tile - st.tiles_x, nxy = tile - 1 - st.tiles_x;
  // Thread 0 keeps what it last saw of the neighbours' flags and reads a flag again (an acquire)
  // only while that falls short, so that a neighbour far enough ahead costs no load.
  int seen_x = 0, seen_y = 0, seen_xy = 0;
  const auto wait_for = [&](int planes) {  // thread 0: the neighbours published `planes` input planes
    if (threadIdx.x != 0 || C::kExchange < 2) return;
    const auto wait_one = [&](bool need, int id, int& seen) {
      if (!need) return;
      cuda::atomic_ref<int, cuda::thread_scope_device> flag(st.flags[id]);
      while (seen < planes) {
        seen = flag.load(cuda::memory_order_acquire);
        if (seen < planes) __nanosleep(32);
      }
    };
    wait_one(has_x, nx_, seen_x);
    wait_one(has_y, ny_, seen_y);
    wait_one(has_x && has_y, nxy, seen_xy);
  };
  const auto slot = [&](int tile, int s, int it) {  // level s's strips of input plane `it` of a tile
    return st.edge + ((static_cast<long>(tile) * st.iters + it) * (T - 1) + (s - 1)) * C::kSlot;
  };
  const auto stage_strips = [&](int it, int buffer) {  // cp.async of plane it's strips
    if constexpr (C::kExchange == 0) return;
    constexpr int kPairs = C::kStage / 2, kCorner = 4 * R * R;
    for (int i = static_cast<int>(threadIdx.x); i < (T - 1) * kPairs; i += C::kThreads) {
      const int s = i / kPairs + 1, k = 2 * (i % kPairs);
      const double* from;
      if (k < kCorner) {
        if (!has_x || !has_y) continue;
        from = slot(nxy, s, it) + (Y - 2 * R) * 2 * R + k;
      } else if (k < C::kXArea) {
        if (!has_x) continue;
        from = slot(nx_, s, it) + (k - kCorner);
      } else {
        if (!has_y) continue;
        from = slot(ny_, s, it) + 2 * R * Y + (k - C::kXArea);
      }
      cases::wave::staged::copy16(shared + C::kStaged + (buffer * (T - 1) + s - 1) * C::kStage + k, from, 2);
    }
    cases::wave::staged::commit();
  };
  // Cell (tx, row j) of level s, k = (s - 1) NY + j: bit k of `from` if it comes from the staged
  // strips (bit K + k: from the y area), bit k of `to` if it goes to the right strip (K + k: to the
  // bottom strip). Where, from two bases and a constant for each (s, j).
  constexpr int K = (T - 1) * NY;
  using Mask = std::conditional_t<(2 * K <= 32), unsigned, unsigned long long>;
  static_assert(2 * K <= 64);
  Mask from = 0, to = 0;
#pragma unroll
  for (int s = 1; s < T; ++s)
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      const int a = (T - s + 1) * R, c = tx - a, r = ty * NY + j - a, k = (s - 1) * NY + j;
      const bool xs = c < 0 && c >= -2 * R && r >= -2 * R && r < Y && has_x && (r >= 0 || has_y);
      const bool ys = r < 0 && r >= -2 * R && c >= 0 && c < X && has_y;
      from |= (xs || ys ? Mask{1} : Mask{0}) << k;
      from |= (ys ? Mask{1} : Mask{0}) << (K + k);
      const bool inside = c >= 0 && c < X && r >= 0 && r < Y;
      to |= (inside && c >= X - 2 * R ? Mask{1} : Mask{0}) << k;
      to |= (inside && r >= Y - 2 * R ? Mask{1} : Mask{0}) << (K + k);
    }
  const int b1 = ty * NY * 2 * R + tx, b3 = ty * NY * X + tx;

  double u_next[NY], o_next[NY];
  load(first, u_next, o_next);
  wait_for(1);
  __syncthreads();
  stage_strips(0, 0);

  const int self = C::kOrigin + ty * NY * P + tx;
  for (int it = 0; it < iters; ++it) {
    const long p = first + it;
    double u[NY], older[NY];
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      u[j] = u_next[j];
      older[j] = o_next[j];
    }
    load(p + 1, u_next, o_next);
    wait_for(it + 2 < iters ? it + 2 : iters);

#pragma unroll
    for (int j = 0; j < NY; ++j) {
#pragma unroll
      for (int i = 0; i + 1 < Q; ++i) queue[0][i][j] = queue[0][i + 1][j];
      queue[0][Q - 1][j] = u[j];
      shared[self + j * P] = queue[0][R][j];
    }
    cases::wave::staged::wait_all_but<0>();  // this plane's strips
    __syncthreads();
    if (it + 1 < iters) stage_strips(it + 1, (it + 1) & 1);
    const double* strips = shared + C::kStaged + (it & 1) * (T - 1) * C::kStage;
    double* const mine = slot(tile, 1, it);

#pragma unroll
    for (int s = 1; s <= T; ++s) {
      const double* plane = shared + (s - 1) * C::kPlane + self;
      double next[NY];
#pragma unroll
      for (int j = 0; j < NY; ++j) {
        const double prev = s == 1 ? older[j] : queue[s >= 2 ? s - 2 : 0][0][j];
        next[j] = cases::wave::leapfrog_cell<R, NY, P>(plane + j * P, queue[s - 1], j, l, prev);
      }
      if (s < T) {
        double* out = shared + s * C::kPlane + self;
        const int a = (T - s + 1) * R;
        const double* level_strips = strips + (s - 1) * C::kStage;
        double* const level_slot = mine + (s - 1) * C::kSlot;
#pragma unroll
        for (int j = 0; j < NY; ++j) {
          const int k = (s - 1) * NY + j;
          if ((from >> k) & 1)
            next[j] = (from >> (K + k)) & 1 ? level_strips[b3 + j * X + C::kXArea + (2 * R - a) * X - a]
                                     : level_strips[b1 + j * 2 * R + 4 * R * R + 2 * R - a * (2 * R + 1)];
          if (C::kExchange > 0 && ((to >> k) & 1)) level_slot[b1 + j * 2 * R - a * (2 * R + 1) - X + 2 * R] = next[j];
          if (C::kExchange > 0 && ((to >> (K + k)) & 1)) level_slot[b3 + j * X + 2 * R * Y + (2 * R - Y - a) * X - a] = next[j];
#pragma unroll
          for (int i = 0; i + 1 < Q; ++i) queue[s < T ? s : 0][i][j] = queue[s < T ? s : 0][i + 1][j];
          queue[s < T ? s : 0][Q - 1][j] = next[j];
          out[j * P] = queue[s < T ? s : 0][R][j];
        }
        __syncthreads();
        if (C::kExchange == 2 && s == T - 1 && threadIdx.x == 0 && ((it + 1) % C::kEvery == 0 || it + 1 == iters)) {
          cuda::atomic_ref<int, cuda::thread_scope_device> flag(st.flags[tile]);
          flag.store(it + 1, cuda::memory_order_release);
        }
      } else {
        const long q = p - E;
        if (q >= z_begin && q < z_end) {
#pragma unroll
          for (int j = 0; j < NY; ++j)
            if (store_at[j]) {
              const long o = q * sz + at[j];
              lv.next[o] = next[j];
              lv.next_older[o] = queue[T - 1][R][j];
            }
        }
      }
    }
  }
}

/// The tiles over `box`, z runs of `want` planes (0: as long as leave 2048 blocks, at most 128);
/// the scratch it needs.
template <class C>
SkewedScratch make_skewed_scratch(const cases::wave::Box& box, long& run, long want = 0) {
  SkewedScratch st;
  st.tiles_x = static_cast<int>((box.nx + C::kX - 1) / C::kX) + 1;
  st.tiles_y = static_cast<int>((box.ny + C::kY - 1) / C::kY) + 1;
  run = 128;
  while (run > 8 && static_cast<long>(st.tiles_x) * st.tiles_y * ((box.nz + run - 1) / run) < 2048) run /= 2;
  if (want > 0) run = want < box.nz ? want : box.nz;
  st.runs = static_cast<int>((box.nz + run - 1) / run);
  st.iters = static_cast<int>(run + 2 * C::kReach);
  const long tiles = static_cast<long>(st.tiles_x) * st.tiles_y * st.runs;
  CUSH_CUDA_CHECK(cudaMalloc(&st.counter, sizeof(int) * (1 + tiles)));
  st.flags = st.counter + 1;
  CUSH_CUDA_CHECK(cudaMalloc(&st.edge, sizeof(double) * tiles * (C::kT - 1) * st.iters * C::kSlot));
  return st;
}

inline void free_skewed_scratch(SkewedScratch& st) {
  CUSH_CUDA_CHECK(cudaFree(st.counter));
  CUSH_CUDA_CHECK(cudaFree(st.edge));
  st = SkewedScratch{};
}

/// One launch: the tickets and flags zeroed, then the kernel.
template <class C>
void launch_skewed(const cases::wave::WaveLevels& lv, const cases::wave::Box& box, const cases::wave::Leapfrog& l,
                   long run, const SkewedScratch& st, cudaStream_t stream) {
  const long tiles = static_cast<long>(st.tiles_x) * st.tiles_y * st.runs;
  CUSH_CUDA_CHECK(cudaMemsetAsync(st.counter, 0, sizeof(int) * (1 + tiles), stream));
  if constexpr (C::kSharedBytes > 48 * 1024)
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(skewed_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(C::kSharedBytes)));
  skewed_kernel<C><<<static_cast<unsigned>(tiles), C::kThreads, C::kSharedBytes, stream>>>(lv, box, l, static_cast<int>(run), st);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace probe
