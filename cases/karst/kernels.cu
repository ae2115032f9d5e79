// Case "karst": the batched forward model on one GPU (kernels.hpp), the same discrete equations
// as the CPU reference (conduit.cpp, spec §2).
//
// The rock of step s is the M x M system A_s x^s = x^(s-1) + e_0 (2 FoBi w^(s-1)) for every
// column. Thomas needs two sweeps over a column: eliminate, then substitute. An LU step
// eliminates top-down and substitutes bottom-up; a UL step eliminates bottom-up and substitutes
// top-down. Even steps are LU and odd steps UL, so a pass fuses the substitution of one step with
// the elimination of the next, in one direction:
//
//   down pass: UL substitution of step s-1 (x^(s-1) from the top) + LU elimination of step s
//   up pass:   LU substitution of step s (x^s from the bottom) + UL elimination of step s+1 (rows
//              M-1..1; row 0 needs w^s, which needs the wall x^s_0 of every column: the up pass
//              leaves x^s_0 in row 0, the water solve of step s uses it and then eliminates row 0
//              of step s+1, which gives x^(s+1)_0 at once: the wall the water of step s+1 needs)
//
// Two passes cover two steps, each reading and writing the rock once: 16 bytes per node per step
// instead of the 32 of separate sweeps. The order of steps, the equations and the outlet are the
// CPU reference's; only the rounding differs (a UL step factors the same matrix from the other end).

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases::karst {

namespace {

constexpr int kColumns = 128;  // threads per block of the rock passes (one per column)
constexpr int kMembers = 32;   // threads per block of the per-member kernels, a thread per member

// Fo and FoBi (eqs. 4.16, 4.18) of a member for a step of dt.
struct RockCoefficients {
  double fo, fobi;
};
__device__ RockCoefficients rock_coefficients(const Groups& g, double dt, double dr) {
  return {dt / (g.theta * dr * dr), g.psi * g.st * dt / (2.0 * dr)};
}

// Factor storage of one factorization (LU or UL) for every member: per row, the elimination pair
// (1 / pivot, band * (1 / pivot)) and the substitution coefficient; per member, 2 FoBi (the wall
// coupling of row 0's right-hand side).
struct Factors {
  double2* elim;
  double* sub;
  double* wall;
};

// LU of a member's rock matrix: row 0 [1 + 2Fo + 2FoBi, -2Fo], rows 1..M-2 [-Fo, 1 + 2Fo, -Fo],
// row M-1 [0, 1]. Elimination d'_i = d_i / p_i - (a_i / p_i) d'_(i-1); substitution
// x_i = d'_i - c'_i x_(i+1) with c'_i = c_i / p_i.
__global__ void rock_factors_lu(const Groups* members, std::size_t count, int m, double dr, double dt, Factors f) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const RockCoefficients c = rock_coefficients(members[k], dt, dr);
  double2* elim = f.elim + k * m;
  double* sub = f.sub + k * m;
  double inv = 1.0 / (1.0 + 2.0 * c.fo + 2.0 * c.fobi);
  double cp = -2.0 * c.fo * inv;
  elim[0] = make_double2(inv, 0.0);
  sub[0] = cp;
  for (int i = 1; i + 1 < m; ++i) {
    inv = 1.0 / (1.0 + 2.0 * c.fo + c.fo * cp);  // b - a c'_(i-1) with a = -Fo
    elim[i] = make_double2(inv, -c.fo * inv);
    cp = -c.fo * inv;
    sub[i] = cp;
  }
  elim[m - 1] = make_double2(1.0, 0.0);
  sub[m - 1] = 0.0;
  f.wall[k] = 2.0 * c.fobi;
}

// UL of the same matrix, from the bottom: pivots p_i = b_i - c_i e_(i+1), e_i = a_i / p_i.
// Elimination g_i = d_i / p_i - (c_i / p_i) g_(i+1); substitution x_i = g_i - e_i x_(i-1), x_0 = g_0.
__global__ void rock_factors_ul(const Groups* members, std::size_t count, int m, double dr, double dt, Factors f) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const RockCoefficients c = rock_coefficients(members[k], dt, dr);
  double2* elim = f.elim + k * m;
  double* sub = f.sub + k * m;
  elim[m - 1] = make_double2(1.0, 0.0);
  sub[m - 1] = 0.0;
  double e = 0.0;
  for (int i = m - 2; i >= 1; --i) {
    const double inv = 1.0 / (1.0 + 2.0 * c.fo + c.fo * e);  // b - c e_(i+1) with c = -Fo
    elim[i] = make_double2(inv, -c.fo * inv);
    e = -c.fo * inv;
    sub[i] = e;
  }
  const double inv = 1.0 / (1.0 + 2.0 * c.fo + 2.0 * c.fobi + 2.0 * c.fo * e);
  elim[0] = make_double2(inv, -2.0 * c.fo * inv);
  sub[0] = 0.0;
  f.wall[k] = 2.0 * c.fobi;
}

