// Case "matmul": what all variants share (left out of the complexity count): cuBLAS handles, the
// row-block product, checks.

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <string>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "matmul.hpp"

namespace cases {
namespace matmul {

Dims seed_dims(std::size_t k) { return Dims{400 * k, 800 * k, 400 * k}; }

double flops(Dims d) { return 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.p); }

// A fault point (cush/error.hpp) like cush's own checked calls.
#define CASES_CUBLAS_CHECK(call) \
  check_cublas(CUSH_FAULT_POINT(#call) ? CUBLAS_STATUS_ALLOC_FAILED : (call), #call)

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw cush::Error(std::string("cases::matmul: ") + what + " failed: " + cublasGetStatusName(status) + " (" +
                      cublasGetStatusString(status) + ")");
}

Dims check_dims(Dims d, const char* where) {
  for (std::size_t v : {d.m, d.n, d.p}) {
    if (v == 0) throw cush::InvalidArgument(where, "dims", "a matrix dimension is 0");
    if (v > static_cast<std::size_t>(INT_MAX))
      throw cush::InvalidArgument(where, "dims", std::to_string(v) + " exceeds cuBLAS's int dimensions");
  }
  return d;
}

std::size_t block_count(Dims d, int gpus, std::size_t element_size) {
  constexpr std::size_t min_block_bytes = std::size_t{16} << 20;
  constexpr std::size_t max_blocks = 8;
  const std::size_t rows_per_gpu = d.m / static_cast<std::size_t>(gpus);
  const std::size_t blocks = rows_per_gpu * d.n * element_size / min_block_bytes;
  return std::max<std::size_t>(1, std::min({max_blocks, blocks, rows_per_gpu}));
}

namespace {
std::mutex handles_mutex;
using Key = std::pair<int, std::size_t>;  // CUDA device, lane
std::map<Key, cublasHandle_t>& handles() {
  static std::map<Key, cublasHandle_t> h;
  return h;
}

// Runs f() with CUDA device `device` current (raw CUDA ids: this file serves every variant).
template <class F>
void on_device(int device, F f) {
  int previous = 0;
  CUSH_CUDA_CHECK(cudaGetDevice(&previous));
  CUSH_CUDA_CHECK(cudaSetDevice(device));
  try {
    f();
  } catch (...) {
    (void)cudaSetDevice(previous);
    throw;
  }
  CUSH_CUDA_CHECK(cudaSetDevice(previous));
}
}  // namespace

cublasHandle_t blas_handle(int device, std::size_t lane) {
  const std::lock_guard<std::mutex> lock(handles_mutex);
  auto it = handles().find({device, lane});
  if (it != handles().end()) return it->second;
  cublasHandle_t h = nullptr;
  on_device(device, [&] { CASES_CUBLAS_CHECK(cublasCreate(&h)); });
  handles().emplace(Key{device, lane}, h);
  return h;
}

void release_blas_handles() {
  const std::lock_guard<std::mutex> lock(handles_mutex);
  for (auto& [key, h] : handles()) on_device(key.first, [h = h] { cublasDestroy(h); });  // best effort at exit
  handles().clear();
}

namespace {
cublasStatus_t gemm(cublasHandle_t h, int m, int n, int k, const float* alpha, const float* a, int lda, const float* b,
                    int ldb, const float* beta, float* c, int ldc) {
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm(cublasHandle_t h, int m, int n, int k, const double* alpha, const double* a, int lda,
                    const double* b, int ldb, const double* beta, double* c, int ldc) {
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
}  // namespace

template <class T>
void gemm_rows(cudaStream_t stream, std::size_t lane, std::size_t rows, Dims d, const T* a_rows, const T* b,
               T* c_rows) {
  if (rows == 0) return;
  int device = 0;
  CUSH_CUDA_CHECK(cudaGetDevice(&device));
  const cublasHandle_t h = blas_handle(device, lane);
  CASES_CUBLAS_CHECK(cublasSetStream(h, stream));
  // cuBLAS is column-major: a row-major X is X^T to it, so C = A B is computed as C^T = B^T A^T.
  const T one = 1;
  const T zero = 0;
  const int p = static_cast<int>(d.p);
  const int n = static_cast<int>(d.n);
  CASES_CUBLAS_CHECK(gemm(h, p, static_cast<int>(rows), n, &one, b, p, a_rows, n, &zero, c_rows, p));
}

template void gemm_rows<float>(cudaStream_t, std::size_t, std::size_t, Dims, const float*, const float*, float*);
template void gemm_rows<double>(cudaStream_t, std::size_t, std::size_t, Dims, const double*, const double*, double*);

}  // namespace matmul
}  // namespace cases
