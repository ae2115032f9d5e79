#pragma once
// Explicit heat diffusion on a periodic 2D grid (the 5-point stencil), shared by the examples
// field_step.cu (one process, every GPU) and rank_field.cu (one process per GPU, MPI): the
// kernel over a box of a block, and the same steps on the host to check the result against.

#include <cstddef>
#include <utility>
#include <vector>

#include "cush/block.hpp"
#include "cush/grid.hpp"

namespace heat2d {

constexpr double kappa = 0.2;  // diffusion number: stable below 0.25

// One thread per cell of the rows y0 + blockIdx.y, from x0 on, `width` cells wide (local
// coordinates of block `in`); ghosts are read where a neighbour lies beyond the owned cells.
__global__ void diffuse(cush::Block<double> in, double* out, std::ptrdiff_t x0, std::ptrdiff_t y0, std::ptrdiff_t width) {
  const std::ptrdiff_t x = x0 + static_cast<std::ptrdiff_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const std::ptrdiff_t y = y0 + static_cast<std::ptrdiff_t>(blockIdx.y);
  if (x >= x0 + width) return;
  const double* u = in.data();
  const double c = u[in.index(x, y, 0)];
  const double around = u[in.index(x - 1, y, 0)] + u[in.index(x + 1, y, 0)] + u[in.index(x, y - 1, 0)] +
                        u[in.index(x, y + 1, 0)];
  out[in.index(x, y, 0)] = c + kappa * (around - 4.0 * c);
}

// The stencil over `box` (local coordinates) of block `in`, into the same cells of `out`.
inline void step(const cush::Block<double>& in, const cush::Block<double>& out, const cush::Box& box) {
  if (box.empty()) return;
  const dim3 grid(static_cast<unsigned>((box.size[0] + 127) / 128), static_cast<unsigned>(box.size[1]));
  diffuse<<<grid, 128, 0, in.stream()>>>(in, out.data(), box.lo[0], box.lo[1],
                                          static_cast<std::ptrdiff_t>(box.size[0]));
}

inline std::vector<double> host_steps(std::vector<double> u, std::size_t n, std::size_t steps) {
  std::vector<double> v(u.size());
  const auto at = [n](std::size_t x, std::size_t y) { return (y % n) * n + x % n; };
  for (std::size_t s = 0; s < steps; ++s) {
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        const double c = u[at(x, y)];
        const double around = u[at(x + n - 1, y)] + u[at(x + 1, y)] + u[at(x, y + n - 1)] + u[at(x, y + 1)];
        v[at(x, y)] = c + kappa * (around - 4.0 * c);
      }
    std::swap(u, v);
  }
  return u;
}

}  // namespace heat2d
