#pragma once
// Case "karst": the device code of one member's step, shared by the streaming kernels
// (kernels.cu: the state in global memory, a few launches per step) and the resident kernel
// (resident.cu: a member's state in the shared memory of a thread-block cluster for the whole
// run). Both paths run these same functions in the same order, so they agree bit for bit; only
// where the numbers live differs. kernels.cu explains the LU/UL schedule of the rock passes.
//
// Every operation is written with the round-to-nearest intrinsics (fma, mul, add, sub, div
// below), which the compiler never fuses or reorders: left to itself it contracts a * b + c into
// an FMA where it sees fit, and inlined into different kernels the same line can round
// differently. Spelled out, both paths round alike, and each recurrence's chain is one FMA long.

#include <cuda_runtime.h>

#include <cstddef>

#include "karst.hpp"

namespace cases::karst::device {

__device__ inline double fma(double a, double b, double c) { return __fma_rn(a, b, c); }
__device__ inline double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline double add(double a, double b) { return __dadd_rn(a, b); }
__device__ inline double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ inline double div(double a, double b) { return __ddiv_rn(a, b); }

// Fo and FoBi (eqs. 4.16, 4.18) of a member for a step of dt.
struct RockCoefficients {
  double fo, fobi;
};
__device__ inline RockCoefficients rock_coefficients(const Groups& g, double dt, double dr) {
  return {div(dt, mul(mul(g.theta, dr), dr)), div(mul(mul(g.psi, g.st), dt), mul(2.0, dr))};
}

// One factorization (LU or UL) of one member's rock matrix: per row, the elimination pair
// (1 / pivot, band * (1 / pivot)) and the substitution coefficient; `wall` is 2 FoBi (the wall
// coupling of row 0's right-hand side).
struct MemberFactors {
  double2* elim;
  double* sub;
  double* wall;
};

// LU of a member's rock matrix: row 0 [1 + 2Fo + 2FoBi, -2Fo], rows 1..M-2 [-Fo, 1 + 2Fo, -Fo],
// row M-1 [0, 1]. Elimination d'_i = d_i / p_i - (a_i / p_i) d'_(i-1); substitution
// x_i = d'_i - c'_i x_(i+1) with c'_i = c_i / p_i.
__device__ inline void lu_factors(const Groups& g, int m, double dr, double dt, MemberFactors f) {
  const RockCoefficients c = rock_coefficients(g, dt, dr);
  const double b = add(1.0, mul(2.0, c.fo));  // the diagonal of rows 1..M-2
  double inv = div(1.0, add(b, mul(2.0, c.fobi)));
  double cp = mul(mul(-2.0, c.fo), inv);
  f.elim[0] = make_double2(inv, 0.0);
  f.sub[0] = cp;
  for (int i = 1; i + 1 < m; ++i) {
    inv = div(1.0, fma(c.fo, cp, b));  // b - a c'_(i-1) with a = -Fo
    cp = mul(-c.fo, inv);
    f.elim[i] = make_double2(inv, cp);
    f.sub[i] = cp;
  }
  f.elim[m - 1] = make_double2(1.0, 0.0);
  f.sub[m - 1] = 0.0;
  *f.wall = mul(2.0, c.fobi);
}

// UL of the same matrix, from the bottom: pivots p_i = b_i - c_i e_(i+1), e_i = a_i / p_i.
// Elimination g_i = d_i / p_i - (c_i / p_i) g_(i+1); substitution x_i = g_i - e_i x_(i-1), x_0 = g_0.
__device__ inline void ul_factors(const Groups& g, int m, double dr, double dt, MemberFactors f) {
  const RockCoefficients c = rock_coefficients(g, dt, dr);
  const double b = add(1.0, mul(2.0, c.fo));
  f.elim[m - 1] = make_double2(1.0, 0.0);
  f.sub[m - 1] = 0.0;
  double e = 0.0;
  for (int i = m - 2; i >= 1; --i) {
    const double inv = div(1.0, fma(c.fo, e, b));  // b - c e_(i+1) with c = -Fo
    e = mul(-c.fo, inv);
    f.elim[i] = make_double2(inv, e);
    f.sub[i] = e;
  }
  const double inv = div(1.0, fma(mul(2.0, c.fo), e, add(b, mul(2.0, c.fobi))));
  f.elim[0] = make_double2(inv, mul(mul(-2.0, c.fo), inv));
  f.sub[0] = 0.0;
  *f.wall = mul(2.0, c.fobi);
}

// The passes load kBatch rows of a column before they store any: the compiler cannot move a load
// above a store to the same array, and one load in flight per thread leaves the memory idle. A
// batch has no branch inside (the rows past a multiple of kBatch go one by one after the batches),
// so the compiler can interleave its two recurrences: a branch per row would leave every
// instruction waiting for the one before it.
constexpr int kBatch = 8;

// The down pass over one column (see the top of kernels.cu). Substitute: the column holds the UL
// elimination of the previous step (else x itself), e its substitution coefficients. Eliminate: the
// LU elimination of this step (el), with the water w^(s-1) of the column in row 0 through the
// coupling 2 FoBi. A pass carries two values from row to row: x (this row's solution) and d (its
// elimination). down_head() is row 0, down_row() any other row; each returns what the row holds
// after the pass.
template <bool Eliminate>
__device__ inline double down_head(double y0, double coupling, double water, double2 el0, double& x, double& d) {
  x = y0;  // x_0 = g_0
  if (!Eliminate) return x;
  d = mul(fma(coupling, water, x), el0.x);
  return d;
}
template <bool Substitute, bool Eliminate>
__device__ inline double down_row(double v, double ev, double2 fv, double& x, double& d) {
  x = Substitute ? fma(-ev, x, v) : v;
  if (!Eliminate) return x;
  d = fma(-fv.y, d, mul(x, fv.x));
  return d;
}

// Rows [begin, m) of the down pass, the column in memory: row i at y[(i - begin) * stride].
template <bool Substitute, bool Eliminate>
__device__ inline void down_rows(double* y, std::size_t stride, int begin, int m, const double* e, const double2* el,
                                 double& x, double& d) {
  int i = begin;
  for (; i + kBatch <= m; i += kBatch) {
    double v[kBatch], ev[kBatch] = {};
    double2 fv[kBatch] = {};
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      v[r] = y[(i - begin + r) * stride];
      if (Substitute) ev[r] = e[i + r];
      if (Eliminate) fv[r] = el[i + r];
    }
#pragma unroll
    for (int r = 0; r < kBatch; ++r) y[(i - begin + r) * stride] = down_row<Substitute, Eliminate>(v[r], ev[r], fv[r], x, d);
  }
  for (; i < m; ++i)
    y[(i - begin) * stride] = down_row<Substitute, Eliminate>(y[(i - begin) * stride], Substitute ? e[i] : 0.0,
                                                              Eliminate ? el[i] : double2{}, x, d);
}

