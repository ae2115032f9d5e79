// Case "advection": the GPU kernels shared by every variant. A block of the grid is stored with
// `h` ghost layers on every side (x fastest); the stencil reads one layer around the cells it
// updates.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "stencil.cuh"
#include "stencil_skewed.cuh"
#include "stencil_steps.cuh"

namespace cases {
namespace advection {

namespace {

// The stencil on a box too thin for tiles (the faces of an overlapped step's boundary): a thread
// per cell, 27 loads (mostly cache hits) and the tile kernel's order of FMAs, so the same bits.
__global__ void thin_stencil_kernel(const double* __restrict__ in, double* __restrict__ out, Box box, Coefficients c) {
  const unsigned cells = static_cast<unsigned>(box.nx * box.ny * box.nz);
  const long sz = box.pitch_x * box.pitch_y;
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < cells; t += gridDim.x * blockDim.x) {
    const unsigned x = t % static_cast<unsigned>(box.nx), r = t / static_cast<unsigned>(box.nx);
    const unsigned y = r % static_cast<unsigned>(box.ny), z = r / static_cast<unsigned>(box.ny);
    const long at = (box.z0 + z) * sz + (box.y0 + y) * box.pitch_x + box.x0 + x;
    if (c.factorized) {  // push_split_strip's order: x passes, y passes, the z pass
      double sy[3];
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        double sx[3];
#pragma unroll
        for (int j = 0; j < 3; ++j) {
          const double* row = in + at + (k - 1) * sz + (j - 1) * box.pitch_x;
          sx[j] = split_pass(c.w, __ldg(row - 1), __ldg(row), __ldg(row + 1));
        }
        sy[k] = split_pass(c.w + 3, sx[0], sx[1], sx[2]);
      }
      out[at] = split_pass(c.w + 6, sy[0], sy[1], sy[2]);
      continue;
    }
    double sum = 0;
#pragma unroll
    for (int q = 0; q < 27; ++q)
      sum = fma(c.a[q], __ldg(in + at + (q / 9 - 1) * sz + (q / 3 % 3 - 1) * box.pitch_x + (q % 3 - 1)), sum);
    out[at] = sum;
  }
}

}  // namespace

void launch_stencil(const double* in, double* out, const Box& box, const Coefficients& c, cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const long cells = box.nx * box.ny * box.nz;
  if ((box.nx < kStencilConfig::kX / 4 || box.ny < kStencilConfig::kRows / 4) && cells < (1L << 31)) {
    // Tiles would load far more cells than they update.
    const unsigned blocks = static_cast<unsigned>(std::min<long>((cells + 255) / 256, 8192));
    thin_stencil_kernel<<<blocks, 256, 0, stream>>>(in, out, box, c);
    CUSH_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const auto filled = [&](long width) { return static_cast<double>(box.nx) / static_cast<double>((box.nx + width - 1) / width * width); };
  const bool wide = box.nx >= 512 && filled(kWideStencilConfig::kX) >= filled(kStencilConfig::kX) - 0.01;
  if (c.factorized) {
    if (wide)
      launch_stencil_steps_tiles<kSplitWideConfig>(in, out, box, c, stream);
    else
      launch_stencil_steps_tiles<kSplitConfig>(in, out, box, c, stream);
  } else if (wide) {
    launch_stencil_tiles<kWideStencilConfig>(in, out, box, c, stream);
  } else {
    launch_stencil_tiles<kStencilConfig>(in, out, box, c, stream);
  }
}

std::size_t checked_fused_steps(std::size_t steps) {
  if (steps < 1 || steps > kMaxFusedSteps)
    throw std::invalid_argument("cases::advection: the fused kernel computes 1 to " + std::to_string(kMaxFusedSteps) +
                                " steps, not " + std::to_string(steps));
  return steps;
}

namespace {
/// T steps in one launch: the 27-term shape or the factorized one, by `c`; the staged schedule
/// unless the skewed one is asked for (FusedSchedule::best is the staged one in both forms).
template <class Plain, class Factorized>
void launch_fused(const double* in, double* out, const Box& box, const Coefficients& c, cudaStream_t stream,
                  FusedSchedule schedule) {
  const bool skewed = schedule == FusedSchedule::skewed;
  if (c.factorized) {
    if (skewed) launch_stencil_skewed_tiles<Factorized>(in, out, box, c, stream);
    else launch_stencil_steps_tiles<Factorized>(in, out, box, c, stream);
  } else if (skewed) {
    launch_stencil_skewed_tiles<Plain>(in, out, box, c, stream);
  } else {
    launch_stencil_steps_tiles<Plain>(in, out, box, c, stream);
  }
}
}  // namespace

void launch_stencil_steps(const double* in, double* out, const Box& box, const Coefficients& c, std::size_t steps,
                          cudaStream_t stream, FusedSchedule schedule) {
  switch (checked_fused_steps(steps)) {
    case 1: launch_stencil(in, out, box, c, stream); return;
    case 2: launch_fused<kSteps2Config, kSplitSteps2Config>(in, out, box, c, stream, schedule); return;
    case 3: launch_fused<kSteps3Config, kSplitSteps3Config>(in, out, box, c, stream, schedule); return;
    case 4: launch_fused<kSteps4Config, kSplitSteps4Config>(in, out, box, c, stream, schedule); return;
    default: return;  // (checked)
  }
}

}  // namespace advection
}  // namespace cases
