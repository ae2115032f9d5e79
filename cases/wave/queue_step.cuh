#pragma once
// Case "wave": the one-step kernel with each column's z neighbours in registers (kernels.hpp's
// launch_queue_step), a template over the stencil's radius and the rows a thread takes, so that
// bench/probes/probe_wave.cu can time its forms against each other.
//
// A block of 32 x 8 threads takes 32 x (8 NY) columns; thread (tx, ty) takes column x = tx of the
// NY rows ty NY .. and marches a z run. For each of its columns it keeps the 2 R + 1 planes around
// the current one (one load a plane instead of 2 R + 1 through the cache). The x neighbours come
// through the read-only cache; the y neighbours too, except where they are the thread's own
// columns (2 R loads a plane for NY columns, not 2 R NY). With `Ahead` the next plane's z front
// and older level are loaded while this plane is computed (two more loads in flight a column).
// Every node is step_host's chain of FMAs (reference.hpp), so the bits of the column kernel.

#include <cuda_runtime_api.h>

#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace wave {

template <int R, int NY, bool Ahead>
__global__ void __launch_bounds__(256)
    queue_step_kernel(const double* prev, const double* __restrict__ cur, double* next, Box box, Leapfrog l, int run) {
  const long x = box.x0 + blockIdx.x * 32L + threadIdx.x;
  const long y_first = box.y0 + (blockIdx.y * 8L + threadIdx.y) * NY;
  const long y_end = box.y0 + box.ny;
  if (x >= box.x0 + box.nx || y_first >= y_end) return;
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sy = box.pitch_x, sz = box.pitch_x * box.pitch_y;
  // Row j is y_first + j, or (past the box) the first row again: computed, never stored.
  long column[NY];
  bool store[NY];
#pragma unroll
  for (int j = 0; j < NY; ++j) {
    store[j] = y_first + j < y_end;
    column[j] = (store[j] ? y_first + j : y_first) * sy + x;
  }
  double q[NY][2 * R + 1];  // at plane z: q[j][R + k] = cur at z + k in column j
#pragma unroll
  for (int j = 0; j < NY; ++j)
#pragma unroll
    for (int i = 0; i < 2 * R; ++i) q[j][i + 1] = __ldg(cur + (z_begin - R + i) * sz + column[j]);
  double front[NY], older[NY];  // with Ahead: plane z's z front (cur at z + R) and u^{n-1}
  if constexpr (Ahead)
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      front[j] = __ldg(cur + (z_begin + R) * sz + column[j]);
      older[j] = prev[z_begin * sz + column[j]];
    }
  for (long z = z_begin; z < z_end; ++z) {
    double f[NY], o[NY];
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      if constexpr (Ahead) {
        f[j] = front[j];
        o[j] = older[j];
        if (z + 1 < z_end) {  // the next plane's, before this plane's stores (in place: own cells only)
          front[j] = __ldg(cur + (z + 1 + R) * sz + column[j]);
          older[j] = prev[(z + 1) * sz + column[j]];
        }
      } else {
        f[j] = __ldg(cur + (z + R) * sz + column[j]);
        o[j] = prev[z * sz + column[j]];
      }
    }
    // The y neighbours of the thread's rows: rows -R .. NY + R - 1, own rows from the queues.
    double v[NY + 2 * R];
#pragma unroll
    for (int j = 0; j < NY; ++j) {
#pragma unroll
      for (int i = 0; i < 2 * R; ++i) q[j][i] = q[j][i + 1];
      q[j][2 * R] = f[j];
      v[R + j] = q[j][R];
    }
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      v[R - k] = __ldg(cur + z * sz + column[0] - k * sy);
      v[R + NY - 1 + k] = __ldg(cur + z * sz + column[NY - 1] + k * sy);
    }
#pragma unroll
    for (int j = 0; j < NY; ++j) {
      const long at = z * sz + column[j];
      double sum = 0;
#pragma unroll
      for (int k = 1; k <= R; ++k) {
        sum = fma(l.c[k], __ldg(cur + at + k) + __ldg(cur + at - k), sum);
        sum = fma(l.c[k], v[R + j + k] + v[R + j - k], sum);
        sum = fma(l.c[k], q[j][R + k] + q[j][R - k], sum);
      }
      if (store[j]) next[at] = fma(l.courant2, sum, fma(l.centre, q[j][R], -o[j]));
    }
  }
}

/// launch_queue_step's kernel in form (NY, Ahead): z runs of up to `max_run` planes, halved until
/// there are 2048 blocks or the runs are one plane.
template <int NY, bool Ahead>
void launch_queue_kernel(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                         cudaStream_t stream, long max_run) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  const dim3 block(32, 8);
  const long rows = 8L * NY, columns = ((box.nx + 31) / 32) * ((box.ny + rows - 1) / rows);
  long run = max_run;
  while (run > 1 && columns * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + 31) / 32), static_cast<unsigned>((box.ny + rows - 1) / rows),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  const int r = static_cast<int>(run);
  switch (l.radius) {
    case 1: queue_step_kernel<1, NY, Ahead><<<grid, block, 0, stream>>>(prev, cur, next, box, l, r); break;
    case 2: queue_step_kernel<2, NY, Ahead><<<grid, block, 0, stream>>>(prev, cur, next, box, l, r); break;
    case 3: queue_step_kernel<3, NY, Ahead><<<grid, block, 0, stream>>>(prev, cur, next, box, l, r); break;
    default: queue_step_kernel<4, NY, Ahead><<<grid, block, 0, stream>>>(prev, cur, next, box, l, r); break;
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wave
}  // namespace cases
