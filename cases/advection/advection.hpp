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
// What is here so far: the host part (coefficients, exact solution, a host step to verify the GPU
// variants), the GPU kernels and the single-GPU reference; the multi-GPU variants come next (see
// cases/advection/README.md).

#include <array>
#include <cstddef>
#include <span>

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

/// The initial field: a smooth periodic function on the unit cube,
/// sin(2 pi x) cos(2 pi y) sin(2 pi z) + 1 / 2.
double initial(double x, double y, double z);

/// The exact solution at time t: the initial field translated by c t (periodic).
double exact(double x, double y, double z, double t, Velocity c);

/// One step on the host, periodic on every axis: out = the stencil applied to in (both
/// grid.points() values, x fastest). The reference that the GPU variants are checked against.
void step_host(std::span<const double> in, std::span<double> out, Grid grid, const std::array<double, 27>& a);

// --- the variants: `steps` steps from `in` into `out` (host arrays of grid.points() values) ----

/// Single-GPU CUDA reference on device 0 (`gpus` is ignored). Not yet run on a GPU.
void single(const double* in, double* out, Grid grid, const std::array<double, 27>& a, std::size_t steps, int gpus);

}  // namespace advection
}  // namespace cases