// The whole down pass over a column in memory (row i at y[i * stride]).
template <bool Substitute, bool Eliminate>
__device__ inline void down_column(double* y, std::size_t stride, int m, const double* e, const double2* el,
                                   double coupling, double water) {
  double x = 0.0, d = 0.0;
  y[0] = down_head<Eliminate>(y[0], coupling, water, el[0], x, d);
  down_rows<Substitute, Eliminate>(y + stride, stride, 1, m, e, el, x, d);
}

// The up pass over one column: the LU substitution of this step from the bottom (cp), and
// (Eliminate) the UL elimination of the next step in rows M-1..1 (el); row 0 is left holding this
// step's wall temperature x_0. It carries x and g (the UL elimination) from row to row.
template <bool Eliminate>
__device__ inline double up_row(double v, double cv, double2 fv, double& x, double& g) {
  x = fma(-cv, x, v);
  if (!Eliminate) return x;
  g = fma(-fv.y, g, mul(x, fv.x));
  return g;
}
__device__ inline double up_head(double y0, double cp0, double x) { return fma(-cp0, x, y0); }

// Rows m-1 down to `begin` of the up pass, the column in memory: row i at y[(i - begin) * stride].
template <bool Eliminate>
__device__ inline void up_rows(double* y, std::size_t stride, int begin, int m, const double* cp, const double2* el,
                               double& x, double& g) {
  int i = m - 1;
  for (; i - kBatch + 1 >= begin; i -= kBatch) {  // rows i .. i - kBatch + 1
    double v[kBatch], cv[kBatch];
    double2 fv[kBatch] = {};
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      v[r] = y[(i - begin - r) * stride];
      cv[r] = cp[i - r];
      if (Eliminate) fv[r] = el[i - r];
    }
#pragma unroll
    for (int r = 0; r < kBatch; ++r) y[(i - begin - r) * stride] = up_row<Eliminate>(v[r], cv[r], fv[r], x, g);
  }
  for (; i >= begin; --i)
    y[(i - begin) * stride] = up_row<Eliminate>(y[(i - begin) * stride], cp[i], Eliminate ? el[i] : double2{}, x, g);
}

