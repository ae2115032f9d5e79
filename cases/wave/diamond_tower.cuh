#pragma once
// Case "wave": one tower of DiamondTorre's schedule (diamond.hpp) as a GPU thread runs it, for one
// z node of the tower's columns: the wave equation at order 2 in FP64. The same functions run on
// the host, where a test plays every z node of a tower in turn between the barriers
// (test_diamond_tower.cu), so the kernel's bookkeeping is checked against the host model on a
// machine without a GPU; bench/probes/probe_diamond.cu runs them as a kernel.
//
// A tower's column runs whole in one block (a thread a z node), or, taller than a block holds, in
// a thread-block cluster of `chunks` blocks of `lanes` threads stepping together: block b holds
// nodes b lanes .. (b + 1) lanes - 1. A block's plane of level s holds, per diamond column, its
// lanes' values in slots 1 .. lanes and two halo slots: slot 0, the node below its first (the
// last lane of the block below, or, periodic, of the last block), and slot lanes + 1, the node
// above its last. Those two lanes publish into the neighbours' halo slots too (the other block's
// shared memory in a cluster), so that after the step's barrier every read is in the block's own
// plane. (Chunks that recompute ghost nodes instead cannot run in place: a chunk would overwrite
// nodes that its neighbour's ghosts still have to read at earlier levels.)
//
// A thread keeps, for its z node, two levels of the diamond's 2R^2 + 2R + 1 columns and one more
// column a row on each side: on the left the column the diamond left at the step before (written
// back after this step), on the right the column it takes in next (read a step ahead; its level s
// is a neighbour now, and a tower run before has already brought it to s + 1). Rows dy = -R .. R
// (row r = dy + R) hold width(r) = 2 half(r) + 1 columns of the diamond and two slots more; slot j
// of row r is the column x = c - half(r) - 1 + j, c the diamond's centre.
//
// Memory: the block is X x Y columns of Z nodes, z fastest; level L of a column lives in the array
// of L's parity. A step, for every thread of a tower:
//   publish(cur)        level s of the diamond's columns for the z neighbours (shared memory;
//                       publish_with_halos)
//   -- barrier --
//   vertices()          the two columns beyond the diamond's top and bottom at level s (or read
//                       a step ahead, before the step before's barrier, or several steps ahead
//                       into shared memory with the entering columns: DiamondReads, step_reads)
//   update(cur, nxt)    the diamond from level s (cur) to s + 1, written over s - 1 (nxt)
//   move(cur, nxt)      write back the left slot; then shift a slot left and take the new right
//                       slot (read now, or fetched earlier), or, after the last step, write back
//                       the diamond
// and the next step swaps the names cur and nxt.

#include <cmath>
#include <cstring>
#include <type_traits>

namespace cases {
namespace wave {
namespace tower {

/// The block of columns a sweep runs over: x columns by y columns of z nodes, z fastest.
struct Block {
  int x, y, z;
  __host__ __device__ long at(int cx, int cy, int cz) const {
    return cz + static_cast<long>(z) * (cx + static_cast<long>(x) * cy);
  }
  __host__ __device__ bool inside(int cx, int cy) const { return cx >= 0 && cy >= 0 && cx < x && cy < y; }
};

/// step_host's constants at order 2: C_1, s^2 and 2 + 6 C_0 s^2.
struct Coefficients {
  double c1, courant2, centre;
};

template <int R>
__host__ __device__ constexpr int half(int r) {
  return R - (r < R ? R - r : r - R);
}
template <int R>
__host__ __device__ constexpr int width(int r) {
  return 2 * half<R>(r) + 1;
}
/// Row r's first slot.
template <int R>
__host__ __device__ constexpr int offset(int r) {
  int o = 0;
  for (int q = 0; q < r; ++q) o += width<R>(q) + 2;
  return o;
}
/// Row r's diamond column j (1 .. width) among the diamond's columns: its plane in shared memory.
template <int R>
__host__ __device__ constexpr int cell(int r, int j) {
  int o = 0;
  for (int q = 0; q < r; ++q) o += width<R>(q);
  return o + j - 1;
}
template <int R>
struct Shape {
  static constexpr int kRows = 2 * R + 1;
  static constexpr int kSlots = offset<R>(kRows);
  static constexpr int kCells = 2 * R * R + 2 * R + 1;
};

/// f(std::integral_constant<int, i>) for i = Begin .. End - 1: indices the compiler sees as
/// constants, so that a thread's slots live in registers.
template <int Begin, int End, class F>
__host__ __device__ __forceinline__ void static_for(F&& f) {
  if constexpr (Begin < End) {
    f(std::integral_constant<int, Begin>{});
    static_for<Begin + 1, End>(f);
  }
}

__host__ __device__ __forceinline__ double nan_value() {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(0x7ff8000000000000LL);
#else
  return std::nan("");
#endif
}

__host__ __device__ __forceinline__ double fma_rn(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

__host__ __device__ __forceinline__ double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// A column's node, or NaN outside the block (as the host model reads it).
__host__ __device__ __forceinline__ double load(const double* level, Block b, int x, int y, int z) {
  return b.inside(x, y) ? level[b.at(x, y, z)] : nan_value();
}

/// Step 0's slots of the tower of the tile centred at `base`: the left slot (another tower's
/// column) at level 0 in `a`; the diamond at level 0 in `a` and -1 in `o`; the right slot at
/// level 0 in `a` and 1 in `o` (a tower run before has updated it).
template <int R>
__host__ __device__ __forceinline__ void start(double (&a)[Shape<R>::kSlots], double (&o)[Shape<R>::kSlots], int bx, int by,
                                               Block b, const double* even, const double* odd, int z) {
  static_for<0, Shape<R>::kRows>([&](auto rc) {
    constexpr int r = decltype(rc)::value, off = offset<R>(r);
    const int x0 = bx - half<R>(r) - 1, y = by + r - R;
    static_for<0, width<R>(r) + 2>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      a[off + j] = load(even, b, x0 + j, y, z);
      o[off + j] = j == 0 ? nan_value() : load(odd, b, x0 + j, y, z);
    });
  });
}

/// Level s of the diamond's columns into slot `slot` of `plane` (its column i at
/// plane[i * stride + slot]; a block's plane has stride lanes + 2, its lanes in slots 1 .. lanes).
template <int R>
__host__ __device__ __forceinline__ void publish(const double (&cur)[Shape<R>::kSlots], double* plane, int slot, int stride) {
  static_for<0, Shape<R>::kRows>([&](auto rc) {
    constexpr int r = decltype(rc)::value;
    static_for<1, width<R>(r) + 1>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      plane[cell<R>(r, j) * stride + slot] = cur[offset<R>(r) + j];
    });
  });
}

