#pragma once
// Case "advection" (seed 000, chapter 2): linear advection of u with a constant, uniform velocity
// c on a periodic cube, advanced by an explicit Lax-Wendroff step over a 3 x 3 x 3 stencil:
//
//     u(x, y, z, t + D) = sum over i, j, k in {-1, 0, 1} of a_ijk u(x + i d, y + j d, z + k d, t)
//
// with grid spacing d, time step D and nu = D / d. The coefficients (seed 000 Table 2.1) are
// products of the one-dimensional Lax-Wendroff weights of the Courant numbers C = c nu of each
// axis: w(-1) = C (1 + C) / 2, w(0) = 1 - C^2, w(+1) = C (C - 1) / 2. The step is stable for
// |C| <= 1 on every axis, exact for C = 0 or |C| = 1, and second order in space and time for a fixed
// simulated time. Counted as the seed counts it: 53 flops per point (27 multiplies, 26 adds).
//
// Here: the host part (coefficients, exact solution, a host step to verify the GPU variants) and
// the three variants below (cases/advection/README.md); the kernels are in kernels.hpp.

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "cush/field.hpp"
#include "devices.hpp"

namespace cases {
namespace advection {

/// Flops per point update as seed 000 counts them (its GF metric).
inline constexpr double flops_per_point = 53.0;

/// The constant, uniform velocity.
struct Velocity {
  double x = 0;
  double y = 0;
  double z = 0;
};

/// A periodic grid of nx x ny x nz points (x fastest) on the unit cube: spacing 1 / nx along x,
/// and so on; point (i, j, k) sits at (i / nx, j / ny, k / nz).
struct Grid {
  std::size_t nx = 0;
  std::size_t ny = 0;
  std::size_t nz = 0;
  [[nodiscard]] std::size_t points() const noexcept { return nx * ny * nz; }
};

/// The 27 coefficients a_ijk at index (i + 1) + 3 (j + 1) + 9 (k + 1), for velocity c and the
/// ratios nu = D / d of each axis (the seed uses one d for all axes). Throws
/// std::invalid_argument if a Courant number c nu exceeds 1 in magnitude (unstable).
std::array<double, 27> coefficients(Velocity c, std::array<double, 3> nu);

/// The per-axis weights whose products are `a` (a_ijk = wx[i] wy[j] wz[k]; returned as wx, wy, wz,
/// offsets -1, 0, +1), for the factorized form of the stencil (Options::factorized): the sums of
/// `a` over the other two axes, scaled so that their product is `a`. Throws
/// std::invalid_argument if `a` is not such a product (to 1e-13 of its largest coefficient) or
/// sums to 0.
std::array<double, 9> axis_weights(const std::array<double, 27>& a);

/// The initial field: a smooth periodic function on the unit cube,
/// sin(2 pi x) cos(2 pi y) sin(2 pi z) + 1 / 2.
double initial(double x, double y, double z);

/// The exact solution at time t: the initial field translated by c t (periodic).
double exact(double x, double y, double z, double t, Velocity c);

/// One step on the host, periodic on every axis: out = the stencil applied to in (both
/// grid.points() values, x fastest). The reference that the GPU variants are checked against.
void step_host(std::span<const double> in, std::span<double> out, Grid grid, const std::array<double, 27>& a);

// --- the variants -----------------------------------------------------------------------------
//
// One interface, so one test checks all and one benchmark times all:
//
//     Variant v(grid, coefficients, gpus, options);   // allocates on the devices (a cases::Devices)
//     v.upload(in);                                    // the initial field (grid.points() values;
//                                                      // `in` must stay unchanged until wait())
//     v.run(steps);                                    // `steps` time steps (asynchronous)
//     v.wait();
//     v.download(out);                                 // the field now; returns when it is there
//
// The grid is split along z into one slab per GPU (the split both a raw CUDA programmer and
// cush's decomposition choose for a cube on 1 and 2 GPUs). The single-GPU reference uses
// `options.steps` only; the raw variant ignores `options.depth`. Options out of range throw
// std::invalid_argument.

/// How a step meets the halo exchange.
enum class Schedule {
  bulk,     ///< exchange, then update every owned cell (bulk-synchronous)
  overlap,  ///< update the interior while the exchange runs, then the cells next to the faces
};

struct Options {
  Schedule schedule = Schedule::bulk;
  /// Ghost layers, exchanged every `depth` steps (cush only; seed 003's deep halos): after an
  /// exchange, step r of the cycle updates the owned cells and depth - 1 - r ghost layers around
  /// them, so no step needs fresher ghosts. Needs Schedule::bulk when above 1.
  std::size_t depth = 1;
  /// Time steps one kernel launch computes (1 .. kMaxFusedSteps, launch_stencil_steps): every
  /// variant then keeps `steps` ghost layers, fills them every `steps` steps and runs one fused
  /// launch per cycle (the last cycle of a run may be shorter); bulk or overlapped. The raw
  /// variant needs `steps` z planes per GPU; cush needs depth 1.
  std::size_t steps = 1;
  /// Evaluate the stencil as three 3-point passes, one per axis (axis_weights(); 9 FMAs an update
  /// instead of 27), in every kernel: one-step, fused and thin. The variants still agree bit for
  /// bit with each other and fused launches with one-step ones; against the 27-term chain the
  /// rounding differs (within 1e-12 after 100 steps, the tests). The coefficients must be a
  /// product of per-axis weights, as coefficients() makes them (std::invalid_argument otherwise).
  bool factorized = false;
};

/// `a`, once checked that the options can take it (a factorized stencil needs axis_weights(a));
/// std::invalid_argument otherwise. Every variant's constructor checks so, before any work.
inline const std::array<double, 27>& checked_coefficients(const std::array<double, 27>& a, const Options& o) {
  if (o.factorized) (void)axis_weights(a);
  return a;
}

/// Single-GPU CUDA reference on gpus.cuda[0]: one ghost layer, the periodic halo filled on the GPU
/// before every step (seed 000 §2.3.5); with options.steps = T, T ghost layers filled before
/// every fused launch of T steps.
class Single {
 public:
  Single(Grid grid, const std::array<double, 27>& a, const Devices& gpus, Options options = {});
  ~Single();
  Single(const Single&) = delete;
  Single& operator=(const Single&) = delete;
  void upload(const double* in);
  void run(std::size_t steps);
  void wait();
  void download(double* out);