// The passes load kBatch rows of a column before they store any: the compiler cannot move a load
// above a store to the same array, and one load in flight per thread leaves HBM idle.
constexpr int kBatch = 8;

// The down pass over member k's column j (see the top of the file). Substitute: the rock holds
// the UL elimination of the previous step (else it holds x itself). Eliminate: LU of this step,
// with the water w^(s-1) in row 0.
template <bool Substitute, bool Eliminate>
__global__ void rock_down(double* rock, const double* water, std::size_t count, int n, int m, Factors ul, Factors lu) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= n) return;
  const std::size_t stride = static_cast<std::size_t>(n);
  for (std::size_t k = blockIdx.y; k < count; k += gridDim.y) {
    double* y = rock + k * m * stride + j;
    const double* e = ul.sub + k * m;
    const double2* el = lu.elim + k * m;
    double x = y[0];  // x_0 = g_0
    double d = 0.0;
    if (Eliminate) {
      d = (x + lu.wall[k] * water[k * stride + j]) * el[0].x;
      y[0] = d;
    } else {
      y[0] = x;
    }
    for (int i0 = 1; i0 < m; i0 += kBatch) {
      double v[kBatch];
#pragma unroll
      for (int r = 0; r < kBatch; ++r)
        if (i0 + r < m) v[r] = y[(i0 + r) * stride];
#pragma unroll
      for (int r = 0; r < kBatch; ++r) {
        const int i = i0 + r;
        if (i >= m) break;
        x = Substitute ? v[r] - e[i] * x : v[r];
        if (Eliminate) {
          const double2 f = el[i];
          d = x * f.x - f.y * d;
          y[i * stride] = d;
        } else {
          y[i * stride] = x;
        }
      }
    }
  }
}

// The up pass: LU substitution of this step from the bottom, and (Eliminate) the UL elimination
// of the next step in rows M-1..1; row 0 is left holding this step's wall temperature x_0.
template <bool Eliminate>
__global__ void rock_up(double* rock, std::size_t count, int n, int m, Factors lu, Factors ul) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= n) return;
  const std::size_t stride = static_cast<std::size_t>(n);
  for (std::size_t k = blockIdx.y; k < count; k += gridDim.y) {
    double* y = rock + k * m * stride + j;
    const double* cp = lu.sub + k * m;
    const double2* el = ul.elim + k * m;
    double x = 0.0, g = 0.0;
    for (int i0 = m - 1; i0 >= 1; i0 -= kBatch) {
      double v[kBatch];
#pragma unroll
      for (int r = 0; r < kBatch; ++r)
        if (i0 - r >= 1) v[r] = y[(i0 - r) * stride];
#pragma unroll
      for (int r = 0; r < kBatch; ++r) {
        const int i = i0 - r;
        if (i < 1) break;
        x = v[r] - cp[i] * x;
        if (Eliminate) {
          const double2 f = el[i];
          g = x * f.x - f.y * g;
          y[i * stride] = g;
        } else {
          y[i * stride] = x;
        }
      }
    }
    y[0] = y[0] - cp[0] * x;
  }
}

