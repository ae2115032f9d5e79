#pragma once
// Small kernels the GPU tests run on plan segments. Launch errors are thrown as cush::CudaError.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cush_test {

/// x[i] = a * x[i] + b
void affine(float* x, std::size_t n, float a, float b, cudaStream_t stream);
/// x[i] += global index of x[i] (offset + i): catches wrong segment offsets.
void add_index(double* x, std::size_t n, std::size_t offset, cudaStream_t stream);
/// x[i] ^= low byte of (offset + i)
void xor_index(std::uint8_t* x, std::size_t n, std::size_t offset, cudaStream_t stream);
/// y[r] = sum over k in [row_ptr[r], row_ptr[r + 1]) of w[k] * x[cols[k]], in entry order, for the
/// rows r in [first, first + count): a sparse matrix-vector product over some rows (device arrays).
void csr_rows(const double* x, const std::int64_t* row_ptr, const std::int32_t* cols, const double* w, std::size_t first,
              std::size_t count, double* y, cudaStream_t stream);
/// As csr_rows, but y[r] += the sum (the second half of a product split by columns).
void csr_rows_add(const double* x, const std::int64_t* row_ptr, const std::int32_t* cols, const double* w,
                  std::size_t first, std::size_t count, double* y, cudaStream_t stream);

}  // namespace cush_test

namespace cush_test {
/// Occupies `stream` for about `ms` milliseconds of wall time (one thread spinning on %globaltimer),
/// launched on the stream's device: no device needs to be current.
void spin(cudaStream_t stream, double ms);
/// As spin, on the current device (which must be the stream's): callable while the stream is being
/// captured into a graph, where CUDA refuses to say a stream's device.
void spin_current(cudaStream_t stream, double ms);
}  // namespace cush_test