 private:
  Grid g_;
  std::array<double, 27> a_;
  bool factorized_;
  std::size_t h_;  // ghost layers: the steps a launch fuses
  int device_;
  cudaStream_t stream_ = nullptr;
  double* u_ = nullptr;
  double* v_ = nullptr;
};

/// Multi-GPU raw CUDA: z slabs with one ghost layer; per step each GPU fills its x and y ghosts,
/// pushes its first and last planes into its neighbours' ghost planes (cudaMemcpyPeerAsync on
/// a second stream), and updates its slab; events order everything across the GPUs. With
/// options.steps = T: T ghost layers, T planes pushed each way, one fused launch per T steps.
class MultiCuda {
 public:
  MultiCuda(Grid grid, const std::array<double, 27>& a, const Devices& gpus, Options options = {});
  ~MultiCuda();
  MultiCuda(const MultiCuda&) = delete;
  MultiCuda& operator=(const MultiCuda&) = delete;
  void upload(const double* in);
  void run(std::size_t steps);
  void wait();
  void download(double* out);

 private:
  void step(std::size_t fused);
  Grid g_;
  std::array<double, 27> a_;
  std::vector<int> ids_;  // CUDA devices
  int gpus_;
  Options options_;
  std::size_t h_;  // ghost layers: the steps a launch fuses
  std::vector<std::size_t> planes_, first_plane_;  // per GPU
  std::vector<cudaStream_t> compute_, comm_;
  std::vector<cudaEvent_t> ready_, sent_;
  std::vector<double*> u_, v_;
};

/// Multi-GPU cush: two fields on a decomposed periodic grid (cush::Field) stepped by
/// cush::advance: bulk or overlapped exchanges, deep halos, fused cycles.
class MultiCush {
 public:
  MultiCush(Grid grid, const std::array<double, 27>& a, const Devices& gpus, Options options = {});
  void upload(const double* in);
  void run(std::size_t steps);
  void wait();
  void download(double* out);

 private:
  cush::Field<double>& current() { return swapped_ ? v_ : u_; }
  cush::Field<double>& next() { return swapped_ ? u_ : v_; }
  Grid g_;
  std::array<double, 27> a_;
  Options options_;
  cush::Field<double> u_, v_;
  bool swapped_ = false;  // the current field is v_
};

}  // namespace advection
}  // namespace cases