// The water system's coefficients for a step (eqs. 4.19/4.20 and 4.27).
struct WaterCoefficients {
  double lower, middle, upper, last_lower, last_middle;
};
__device__ WaterCoefficients water_coefficients(const Groups& g, Model model, Outlet outlet, int n, double dt, double v) {
  const double dx = 1.0 / n;
  const double diffusion = dt / (g.pe * dx * dx);
  const double advection = v * dt / (2.0 * dx);
  const double source = model == Model::heat ? dt * g.st : -dt * g.da;
  WaterCoefficients c;
  c.lower = -diffusion - advection;
  c.upper = advection - diffusion;
  c.middle = 1.0 + 2.0 * diffusion + source;
  c.last_lower = -2.0 * advection;  // the outlet row: no dispersion, upwind advection
  c.last_middle = outlet == Outlet::advective ? 1.0 + 2.0 * advection + source : c.middle;
  return c;
}

// Thomas pivots of each member's water system: (1 / p_j, c'_j).
__global__ void water_factors(const Groups* members, std::size_t count, int n, Model model, Outlet outlet, double dt,
                              double v, double2* factors) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const WaterCoefficients c = water_coefficients(members[k], model, outlet, n, dt, v);
  double2* f = factors + k * n;
  double inv = 1.0 / c.middle;
  double cp = c.upper * inv;
  f[0] = make_double2(inv, cp);
  for (int j = 1; j + 1 < n; ++j) {
    inv = 1.0 / (c.middle - c.lower * cp);
    cp = c.upper * inv;
    f[j] = make_double2(inv, cp);
  }
  f[n - 1] = make_double2(1.0 / (c.last_middle - c.last_lower * cp), 0.0);
}

// An affine map x -> a x + b; then(f, g) is g after f.
struct Affine {
  double a, b;
};
__device__ Affine then(Affine f, Affine g) { return {g.a * f.a, g.a * f.b + g.b}; }

constexpr int kWaterThreads = 128;  // a block per member for the water step
constexpr int kWaterWarps = kWaterThreads / 32;

// Over the block's threads in order, the maps of the threads before this one, composed (forward);
// or (backward) of the threads after it, the last applied first. `shared` holds kWaterWarps maps.
template <bool Forward>
__device__ Affine exclusive_scan(Affine mine, Affine* shared) {
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

// One member's water step, one block per member. With the pivots cached, both Thomas sweeps are
// affine recurrences: d'_j = r_j / p_j - (a_j / p_j) d'_(j-1) forward and x_j = d'_j - c'_j x_(j+1)
// backward. Each thread composes the maps of its run of consecutive nodes, a block scan gives
// every thread the value entering its run, and the thread then sweeps its run. The right-hand side
// r_j holds the new wall temperature (heat) and, in row 0, the inlet. The outlet goes to the
// curve. With Finish (heat, a UL step follows): row 0 of the next step's rock elimination, which
// needs this step's water; it leaves the next step's wall temperature in the rock's row 0.
struct WaterStep {
  double dt, v, inlet;
  std::size_t step, steps;
};
template <bool Heat, bool Finish>
__global__ void water_step(const Groups* members, std::size_t count, int n, int m, Model model, Outlet outlet,
                           WaterStep ws, const double2* factors, double* water, double* rock, double* curves,
                           Factors next) {
  __shared__ Affine shared[kWaterWarps];
  const std::size_t k = blockIdx.x;
  if (k >= count) return;  // the whole block
  const Groups g = members[k];
  const WaterCoefficients c = water_coefficients(g, model, outlet, n, ws.dt, ws.v);
  const double2* f = factors + k * n;
  double* w = water + k * n;
  double* wall = Heat ? rock + k * m * static_cast<std::size_t>(n) : nullptr;  // row 0: x_0 of this step
  const double exchange = ws.dt * g.st;
  const int run = (n + kWaterThreads - 1) / kWaterThreads;  // this thread's nodes: [first, last)
  const int first = min(n, static_cast<int>(threadIdx.x) * run), last = min(n, first + run);

  // The loops that store load kBatch nodes first (as the rock passes do); the others only load.
  const auto scaled_rhs = [&](int j, double wj, double wallj, double inv) {  // b_j = r_j / p_j
    double r = wj + (Heat ? exchange * wallj : 0.0);
    if (j == 0) r -= c.lower * ws.inlet;
    return r * inv;
  };
  const auto slope = [&](int j, double inv) { return j == 0 ? 0.0 : -(j + 1 < n ? c.lower : c.last_lower) * inv; };

  // Forward: this run's map, the value entering it, then d'_j into w.
  Affine mine{1.0, 0.0};
#pragma unroll 8
  for (int j = first; j < last; ++j) {
    const double inv = f[j].x;
    mine = then(mine, Affine{slope(j, inv), scaled_rhs(j, w[j], Heat ? wall[j] : 0.0, inv)});
  }
  double d = exclusive_scan<true>(mine, shared).b;  // d'_(first - 1): the value entering this run
  for (int j0 = first; j0 < last; j0 += kBatch) {
    double wv[kBatch], sv[kBatch], iv[kBatch];
#pragma unroll
    for (int r = 0; r < kBatch; ++r)
      if (j0 + r < last) {
        wv[r] = w[j0 + r];
        sv[r] = Heat ? wall[j0 + r] : 0.0;
        iv[r] = f[j0 + r].x;
      }
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      const int j = j0 + r;
      if (j >= last) break;
      d = scaled_rhs(j, wv[r], sv[r], iv[r]) + slope(j, iv[r]) * d;
      w[j] = d;
    }
  }

  // Backward, from the outlet: x_j = d'_j - c'_j x_(j+1) (c'_(N-1) = 0).
  mine = Affine{1.0, 0.0};
#pragma unroll 8
  for (int j = last - 1; j >= first; --j) mine = then(mine, Affine{-f[j].y, w[j]});
  double x = exclusive_scan<false>(mine, shared).b;  // x_last: the value entering this run
  double2 e0 = make_double2(0.0, 0.0);
  double coupling = 0.0;
  if (Finish) {
    e0 = next.elim[k * m];
    coupling = next.wall[k];
  }
  const double* row1 = Heat ? wall + n : nullptr;
  for (int j0 = last - 1; j0 >= first; j0 -= kBatch) {
    double dv[kBatch], cv[kBatch], sv[kBatch], s1[kBatch];
#pragma unroll
    for (int r = 0; r < kBatch; ++r)
      if (j0 - r >= first) {
        dv[r] = w[j0 - r];
        cv[r] = f[j0 - r].y;
        if (Finish) {
          sv[r] = wall[j0 - r];
          s1[r] = row1[j0 - r];
        }
      }
#pragma unroll
    for (int r = 0; r < kBatch; ++r) {
      const int j = j0 - r;
      if (j < first) break;
      x = dv[r] - cv[r] * x;
      w[j] = x;
      if (Finish) wall[j] = (sv[r] + coupling * x) * e0.x - e0.y * s1[r];
    }
  }
  if (last == n && first < last) curves[k * ws.steps + ws.step] = w[n - 1];
}