/// Level s for the z neighbours, from lane `lane` of block `chunk` of a tower's `chunks` blocks of
/// `lanes` lanes: into slot lane + 1 of the block's plane, and from the block's end lanes into the
/// halo slots of the blocks beside it (the block itself where the column is one block).
/// `plane_of(chunk)`: that block's plane of level s (stride lanes + 2).
template <int R, class PlaneOf>
__host__ __device__ __forceinline__ void publish_with_halos(const double (&cur)[Shape<R>::kSlots], int chunk, int chunks,
                                                            int lane, int lanes, PlaneOf&& plane_of) {
  const int stride = lanes + 2;
  publish<R>(cur, plane_of(chunk), lane + 1, stride);
  if (lane == 0) publish<R>(cur, plane_of((chunk + chunks - 1) % chunks), stride - 1, stride);
  if (lane == lanes - 1) publish<R>(cur, plane_of((chunk + 1) % chunks), 0, stride);
}

/// The neighbours beyond the top and bottom rows of the diamond centred at (c, cy), from
/// `level` (the array of the level the step reads): columns of other towers, finished in earlier
/// stages, so they may be read before the step that needs them (a step ahead: at step s the
/// next step's from the array of s + 1's parity, which holds level s + 1 whether the column is at
/// s + 1 or s + 2; nothing in the stage writes them).
template <int R>
__host__ __device__ __forceinline__ void vertices(const double* level, Block b, int c, int cy, int z, double& top,
                                                  double& bottom) {
  top = load(level, b, c, cy + R + 1, z);
  bottom = load(level, b, c, cy - R - 1, z);
}

/// The diamond centred at (c, cy) from level s (cur; every slot holds its level s there) to
/// s + 1, written over level s - 1 in nxt; `plane` is the block's plane of level s (publish), the
/// thread's node in slot `slot`, its z neighbours in slots slot + 1 and slot - 1, and `top` and
/// `bottom` the vertices' neighbours at level s (vertices()). step_host's order of operations.
template <int R>
__host__ __device__ __forceinline__ void update(const double (&cur)[Shape<R>::kSlots], double (&nxt)[Shape<R>::kSlots],
                                                const double* plane, int slot, int stride, double top, double bottom,
                                                Coefficients k) {
  static_for<0, Shape<R>::kRows>([&](auto rc) {
    constexpr int r = decltype(rc)::value;
    static_for<1, width<R>(r) + 1>([&](auto jc) {
      constexpr int j = decltype(jc)::value, i = offset<R>(r) + j;
      // Row r + 1 is y + 1; its slot at the same x is j + half(r + 1) - half(r).
      double up = top, down = bottom;
      if constexpr (r + 1 < Shape<R>::kRows) up = cur[offset<R>(r + 1) + j + half<R>(r + 1) - half<R>(r)];
      if constexpr (r > 0) down = cur[offset<R>(r - 1) + j + half<R>(r - 1) - half<R>(r)];
      const int d = cell<R>(r, j) * stride + slot;
      double sum = 0;
      sum = fma_rn(k.c1, add_rn(cur[i + 1], cur[i - 1]), sum);
      sum = fma_rn(k.c1, add_rn(up, down), sum);
      sum = fma_rn(k.c1, add_rn(plane[d + 1], plane[d - 1]), sum);
      nxt[i] = fma_rn(k.courant2, sum, fma_rn(k.centre, cur[i], -nxt[i]));
    });
  });
}