// The whole up pass over a column in memory.
template <bool Eliminate>
__device__ inline void up_column(double* y, std::size_t stride, int m, const double* cp, const double2* el) {
  double x = 0.0, g = 0.0;
  up_rows<Eliminate>(y + stride, stride, 1, m, cp, el, x, g);
  y[0] = up_head(y[0], cp[0], x);
}

// The water system's coefficients for a step (eqs. 4.19/4.20 and 4.27).
struct WaterCoefficients {
  double lower, middle, upper, last_lower, last_middle;
};
__device__ inline WaterCoefficients water_coefficients(const Groups& g, Model model, Outlet outlet, int n, double dt,
                                                       double v) {
  const double dx = div(1.0, n);
  const double diffusion = div(dt, mul(mul(g.pe, dx), dx));
  const double advection = div(mul(v, dt), mul(2.0, dx));
  const double source = model == Model::heat ? mul(dt, g.st) : -mul(dt, g.da);
  WaterCoefficients c;
  c.lower = sub(-diffusion, advection);
  c.upper = sub(advection, diffusion);
  c.middle = add(add(1.0, mul(2.0, diffusion)), source);
  c.last_lower = mul(-2.0, advection);  // the outlet row: no dispersion, upwind advection
  c.last_middle = outlet == Outlet::advective ? add(add(1.0, mul(2.0, advection)), source) : c.middle;
  return c;
}

constexpr int kWaterThreads = 128;  // the threads of one member's water step

// The water step gives thread t the run of nodes [t run, (t + 1) run), run = ceil(N / 128). A water
// array is laid out either contiguously (node j at j) or strided (node j, the r-th of thread t's
// run, at r * 128 + t): in shared memory the strided layout puts a warp's 32 nodes in 32 different
// banks, where the contiguous one would put them 8 or 16 nodes apart, in a few banks.
__device__ inline int water_run(int n) { return (n + kWaterThreads - 1) / kWaterThreads; }
__device__ inline int strided_node(int j, int run) {
  const int t = j / run;
  return (j - t * run) * kWaterThreads + t;
}

// Thomas pivots of one member's water system: f[j] = (1 / p_j, c'_j), node j at f[j] or (Strided)
// at f[strided_node(j)].
template <bool Strided = false>
__device__ inline void water_pivots(const Groups& g, int n, Model model, Outlet outlet, double dt, double v,
                                    double2* f) {
  const int run = water_run(n);
  const auto at = [&](int j) { return Strided ? strided_node(j, run) : j; };
  const WaterCoefficients c = water_coefficients(g, model, outlet, n, dt, v);
  double inv = div(1.0, c.middle);
  double cp = mul(c.upper, inv);
  f[at(0)] = make_double2(inv, cp);
  for (int j = 1; j + 1 < n; ++j) {
    inv = div(1.0, fma(-c.lower, cp, c.middle));
    cp = mul(c.upper, inv);
    f[at(j)] = make_double2(inv, cp);
  }
  f[at(n - 1)] = make_double2(div(1.0, fma(-c.last_lower, cp, c.last_middle)), 0.0);
}