__global__ void fill(double* a, std::size_t count, double value) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = value;
}

__global__ void misfits_kernel(const double* curves, const double* observed, std::size_t steps, double* misfits) {
  const double* c = curves + blockIdx.x * steps;
  double sum = 0.0;
  for (std::size_t s = threadIdx.x; s < steps; s += blockDim.x) {
    const double d = c[s] - observed[s];
    sum += d * d;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffU, sum, offset);
  __shared__ double warps[32];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warps[w];
    misfits[blockIdx.x] = sqrt(total / static_cast<double>(steps));
  }
}

unsigned blocks(std::size_t threads, int per_block) {
  return static_cast<unsigned>((threads + static_cast<std::size_t>(per_block) - 1) / static_cast<std::size_t>(per_block));
}

}  // namespace

void check_run(const char* variant, Model model, const Grid& grid, const Forcing& forcing,
               std::span<const Groups> members, std::span<const double> observed) {
  check(model, grid, forcing, members);
  if (!observed.empty() && observed.size() != forcing.steps())
    throw std::invalid_argument(std::string(variant) + ": the observed curve has " + std::to_string(observed.size()) +
                                " values, the forcing " + std::to_string(forcing.steps()) + " steps");
}

std::vector<double> pack(const Forcing& forcing) {
  std::vector<double> all;
  all.reserve(3 * forcing.steps());
  all.insert(all.end(), forcing.dt.begin(), forcing.dt.end());
  all.insert(all.end(), forcing.v.begin(), forcing.v.end());
  all.insert(all.end(), forcing.inlet.begin(), forcing.inlet.end());
  return all;
}

