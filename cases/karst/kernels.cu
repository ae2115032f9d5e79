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
//
// This is the streaming path: the state in global memory. Where a member fits a thread-block
// cluster's shared memory, the resident path (resident.cu) runs the same device code
// (passes.cuh) with the state on chip; Forward::resident chooses.

#include <cuda_runtime.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "passes.cuh"
#include "resident.hpp"

namespace cases::karst {

namespace {

using namespace device;

constexpr int kColumns = 128;  // threads per block of the rock passes (one per column)
constexpr int kMembers = 32;   // threads per block of the per-member kernels, a thread per member

// Factor storage of one factorization (LU or UL) for every member (passes.cuh's MemberFactors,
// member k at elim + k * M, sub + k * M, wall + k).
struct Factors {
  double2* elim;
  double* sub;
  double* wall;
  __device__ MemberFactors member(std::size_t k, int m) const { return {elim + k * m, sub + k * m, wall + k}; }
};

__global__ void rock_factors_lu(const Groups* members, std::size_t count, int m, double dr, double dt, Factors f) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < count) lu_factors(members[k], m, dr, dt, f.member(k, m));
}

__global__ void rock_factors_ul(const Groups* members, std::size_t count, int m, double dr, double dt, Factors f) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < count) ul_factors(members[k], m, dr, dt, f.member(k, m));
}

// The down pass over member k's column j (see the top of the file).
template <bool Substitute, bool Eliminate>
__global__ void rock_down(double* rock, const double* water, std::size_t count, int n, int m, Factors ul, Factors lu) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= n) return;
  const std::size_t stride = static_cast<std::size_t>(n);
  for (std::size_t k = blockIdx.y; k < count; k += gridDim.y)
    down_column<Substitute, Eliminate>(rock + k * m * stride + j, stride, m, ul.sub + k * m, lu.elim + k * m,
                                       Eliminate ? lu.wall[k] : 0.0, Eliminate ? water[k * stride + j] : 0.0);
}

// The up pass: LU substitution of this step from the bottom, and (Eliminate) the UL elimination
// of the next step in rows M-1..1; row 0 is left holding this step's wall temperature x_0.
template <bool Eliminate>
__global__ void rock_up(double* rock, std::size_t count, int n, int m, Factors lu, Factors ul) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= n) return;
  const std::size_t stride = static_cast<std::size_t>(n);
  for (std::size_t k = blockIdx.y; k < count; k += gridDim.y)
    up_column<Eliminate>(rock + k * m * stride + j, stride, m, lu.sub + k * m, ul.elim + k * m);
}

__global__ void water_factors(const Groups* members, std::size_t count, int n, Model model, Outlet outlet, double dt,
                              double v, double2* factors) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < count) water_pivots<false>(members[k], n, model, outlet, dt, v, factors + k * n);
}

// A member's rock rows in global memory: row i of column j at base[i * n + j].
struct GlobalRows {
  double* base;
  std::size_t n;
  __device__ double& operator()(int i, int j) const { return base[i * n + j]; }
};

// One member's water step, one block of kWaterThreads per member (passes.cuh's water_step).
struct WaterForcing {
  double dt, v, inlet;
  std::size_t step, steps;
};
template <bool Heat, bool Finish>
__global__ void __launch_bounds__(kWaterThreads) water_kernel(const Groups* members, std::size_t count, int n, int m,
                                                              Model model, Outlet outlet, WaterForcing wf,
                                                              const double2* factors, double* water, double* rock,
                                                              double* curves, Factors next) {
  __shared__ Affine shared[kWaterWarps];
  const std::size_t k = blockIdx.x;
  if (k >= count) return;  // the whole block
  const WaterStep ws{wf.dt, wf.v, wf.inlet, wf.step, curves + k * wf.steps};
  const GlobalRows rows{Heat ? rock + k * m * static_cast<std::size_t>(n) : nullptr, static_cast<std::size_t>(n)};
  const double2 e0 = Finish ? next.elim[k * m] : make_double2(0.0, 0.0);
  const double coupling = Finish ? next.wall[k] : 0.0;
  water_step<Heat, Finish, false>(members[k], n, model, outlet, ws, factors + k * n, water + k * n, rows, e0, coupling, shared);
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

  void run(const Forcing& forcing, Path path) {
    if (resident(forcing, path)) return;
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

  // The resident path (resident.hpp), where `path` asks for it or chooses it; false: stream.
  bool resident(const Forcing& forcing, Path path) {
    if (path == Path::streaming) return false;
    if (model_ != Model::heat) {
      if (path == Path::resident)
        throw std::invalid_argument("cases::karst::launch_forward: the resident path runs the heat model only");
      return false;
    }
    const std::optional<ResidentShape> shape = resident_shape(grid_);
    if (!shape) {
      if (path == Path::resident)
        throw std::invalid_argument("cases::karst::launch_forward: the resident path cannot run N " +
                                    std::to_string(grid_.n) + ", M " + std::to_string(grid_.m) +
                                    " on this device (compute capability 9.0 and a member within 16 blocks' shared "
                                    "memory needed)");
      return false;
    }
    if (path == Path::automatic && 32 * changes(forcing) > forcing.steps()) return false;
    launch_resident(ResidentRun{b_.members, b_.count, b_.forcing, forcing.steps(), grid_, outlet_, b_.curves, rock(),
                                water_state()},
                    *shape, stream_);
    return true;
  }

  // The steps whose dt or v differ from the step before's: each costs the resident path a
  // factorization on one thread (N pivots for the water), which the streaming path spreads over
  // the members.
  static std::size_t changes(const Forcing& f) {
    std::size_t n = 0;
    for (std::size_t s = 1; s < f.steps(); ++s) n += (f.dt[s] != f.dt[s - 1] || f.v[s] != f.v[s - 1]) ? 1 : 0;
    return n;
  }

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
    const WaterForcing ws{dt, v, forcing.inlet[s], s, forcing.steps()};
    const unsigned g = static_cast<unsigned>(b_.count);
    if (model_ == Model::solute)
      water_kernel<false, false><<<g, kWaterThreads, 0, stream_>>>(b_.members, b_.count, n_, m_, model_, outlet_, ws,
                                                             factors, water_state(), nullptr, b_.curves, f_[1]);
    else if (finish)
      water_kernel<true, true><<<g, kWaterThreads, 0, stream_>>>(b_.members, b_.count, n_, m_, model_, outlet_, ws, factors,
                                                           water_state(), rock(), b_.curves, f_[1]);
    else
      water_kernel<true, false><<<g, kWaterThreads, 0, stream_>>>(b_.members, b_.count, n_, m_, model_, outlet_, ws,
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
                    Workspace& work, cudaStream_t stream, Path path) {
  if (batch.count > work.capacity())
    throw std::invalid_argument("cases::karst::launch_forward: " + std::to_string(batch.count) +
                                " members, the workspace holds " + std::to_string(work.capacity()));
  if (work.model() != model || work.grid().n != grid.n || work.grid().m != grid.m)
    throw std::invalid_argument("cases::karst::launch_forward: the workspace was made for another model or grid");
  if (batch.count == 0 || forcing.steps() == 0) return;
  Forward(model, grid, outlet, batch, work, stream).run(forcing, path);
}

void launch_misfits(const double* curves, const double* observed, std::size_t count, std::size_t steps,
                    double* misfits, cudaStream_t stream) {
  if (count == 0) return;
  misfits_kernel<<<static_cast<unsigned>(count), 256, 0, stream>>>(curves, observed, steps, misfits);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cases::karst
