#include "kernels.hpp"

#include <stdexcept>
#include <string>

#include "cush/error.hpp"

namespace cases {
namespace rbffd {

namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

__device__ double ell_row(const EllView& a, std::size_t r, const double* __restrict__ x) {
  double sum = 0;
  for (std::size_t k = 0; k < a.width; ++k) {
    const std::size_t at = k * a.rows + r;
    sum += a.values[at] * x[a.cols[at]];
  }
  return sum;
}

// Row r's update from its product y. b: the stage's weight in the accumulator; alpha: in the next
// input (unused by stage 3). Passed as arguments, not read from an array indexed by `stage`
// (which would live in local memory).
__device__ void update(std::size_t r, double y, double* __restrict__ next, double* __restrict__ u,
                       double* __restrict__ acc, int stage, double dt, double b, double alpha) {
  const double k = dt * y;
  const double sum = stage == 0 ? b * k : acc[r] + b * k;
  if (stage < 3) {
    acc[r] = sum;
    next[r] = u[r] + alpha * k;
  } else {
    const double v = u[r] + sum;
    u[r] = v;
    next[r] = v;
  }
}

__global__ void stage_kernel(EllView a, std::size_t first, std::size_t count, const double* __restrict__ x,
                             double* __restrict__ next, double* __restrict__ u, double* __restrict__ acc, int stage,
                             double dt, double b, double alpha) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) update(first + i, ell_row(a, first + i, x), next, u, acc, stage, dt, b, alpha);
}

__global__ void partial_kernel(EllView own, const double* __restrict__ x, double* __restrict__ partial) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < own.rows) partial[i] = ell_row(own, i, x);
}

__global__ void finish_stage_kernel(EllView ghosts, std::size_t first, const double* __restrict__ x,
                                    const double* __restrict__ partial, double* __restrict__ next, double* __restrict__ u,
                                    double* __restrict__ acc, int stage, double dt, double b, double alpha) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < ghosts.rows) update(first + i, partial[i] + ell_row(ghosts, i, x), next, u, acc, stage, dt, b, alpha);
}

__global__ void gather_kernel(const double* __restrict__ x, const std::int32_t* __restrict__ index, std::size_t count,
                              double* __restrict__ out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = x[index[i]];
}

__global__ void ell_spmv_kernel(EllView a, const double* __restrict__ x, double* __restrict__ y) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r < a.rows) y[r] = ell_row(a, r, x);
}

__global__ void csr_thread_kernel(const std::int64_t* __restrict__ row_ptr, const std::int32_t* __restrict__ cols,
                                  const double* __restrict__ values, std::size_t rows, const double* __restrict__ x,
                                  double* __restrict__ y) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  double sum = 0;
  for (std::int64_t e = row_ptr[r]; e < row_ptr[r + 1]; ++e) sum += values[e] * x[cols[e]];
  y[r] = sum;
}

__global__ void csr_warp_kernel(const std::int64_t* __restrict__ row_ptr, const std::int32_t* __restrict__ cols,
                                const double* __restrict__ values, std::size_t rows, const double* __restrict__ x,
                                double* __restrict__ y) {
  const std::size_t r = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (r >= rows) return;  // a whole warp leaves together
  double sum = 0;
  for (std::int64_t e = row_ptr[r] + lane; e < row_ptr[r + 1]; e += 32) sum += values[e] * x[cols[e]];
  for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffU, sum, d);
  if (lane == 0) y[r] = sum;
}

}  // namespace

constexpr double kB[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
constexpr double kAlpha[4] = {0.5, 0.5, 1.0, 0.0};

void check_stage(int stage, const char* who) {
  if (stage < 0 || stage > 3) throw std::invalid_argument(std::string("cases::rbffd::") + who + ": stage " + std::to_string(stage));
}

void launch_stage(const EllView& a, std::size_t first, std::size_t count, const double* x, double* next, double* u,
                  double* acc, int stage, double dt, cudaStream_t stream) {
  check_stage(stage, "launch_stage");
  if (count == 0) return;
  stage_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, first, count, x, next, u, acc, stage, dt, kB[stage],
                                                           kAlpha[stage]);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_partial(const EllView& own, const double* x, double* partial, cudaStream_t stream) {
  if (own.rows == 0) return;
  partial_kernel<<<blocks_for(own.rows), kThreads, 0, stream>>>(own, x, partial);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_finish_stage(const EllView& ghosts, std::size_t first, const double* x, const double* partial, double* next,
                         double* u, double* acc, int stage, double dt, cudaStream_t stream) {
  check_stage(stage, "launch_finish_stage");
  if (ghosts.rows == 0) return;
  finish_stage_kernel<<<blocks_for(ghosts.rows), kThreads, 0, stream>>>(ghosts, first, x, partial, next, u, acc, stage, dt,
                                                                        kB[stage], kAlpha[stage]);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_gather(const double* x, const std::int32_t* index, std::size_t count, double* out, cudaStream_t stream) {
  if (count == 0) return;
  gather_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, index, count, out);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_ell_spmv(const EllView& a, const double* x, double* y, cudaStream_t stream) {
  if (a.rows == 0) return;
  ell_spmv_kernel<<<blocks_for(a.rows), kThreads, 0, stream>>>(a, x, y);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_csr_thread(const std::int64_t* row_ptr, const std::int32_t* cols, const double* values, std::size_t rows,
                       const double* x, double* y, cudaStream_t stream) {
  if (rows == 0) return;
  csr_thread_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(row_ptr, cols, values, rows, x, y);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_csr_warp(const std::int64_t* row_ptr, const std::int32_t* cols, const double* values, std::size_t rows,
                     const double* x, double* y, cudaStream_t stream) {
  if (rows == 0) return;
  csr_warp_kernel<<<blocks_for(rows * 32), kThreads, 0, stream>>>(row_ptr, cols, values, rows, x, y);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace rbffd
}  // namespace cases
