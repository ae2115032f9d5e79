// Case "matmul": cuBLASXt, the multi-GPU library a user would pick instead of writing a variant.
// It is compared in the benchmarks, not in the complexity report.

#include <cublasXt.h>

#include <vector>

#include "cush/error.hpp"
#include "matmul.hpp"

namespace cases {
namespace matmul {

namespace {
cublasXtHandle_t xt(void* h) { return static_cast<cublasXtHandle_t>(h); }

cublasStatus_t xt_gemm(cublasXtHandle_t h, std::size_t m, std::size_t n, std::size_t k, const float* alpha,
                       const float* a, std::size_t lda, const float* b, std::size_t ldb, const float* beta, float* c,
                       std::size_t ldc) {
  return cublasXtSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t xt_gemm(cublasXtHandle_t h, std::size_t m, std::size_t n, std::size_t k, const double* alpha,
                       const double* a, std::size_t lda, const double* b, std::size_t ldb, const double* beta,
                       double* c, std::size_t ldc) {
  return cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
}  // namespace

template <class T>
Xt<T>::Xt(const Devices& gpus, int block_dim) {
  std::vector<int> ids = gpus.cuda;
  if (block_dim < 1) throw cush::InvalidArgument("cases::matmul::Xt", "block_dim", "must be positive");
  cublasXtHandle_t h = nullptr;
  check_cublas(cublasXtCreate(&h), "cublasXtCreate");
  handle_ = h;
  try {
    check_cublas(cublasXtDeviceSelect(h, static_cast<int>(ids.size()), ids.data()), "cublasXtDeviceSelect");
    check_cublas(cublasXtSetBlockDim(h, block_dim), "cublasXtSetBlockDim");
  } catch (...) {
    cublasXtDestroy(h);
    throw;
  }
}

template <class T>
Xt<T>::~Xt() {
  cublasXtDestroy(xt(handle_));
}

template <class T>
void Xt<T>::multiply(const T* a, const T* b, T* c, Dims d) {
  check_dims(d, "cases::matmul::Xt::multiply");
  const T one = 1;
  const T zero = 0;
  // Row-major C = A B is the column-major C^T = B^T A^T, as in gemm_rows.
  check_cublas(xt_gemm(xt(handle_), d.p, d.m, d.n, &one, b, d.p, a, d.n, &zero, c, d.p), "cublasXt gemm");
}

template class Xt<float>;
template class Xt<double>;

}  // namespace matmul
}  // namespace cases