std::size_t Workspace::bytes(Model model, const Grid& grid, std::size_t capacity) {
  const std::size_t rock = model == Model::heat ? capacity * grid.m * grid.n * sizeof(double) : 0;
  const std::size_t factors = model == Model::heat ? 2 * capacity * (grid.m * (sizeof(double2) + sizeof(double)) + sizeof(double)) : 0;
  return rock + factors + capacity * grid.n * (sizeof(double) + sizeof(double2));
}

Workspace::Workspace(int device, Model model, const Grid& grid, std::size_t capacity)
    : device_(device), model_(model), grid_(grid), capacity_(capacity) {
  const bool heat = model == Model::heat;
  rock_ = cush::DeviceBuffer(device, heat ? capacity * grid.m * grid.n * sizeof(double) : 0);
  water_ = cush::DeviceBuffer(device, capacity * grid.n * sizeof(double));
  for (int p = 0; p < 2; ++p) {
    rock_elim_[p] = cush::DeviceBuffer(device, heat ? capacity * grid.m * sizeof(double2) : 0);
    rock_sub_[p] = cush::DeviceBuffer(device, heat ? capacity * grid.m * sizeof(double) : 0);
    rock_wall_[p] = cush::DeviceBuffer(device, heat ? capacity * sizeof(double) : 0);
  }
  water_factors_ = cush::DeviceBuffer(device, capacity * grid.n * sizeof(double2));
}

// The schedule of one run (top of the file): which factors hold which dt, and the launches.
class Forward {
 public:
  Forward(Model model, const Grid& grid, Outlet outlet, const Batch& batch, Workspace& work, cudaStream_t stream)
      : model_(model), grid_(grid), outlet_(outlet), b_(batch), w_(work), stream_(stream) {
    n_ = static_cast<int>(grid.n);
    m_ = static_cast<int>(grid.m);
    for (int p = 0; p < 2; ++p)
      f_[p] = Factors{static_cast<double2*>(w_.rock_elim_[p].data()), static_cast<double*>(w_.rock_sub_[p].data()),
                      static_cast<double*>(w_.rock_wall_[p].data())};
  }

  void run(const Forcing& forcing) {
    const std::size_t steps = forcing.steps();
    start();
    if (model_ == Model::solute) {
      for (std::size_t s = 0; s < steps; ++s) water(forcing, s, false);
      return;
    }
    factor(0, forcing.dt[0]);
    down(false, true);
    for (std::size_t s = 0; s < steps; s += 2) {  // the rock holds step s's LU elimination
      const bool odd_follows = s + 1 < steps;
      if (odd_follows) factor(1, forcing.dt[s + 1]);
      up(odd_follows);
      water(forcing, s, odd_follows);
      if (!odd_follows) break;
      water(forcing, s + 1, false);
      const bool even_follows = s + 2 < steps;
      if (even_follows) factor(0, forcing.dt[s + 2]);
      down(true, even_follows);
      if (!even_follows) break;
    }
  }

 private:
  double* rock() const { return static_cast<double*>(w_.rock_.data()); }
  double* water_state() const { return static_cast<double*>(w_.water_.data()); }

  void check_launch() const { CUSH_CUDA_CHECK(cudaGetLastError()); }

  void start() {
    const std::size_t rock_nodes = model_ == Model::heat ? b_.count * grid_.m * grid_.n : 0;
    if (rock_nodes > 0) fill<<<std::min(blocks(rock_nodes, 256), 4096U), 256, 0, stream_>>>(rock(), rock_nodes, 1.0);
    fill<<<std::min(blocks(b_.count * grid_.n, 256), 4096U), 256, 0, stream_>>>(water_state(), b_.count * grid_.n, 1.0);
    check_launch();
    have_[0] = have_[1] = false;
    have_water_ = false;
  }

  // Factorization p (0: LU, 1: UL) for a step of dt, unless it holds that dt already.
  void factor(int p, double dt) {
    if (have_[p] && dt_[p] == dt) return;
    if (p == 0) rock_factors_lu<<<blocks(b_.count, kMembers), kMembers, 0, stream_>>>(b_.members, b_.count, m_, grid_.dr, dt, f_[0]);
    else rock_factors_ul<<<blocks(b_.count, kMembers), kMembers, 0, stream_>>>(b_.members, b_.count, m_, grid_.dr, dt, f_[1]);
    check_launch();
    have_[p] = true;
    dt_[p] = dt;
  }