// An affine map x -> a x + b; then(f, g) is g after f.
struct Affine {
  double a, b;
};
__device__ inline Affine then(Affine f, Affine g) { return {mul(g.a, f.a), fma(g.a, f.b, g.b)}; }

constexpr int kWaterWarps = kWaterThreads / 32;

// Over the water threads in order, the maps of the threads before this one, composed (forward);
// or (backward) of the threads after it, the last applied first. Every thread of the block calls
// it (it meets at __syncthreads()); `shared` holds one map per warp of the block. The warps past
// the water threads' (their maps the identity) change nothing the water threads get.
template <bool Forward>
__device__ inline Affine exclusive_scan(Affine mine, Affine* shared) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  Affine total = mine;
  for (int offset = 1; offset < 32; offset *= 2) {
    const Affine other = Forward ? Affine{__shfl_up_sync(0xffffffffU, total.a, offset), __shfl_up_sync(0xffffffffU, total.b, offset)}
                                 : Affine{__shfl_down_sync(0xffffffffU, total.a, offset), __shfl_down_sync(0xffffffffU, total.b, offset)};
    if (Forward ? lane >= offset : lane + offset < 32) total = then(other, total);
  }
  if (lane == (Forward ? 31 : 0)) shared[warp] = total;
  Affine inside = Forward ? Affine{__shfl_up_sync(0xffffffffU, total.a, 1), __shfl_up_sync(0xffffffffU, total.b, 1)}
                          : Affine{__shfl_down_sync(0xffffffffU, total.a, 1), __shfl_down_sync(0xffffffffU, total.b, 1)};
  if (lane == (Forward ? 0 : 31)) inside = Affine{1.0, 0.0};
  __syncthreads();
  Affine outside{1.0, 0.0};
  if (Forward)
    for (int w = 0; w < warp; ++w) outside = then(outside, shared[w]);
  else
    for (int w = kWaterWarps - 1; w > warp; --w) outside = then(outside, shared[w]);
  __syncthreads();  // shared is free again
  return then(outside, inside);
}

// What a water step needs besides the member: the step's forcing and where its outlet goes.
struct WaterStep {
  double dt, v, inlet;
  std::size_t step;
  double* curve;  // the member's curve: curve[step] = the outlet after this step
};

