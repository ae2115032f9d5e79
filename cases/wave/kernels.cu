// Case "wave": the GPU kernels shared by every variant (kernels.hpp).

#include "kernels.hpp"


#include <stdexcept>
#include <string>

#include "coefficients.hpp"
#include "cush/error.hpp"
#include "wave_steps.cuh"

namespace cases {
namespace wave {

namespace {

// One thread per (x, y) column of the box, marching a run of z planes. The x and y neighbours come
// through the read-only cache; every node is step_host's chain of FMAs.
template <int R>
__global__ void leapfrog_kernel(const double* prev, const double* __restrict__ cur, double* next, Box box, Leapfrog l,
                                int run) {
  const long x = box.x0 + blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long y = box.y0 + blockIdx.y * static_cast<long>(blockDim.y) + threadIdx.y;
  if (x >= box.x0 + box.nx || y >= box.y0 + box.ny) return;
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sy = box.pitch_x, sz = box.pitch_x * box.pitch_y;
  for (long z = z_begin; z < z_end; ++z) {
    const long at = z * sz + y * sy + x;
    double sum = 0;
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      sum = fma(l.c[k], __ldg(cur + at + k) + __ldg(cur + at - k), sum);
      sum = fma(l.c[k], __ldg(cur + at + k * sy) + __ldg(cur + at - k * sy), sum);
      sum = fma(l.c[k], __ldg(cur + at + k * sz) + __ldg(cur + at - k * sz), sum);
    }
    next[at] = fma(l.courant2, sum, fma(l.centre, __ldg(cur + at), -prev[at]));
  }
}


}  // namespace

Leapfrog leapfrog(int order, double courant) {
  check_courant(order, courant);
  const std::span<const double> c = coefficients(order);
  Leapfrog l;
  l.radius = static_cast<int>(c.size()) - 1;
  for (std::size_t k = 0; k < c.size(); ++k) l.c[k] = c[k];
  l.courant2 = courant * courant;
  l.centre = 2 + 6 * c[0] * l.courant2;
  return l;
}

void launch_column_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const dim3 block(32, 8);
  const long columns = ((box.nx + 31) / 32) * ((box.ny + 7) / 8);
  long run = 64;
  while (run > 1 && columns * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + 31) / 32), static_cast<unsigned>((box.ny + 7) / 8),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  switch (l.radius) {
    case 1: leapfrog_kernel<1><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
    case 2: leapfrog_kernel<2><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
    case 3: leapfrog_kernel<3><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
    default: leapfrog_kernel<4><<<grid, block, 0, stream>>>(prev, cur, next, box, l, static_cast<int>(run)); break;
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                 cudaStream_t stream) {
  if (l.radius == 1 || l.radius == 4) launch_column_step(prev, cur, next, box, l, stream);
  else launch_steps(WaveLevels{prev, cur, nullptr, next}, box, l, 1, stream);
}

std::size_t max_fused_steps(int order) { return order == 2 ? 4 : order == 4 ? 2 : 1; }

std::size_t checked_fused_steps(int order, std::size_t steps) {
  if (steps < 1 || steps > max_fused_steps(order))
    throw std::invalid_argument("cases::wave: " + std::to_string(steps) + " steps a launch at order " +
                                std::to_string(order) + " (1 .. " + std::to_string(max_fused_steps(order)) + ")");
  return steps;
}

void launch_steps(const WaveLevels& lv, const Box& box, const Leapfrog& l, std::size_t steps, cudaStream_t stream) {
  switch (10 * l.radius + static_cast<int>(checked_fused_steps(2 * l.radius, steps))) {
    case 11: launch_wave_steps_tiles<WaveShape<1, 1>>(lv, box, l, stream); break;
    case 12: launch_wave_steps_tiles<WaveShape<1, 2>>(lv, box, l, stream); break;
    case 13: launch_wave_steps_tiles<WaveShape<1, 3>>(lv, box, l, stream); break;
    case 14: launch_wave_steps_tiles<WaveShape<1, 4>>(lv, box, l, stream); break;
    case 21: launch_wave_steps_tiles<WaveShape<2, 1>>(lv, box, l, stream); break;
    case 22: launch_wave_steps_tiles<WaveShape<2, 2>>(lv, box, l, stream); break;
    case 31: launch_wave_steps_tiles<WaveShape<3, 1>>(lv, box, l, stream); break;
    default: launch_wave_steps_tiles<WaveShape<4, 1>>(lv, box, l, stream); break;
  }
}

}  // namespace wave
}  // namespace cases