/// After step s's update: writes back the left slot (from s = 1: the column the diamond left at
/// step s - 1, levels s and s - 1); then, unless s is the last step, shifts every row a slot to
/// the left and takes the new right slot, or, after the last, writes back the diamond (levels s + 1
/// from nxt, s from cur). `here` and `older` are the arrays of s's and s + 1's parity.
/// `entering(r, cur_value, nxt_value)` gives row r's entering column, x = c + half(r) + 2 (the one
/// the diamond takes in at step s + 2, at level s + 2 by now): its level s + 2 (the array of s's
/// parity) and s + 1 (the other), which the next step names the other way round.
template <int R, class Entering>
__host__ __device__ __forceinline__ void move(double (&cur)[Shape<R>::kSlots], double (&nxt)[Shape<R>::kSlots], int s, int steps,
                                              int c, int cy, Block b, double* here, double* older, int z, Entering&& entering) {
  const bool last = s + 1 == steps;
  static_for<0, Shape<R>::kRows>([&](auto rc) {
    constexpr int r = decltype(rc)::value, o = offset<R>(r), h = half<R>(r), w = width<R>(r);
    const int x0 = c - h - 1, y = cy + r - R;  // slot 0's column
    if (s >= 1 && b.inside(x0, y)) {
      here[b.at(x0, y, z)] = cur[o];
      older[b.at(x0, y, z)] = nxt[o];
    }
    if (last) {
      static_for<1, w + 1>([&](auto jc) {
        constexpr int j = decltype(jc)::value;
        if (b.inside(x0 + j, y)) {
          older[b.at(x0 + j, y, z)] = nxt[o + j];
          here[b.at(x0 + j, y, z)] = cur[o + j];
        }
      });
      return;
    }
    static_for<0, w + 1>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      cur[o + j] = cur[o + j + 1];
      nxt[o + j] = nxt[o + j + 1];
    });
    entering(r, cur[o + w + 1], nxt[o + w + 1]);
  });
}

/// move() reading the entering columns from memory now.
template <int R>
__host__ __device__ __forceinline__ void move(double (&cur)[Shape<R>::kSlots], double (&nxt)[Shape<R>::kSlots], int s, int steps,
                                              int c, int cy, Block b, double* here, double* older, int z) {
  move<R>(cur, nxt, s, steps, c, cy, b, here, older, z, [&](int r, double& cur_value, double& nxt_value) {
    const int x = c + half<R>(r) + 2, y = cy + r - R;
    cur_value = load(here, b, x, y, z);
    nxt_value = load(older, b, x, y, z);
  });
}

/// Everything step t of a tower reads from memory (DiamondReads::prefetched): value 0 and 1 the
/// vertices' neighbours at level t (vertices()), then per row r its entering column (move():
/// 2 + 2r from the array of t's parity, 3 + 2r from the other; not read after the last step).
/// They are other towers' columns, finished in earlier stages, and nothing in the stage writes
/// them (nor this tower, which writes only columns it has passed), so they may be read any time
/// after the tower starts.
template <int R>
struct StepReads {
  static constexpr int kValues = 2 + 2 * Shape<R>::kRows;
};

/// Calls f(i, address) for step t's reads at z node z: the node's address in `even` or `odd`, or
/// nullptr for a column outside the block (which load() reads as NaN).
template <int R, class F>
__host__ __device__ __forceinline__ void step_reads(int t, int steps, int bx, int by, Block b, const double* even,
                                                    const double* odd, int z, F&& f) {
  const double* const here = t & 1 ? odd : even;
  const double* const older = t & 1 ? even : odd;
  const int c = bx + t;
  const auto at = [&](const double* level, int x, int y) -> const double* {
    return b.inside(x, y) ? level + b.at(x, y, z) : nullptr;
  };
  f(0, at(here, c, by + R + 1));
  f(1, at(here, c, by - R - 1));
  if (t + 1 >= steps) return;
  static_for<0, Shape<R>::kRows>([&](auto rc) {
    constexpr int r = decltype(rc)::value;
    const int x = c + half<R>(r) + 2, y = by + r - R;
    f(2 + 2 * r, at(here, x, y));
    f(3 + 2 * r, at(older, x, y));
  });
}

}  // namespace tower
}  // namespace wave
}  // namespace cases
