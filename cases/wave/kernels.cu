// Case "wave": the GPU kernels shared by every variant (kernels.hpp).

#include "kernels.hpp"


#include <stdexcept>
#include <string>

#include "coefficients.hpp"
#include "cush/error.hpp"
#include "wave_staged.cuh"
#include "wave_staged_tensor.cuh"
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

// The same with the column's z neighbours in registers: a thread keeps the 2R + 1 planes around
// the current one as it marches z (one load a plane instead of 2R + 1 through the cache); x and y
// neighbours as above. Every node is the same chain of FMAs, so the same bits.
template <int R>
__global__ void leapfrog_queue_kernel(const double* prev, const double* __restrict__ cur, double* next, Box box, Leapfrog l,
                                      int run) {
  const long x = box.x0 + blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long y = box.y0 + blockIdx.y * static_cast<long>(blockDim.y) + threadIdx.y;
  if (x >= box.x0 + box.nx || y >= box.y0 + box.ny) return;
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sy = box.pitch_x, sz = box.pitch_x * box.pitch_y, column = y * sy + x;
  double q[2 * R + 1];  // at plane z: q[R + k] = cur at z + k
#pragma unroll
  for (int i = 0; i < 2 * R; ++i) q[i + 1] = __ldg(cur + (z_begin - R + i) * sz + column);
  for (long z = z_begin; z < z_end; ++z) {
    const long at = z * sz + column;
#pragma unroll
    for (int i = 0; i < 2 * R; ++i) q[i] = q[i + 1];
    q[2 * R] = __ldg(cur + at + R * sz);
    double sum = 0;
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      sum = fma(l.c[k], __ldg(cur + at + k) + __ldg(cur + at - k), sum);
      sum = fma(l.c[k], __ldg(cur + at + k * sy) + __ldg(cur + at - k * sy), sum);
      sum = fma(l.c[k], q[R + k] + q[R - k], sum);
    }
    next[at] = fma(l.courant2, sum, fma(l.centre, q[R], -prev[at]));
  }
}

/// The column kernels' launch: blocks of 32 x 8 columns, z runs of up to 64 planes, halved until
/// there are 2048 blocks or the runs are one plane.
template <template <int> class Kernel>
void launch_columns(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                    cudaStream_t stream) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const dim3 block(32, 8);
  const long columns = ((box.nx + 31) / 32) * ((box.ny + 7) / 8);
  long run = 64;
  while (run > 1 && columns * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + 31) / 32), static_cast<unsigned>((box.ny + 7) / 8),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  const int r = static_cast<int>(run);
  switch (l.radius) {
    case 1: Kernel<1>::launch(grid, block, stream, prev, cur, next, box, l, r); break;
    case 2: Kernel<2>::launch(grid, block, stream, prev, cur, next, box, l, r); break;
    case 3: Kernel<3>::launch(grid, block, stream, prev, cur, next, box, l, r); break;
    default: Kernel<4>::launch(grid, block, stream, prev, cur, next, box, l, r); break;
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

template <int R>
struct Column {
  static void launch(dim3 grid, dim3 block, cudaStream_t stream, const double* prev, const double* cur, double* next,
                     const Box& box, const Leapfrog& l, int run) {
    leapfrog_kernel<R><<<grid, block, 0, stream>>>(prev, cur, next, box, l, run);
  }
};

template <int R>
struct Queue {
  static void launch(dim3 grid, dim3 block, cudaStream_t stream, const double* prev, const double* cur, double* next,
                     const Box& box, const Leapfrog& l, int run) {
    leapfrog_queue_kernel<R><<<grid, block, 0, stream>>>(prev, cur, next, box, l, run);
  }
};

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
  launch_columns<Column>(prev, cur, next, box, l, stream);
}

void launch_queue_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                       cudaStream_t stream) {
  launch_columns<Queue>(prev, cur, next, box, l, stream);
}

namespace {
/// `f(Shape{})` with the shape of `l`'s radius among a kernel's three, for orders 4, 6 and 8;
/// `otherwise()` at any other order.
template <class Shape4, class Shape6, class Shape8, class F, class G>
auto by_order(const Leapfrog& l, F&& f, G&& otherwise) {
  if (l.radius == 2) return f(Shape4{});
  if (l.radius == 3) return f(Shape6{});
  if (l.radius == 4) return f(Shape8{});
  return otherwise();
}

[[noreturn]] void not_built(const char* kernel, const Leapfrog& l) {
  throw std::invalid_argument(std::string("cases::wave: the ") + kernel + " kernel is built for orders 4, 6 and 8, not " +
                              std::to_string(2 * l.radius));
}

/// The staged kernel's shapes (README.md, "The staged kernel"), 3 planes in flight: at orders 4
/// and 6 64 x 32 columns, 512 threads of 4 rows; at order 8 64 x 24 columns, 512 threads of 3 rows.
/// launch_step leaves order 6 to the streaming kernel: the staged one only tied it (runs 140-141).
using StagedShape4 = WaveStagedConfig<2, 64, 8, 4, 3>;
using StagedShape6 = WaveStagedConfig<3, 64, 8, 4, 3>;
using StagedShape8 = WaveStagedConfig<4, 64, 8, 3, 3>;

/// The tensor-copy kernel's shapes (README.md, "The tensor-copy kernel"), 3 planes in flight: 64 x
/// 32 columns (512 threads of 4 rows) at order 4, 64 x 24 (512 threads of 3 rows) at 6 and 8.
using TensorShape4 = WaveStagedConfig<2, 64, 8, 4, 3>;
using TensorShape6 = WaveStagedConfig<3, 64, 8, 3, 3>;
using TensorShape8 = WaveStagedConfig<4, 64, 8, 3, 3>;
}  // namespace

bool staged_step_fits(const double* prev, const double* cur, const Box& box, const Leapfrog& l) {
  return by_order<StagedShape4, StagedShape6, StagedShape8>(
      l, [&](auto shape) { return wave_staged_fits<decltype(shape)>(prev, cur, box); }, [] { return false; });
}

void launch_staged_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream) {
  by_order<StagedShape4, StagedShape6, StagedShape8>(
      l, [&](auto shape) { launch_wave_staged<decltype(shape)>(prev, cur, next, box, l, stream); },
      [&] { not_built("staged", l); });
}

bool tensor_step_fits(const double* prev, const double* cur, const Box& box, const Leapfrog& l) {
  return by_order<TensorShape4, TensorShape6, TensorShape8>(
      l, [&](auto shape) { return wave_tensor_fits<decltype(shape)>(prev, cur, box); }, [] { return false; });
}

void launch_tensor_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream) {
  by_order<TensorShape4, TensorShape6, TensorShape8>(
      l, [&](auto shape) { launch_wave_tensor<decltype(shape)>(prev, cur, next, box, l, stream); },
      [&] { not_built("tensor-copy", l); });
}

void launch_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                 cudaStream_t stream) {
  if (l.radius == 1) launch_queue_step(prev, cur, next, box, l, stream);
  else if (tensor_step_fits(prev, cur, box, l)) launch_tensor_step(prev, cur, next, box, l, stream);
  // Without tensor copies: the staged kernel at orders 4 and 8; at 6 it only ties the streaming one.
  else if (l.radius != 3 && staged_step_fits(prev, cur, box, l)) launch_staged_step(prev, cur, next, box, l, stream);
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
