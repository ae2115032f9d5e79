#pragma once
// Case "advection": the GPU kernels shared by every variant (kernels.cu).

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>

#include "advection.hpp"
#include "cush/field.hpp"
#include "padded_grid.hpp"

namespace cases {
namespace advection {

/// The stencil as the kernels take it, by value: the 27 coefficients (index as in
/// coefficients()) and, for the factorized form, the per-axis weights (axis_weights()).
struct Coefficients {
  double a[27];
  double w[9];              ///< x, y, z weights for the offsets -1, 0, +1 (factorized only)
  bool factorized = false;  ///< every kernel evaluates three 3-point passes instead of 27 terms
};

/// The kernels' argument for coefficients `a` (coefficients()); with `factorized`, also their
/// per-axis weights (std::invalid_argument if `a` is not a product of such weights).
inline Coefficients kernel_coefficients(const std::array<double, 27>& a, bool factorized = false) {
  Coefficients c{};
  for (std::size_t q = 0; q < 27; ++q) c.a[q] = a[q];
  if (factorized) {
    const std::array<double, 9> w = axis_weights(a);
    for (std::size_t q = 0; q < 9; ++q) c.w[q] = w[q];
    c.factorized = true;
  }
  return c;
}

/// The cells a stencil launch updates, in a block stored with ghost layers: the box starts at
/// cell (x0, y0, z0) of the stored array (ghosts included, so x0 >= 1) and spans nx x ny x nz;
/// the stored array is pitch_x cells wide and pitch_y cells deep.
struct Box {
  long x0 = 1, y0 = 1, z0 = 1;
  long nx = 0, ny = 0, nz = 0;
  long pitch_x = 0, pitch_y = 0;
};

/// The kernel box of `cells` (local coordinates of block `b`, ghosts negative) grown by `grow`
/// cells on every side.
inline Box stored_box(const cush::Block<double>& b, const cush::Box& cells, std::size_t grow = 0) {
  const auto g = static_cast<long>(grow);
  return Box{cells.lo[0] + static_cast<long>(b.halo()[0]) - g,
             cells.lo[1] + static_cast<long>(b.halo()[1]) - g,
             cells.lo[2] + static_cast<long>(b.halo()[2]) - g,
             static_cast<long>(cells.size[0]) + 2 * g,
             static_cast<long>(cells.size[1]) + 2 * g,
             static_cast<long>(cells.size[2]) + 2 * g,
             static_cast<long>(b.alloc()[0]),
             static_cast<long>(b.alloc()[1])};
}

/// out = the stencil applied to in over `box` (one ghost layer around the box must be valid in
/// `in`). `in` and `out` share the layout and must not overlap.
void launch_stencil(const double* in, double* out, const Box& box, const Coefficients& c, cudaStream_t stream);

/// The most time steps one launch of launch_stencil_steps fuses.
constexpr std::size_t kMaxFusedSteps = 4;

/// `steps`, or std::invalid_argument if outside 1 .. kMaxFusedSteps.
std::size_t checked_fused_steps(std::size_t steps);

/// How the fused kernel orders its stages: one after another on each plane, a barrier between
/// them (stencil_steps.cuh), or skewed by a plane, one barrier a plane (stencil_skewed.cuh); the
/// same bits. `best`: the faster on an H200 for each number of steps (docs/results/temporal.md).
enum class FusedSchedule { best, staged, skewed };

/// out = `steps` (1 .. kMaxFusedSteps) applications of the stencil to in over `box`, in one
/// kernel that keeps the intermediate time levels in shared memory: `steps` layers around the
/// box must be valid in `in`. Bit for bit the values of `steps` launch_stencil calls, each on the
/// box grown by the steps still to come. Throws std::invalid_argument for steps 0 or above
/// kMaxFusedSteps. One step is launch_stencil, whatever the schedule.
void launch_stencil_steps(const double* in, double* out, const Box& box, const Coefficients& c, std::size_t steps,
                          cudaStream_t stream, FusedSchedule schedule = FusedSchedule::best);

}  // namespace advection
}  // namespace cases