  dim3 pass_grid() const { return dim3(blocks(grid_.n, kColumns), static_cast<unsigned>(std::min<std::size_t>(b_.count, 65535))); }

  void down(bool substitute, bool eliminate) {
    const dim3 g = pass_grid();
    if (substitute && eliminate) rock_down<true, true><<<g, kColumns, 0, stream_>>>(rock(), water_state(), b_.count, n_, m_, f_[1], f_[0]);
    else if (substitute) rock_down<true, false><<<g, kColumns, 0, stream_>>>(rock(), water_state(), b_.count, n_, m_, f_[1], f_[0]);
    else rock_down<false, true><<<g, kColumns, 0, stream_>>>(rock(), water_state(), b_.count, n_, m_, f_[1], f_[0]);
    check_launch();
  }

  void up(bool eliminate) {
    const dim3 g = pass_grid();
    if (eliminate) rock_up<true><<<g, kColumns, 0, stream_>>>(rock(), b_.count, n_, m_, f_[0], f_[1]);
    else rock_up<false><<<g, kColumns, 0, stream_>>>(rock(), b_.count, n_, m_, f_[0], f_[1]);
    check_launch();
  }

  // The water of step s; `finish`: then row 0 of step s + 1's UL elimination (factors f_[1]).
  void water(const Forcing& forcing, std::size_t s, bool finish) {
    const double dt = forcing.dt[s], v = forcing.v[s];
    double2* factors = static_cast<double2*>(w_.water_factors_.data());
    if (!have_water_ || water_dt_ != dt || water_v_ != v) {
      water_factors<<<blocks(b_.count, kMembers), kMembers, 0, stream_>>>(b_.members, b_.count, n_, model_, outlet_, dt, v, factors);
      check_launch();
      have_water_ = true;
      water_dt_ = dt;
      water_v_ = v;
    }
    const WaterStep ws{dt, v, forcing.inlet[s], s, forcing.steps()};
    const unsigned g = static_cast<unsigned>(b_.count);
    if (model_ == Model::solute)
      water_step<false, false><<<g, kWaterThreads, 0, stream_>>>(b_.members, b_.count, n_, m_, model_, outlet_, ws,
                                                             factors, water_state(), nullptr, b_.curves, f_[1]);
    else if (finish)
      water_step<true, true><<<g, kWaterThreads, 0, stream_>>>(b_.members, b_.count, n_, m_, model_, outlet_, ws, factors,
                                                           water_state(), rock(), b_.curves, f_[1]);
    else
      water_step<true, false><<<g, kWaterThreads, 0, stream_>>>(b_.members, b_.count, n_, m_, model_, outlet_, ws,
                                                            factors, water_state(), rock(), b_.curves, f_[1]);
    check_launch();
  }

  Model model_;
  Grid grid_;
  Outlet outlet_;
  Batch b_;
  Workspace& w_;
  cudaStream_t stream_;
  int n_ = 0, m_ = 0;
  Factors f_[2]{};
  bool have_[2] = {false, false};
  double dt_[2] = {0.0, 0.0};
  bool have_water_ = false;
  double water_dt_ = 0.0, water_v_ = 0.0;
};

void launch_forward(Model model, const Grid& grid, Outlet outlet, const Forcing& forcing, const Batch& batch,
                    Workspace& work, cudaStream_t stream) {
  if (batch.count > work.capacity())
    throw std::invalid_argument("cases::karst::launch_forward: " + std::to_string(batch.count) +
                                " members, the workspace holds " + std::to_string(work.capacity()));
  if (work.model() != model || work.grid().n != grid.n || work.grid().m != grid.m)
    throw std::invalid_argument("cases::karst::launch_forward: the workspace was made for another model or grid");
  if (batch.count == 0 || forcing.steps() == 0) return;
  Forward(model, grid, outlet, batch, work, stream).run(forcing);
}

void launch_misfits(const double* curves, const double* observed, std::size_t count, std::size_t steps,
                    double* misfits, cudaStream_t stream) {
  if (count == 0) return;
  misfits_kernel<<<static_cast<unsigned>(count), 256, 0, stream>>>(curves, observed, steps, misfits);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cases::karst