// One member's water step on kWaterThreads threads (threadIdx.x < kWaterThreads). With the pivots
// f cached while dt and v stay the same, both Thomas sweeps are affine recurrences:
// d'_j = r_j / p_j - (a_j / p_j) d'_(j-1) forward and x_j = d'_j - c'_j x_(j+1) backward. Each
// thread composes the maps of its run of consecutive nodes, a scan gives every thread the value
// entering its run, and the thread then sweeps its run. The right-hand side r_j holds the new wall
// temperature (heat: rock(0, j)) and, in row 0, the inlet. With Finish (heat, a UL step follows):
// row 0 of the next step's rock elimination (its pivot pair e0 and coupling 2 FoBi), which needs
// this step's water; it leaves the next step's wall temperature in rock(0, j).
// Rock is a functor: rock(i, a) is the rock's row i (0 or 1) of the column at index a of the water
// arrays, by reference. Strided: w, f and the rows are in the strided layout (water_run()).
// Every thread of the block calls it, as it meets at __syncthreads(); threads at or past
// kWaterThreads own no nodes. `shared` holds one Affine per warp of the block. (A named barrier
// over the water threads alone would spare the other warps the calls, but compute-sanitizer's
// racecheck then reports hazards that are not there: docs/reliability.md, "Sanitizers".)
template <bool Heat, bool Finish, bool Strided, class Rock>
__device__ inline void water_step(const Groups& g, int n, Model model, Outlet outlet, const WaterStep& ws,
                                  const double2* f, double* w, Rock rock, double2 e0, double coupling, Affine* shared) {
  const WaterCoefficients c = water_coefficients(g, model, outlet, n, ws.dt, ws.v);
  const double exchange = mul(ws.dt, g.st);
  const int run = water_run(n);  // this thread's nodes: [first, last)
  const int first = min(n, static_cast<int>(threadIdx.x) * run), last = min(n, first + run);
  const auto at = [&](int j) { return Strided ? (j - first) * kWaterThreads + static_cast<int>(threadIdx.x) : j; };

  // The loops that store load kBatch nodes first (as the rock passes do); the others only load.
  const auto scaled_rhs = [&](int j, double wj, double wallj, double inv) {  // b_j = r_j / p_j
    double r = Heat ? fma(exchange, wallj, wj) : wj;
    if (j == 0) r = fma(-c.lower, ws.inlet, r);
    return mul(r, inv);
  };
  const auto slope = [&](int j, double inv) { return j == 0 ? 0.0 : mul(-(j + 1 < n ? c.lower : c.last_lower), inv); };

  // Forward: this run's map, the value entering it, then d'_j into w.
  Affine mine{1.0, 0.0};
#pragma unroll 8
  for (int j = first; j < last; ++j) {
    const double inv = f[at(j)].x;
    mine = then(mine, Affine{slope(j, inv), scaled_rhs(j, w[at(j)], Heat ? rock(0, at(j)) : 0.0, inv)});
  }
  double d = exclusive_scan<true>(mine, shared).b;  // d'_(first - 1): the value entering this run
  const auto forward = [&](int j, double wj, double sj, double inv) {
    d = fma(slope(j, inv), d, scaled_rhs(j, wj, sj, inv));
    w[at(j)] = d;
  };
  int j = first;
  for (; j + kBatch <= last; j += kBatch) {
    double wv[kBatch], sv[kBatch], iv[kBatch];
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      wv[r] = w[at(j + r)];
      sv[r] = Heat ? rock(0, at(j + r)) : 0.0;
      iv[r] = f[at(j + r)].x;
    }
#pragma unroll
    for (int r = 0; r < kBatch; ++r) forward(j + r, wv[r], sv[r], iv[r]);
  }
  for (; j < last; ++j) forward(j, w[at(j)], Heat ? rock(0, at(j)) : 0.0, f[at(j)].x);

  // Backward, from the outlet: x_j = d'_j - c'_j x_(j+1) (c'_(N-1) = 0).
  mine = Affine{1.0, 0.0};
#pragma unroll 8
  for (int j = last - 1; j >= first; --j) mine = then(mine, Affine{-f[at(j)].y, w[at(j)]});
  double x = exclusive_scan<false>(mine, shared).b;  // x_last: the value entering this run
  const auto backward = [&](int j, double dj, double cj, double sj, double s1j) {
    x = fma(-cj, x, dj);
    w[at(j)] = x;
    if (Finish) rock(0, at(j)) = fma(-e0.y, s1j, mul(fma(coupling, x, sj), e0.x));
  };
  j = last - 1;
  for (; j - kBatch + 1 >= first; j -= kBatch) {
    double dv[kBatch], cv[kBatch], sv[kBatch] = {}, s1[kBatch] = {};
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      dv[r] = w[at(j - r)];
      cv[r] = f[at(j - r)].y;
      if (Finish) {
        sv[r] = rock(0, at(j - r));
        s1[r] = rock(1, at(j - r));
      }
    }
#pragma unroll
    for (int r = 0; r < kBatch; ++r) backward(j - r, dv[r], cv[r], sv[r], s1[r]);
  }
  for (; j >= first; --j)
    backward(j, w[at(j)], f[at(j)].y, Finish ? rock(0, at(j)) : 0.0, Finish ? rock(1, at(j)) : 0.0);
  if (last == n && first < last) ws.curve[ws.step] = w[at(n - 1)];
}

}  // namespace cases::karst::device
