#pragma once
// Case "wave": one cell of a leapfrog step as the streaming and staged kernels compute it
// (wave_steps.cuh, wave_staged.cuh), step_host's chain of FMAs (reference.hpp), so that both give
// the column kernel's bits.

#include "kernels.hpp"

namespace cases {
namespace wave {

/// Row j of a thread's NY rows: `c` is the cell in a shared plane of pitch P (its x and y
/// neighbours; the y neighbours inside the thread's rows come from q instead), q the thread's z
/// queue of 2 R + 1 planes (q[R] the cell's own plane, row by row), `prev` the cell at u^{n-1}.
template <int R, int NY, int P>
__device__ __forceinline__ double leapfrog_cell(const double* c, const double (&q)[2 * R + 1][NY], int j,
                                                const Leapfrog& l, double prev) {
  double sum = 0;
#pragma unroll
  for (int k = 1; k <= R; ++k) {
    const double up = j + k < NY ? q[R][j + k] : c[k * P];
    const double down = j - k >= 0 ? q[R][j - k] : c[-k * P];
    sum = fma(l.c[k], c[k] + c[-k], sum);
    sum = fma(l.c[k], up + down, sum);
    sum = fma(l.c[k], q[R + k][j] + q[R - k][j], sum);
  }
  return fma(l.courant2, sum, fma(l.centre, q[R][j], -prev));
}

}  // namespace wave
}  // namespace cases
