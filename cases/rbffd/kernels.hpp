#pragma once
// Case "rbffd": the GPU kernels shared by every variant (kernels.cu).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ell.hpp"

namespace cases {
namespace rbffd {

/// One fused RK4 stage (0-3) over the rows [first, first + count) of `a` (one thread per row),
/// as reference.hpp's rk4 computes it: y = A x (the row's entries in order), k = dt y;
/// stage 0 sets acc = b0 k, the others add b k; stages 0-2 write next = u + alpha k (alpha = 1/2,
/// 1/2, 1); stage 3 writes u = u + (acc + b3 k) and next = that new u (the next step's first
/// input). `x` is indexed by a's columns, the others by row. `next` must not alias `x`.
void launch_stage(const EllView& a, std::size_t first, std::size_t count, const double* x, double* next, double* u,
                  double* acc, int stage, double dt, cudaStream_t stream);

/// The split stage (Schedule::split), boundary rows [first, first + own.rows) in two passes:
/// while the exchange runs, partial[i] = row i of `own` (the rows' owned-column entries) times x;
void launch_partial(const EllView& own, const double* x, double* partial, cudaStream_t stream);
/// after it, y = partial[i] + row i of `ghosts` (their ghost-column entries) times x, then the
/// stage's update of row first + i as launch_stage's. The sum's order differs from the one-pass
/// stage: results agree to rounding, not bit for bit.
void launch_finish_stage(const EllView& ghosts, std::size_t first, const double* x, const double* partial, double* next,
                         double* u, double* acc, int stage, double dt, cudaStream_t stream);

/// out[i] = x[index[i]] for i < count (the raw variant's halo gather; `out` may be a peer's).
void launch_gather(const double* x, const std::int32_t* index, std::size_t count, double* out, cudaStream_t stream);

/// Measured alternatives for y = A x alone (bench_rbffd.cpp's spmv rows), over all rows:
/// ELL, one thread per row (the stage kernel's product);
void launch_ell_spmv(const EllView& a, const double* x, double* y, cudaStream_t stream);
/// CSR, one thread per row (the seed's kernel);
void launch_csr_thread(const std::int64_t* row_ptr, const std::int32_t* cols, const double* values, std::size_t rows,
                       const double* x, double* y, cudaStream_t stream);
/// CSR, one warp per row, the lanes' products summed by shuffles (a different order of sums).
void launch_csr_warp(const std::int64_t* row_ptr, const std::int32_t* cols, const double* values, std::size_t rows,
                     const double* x, double* y, cudaStream_t stream);

}  // namespace rbffd
}  // namespace cases
