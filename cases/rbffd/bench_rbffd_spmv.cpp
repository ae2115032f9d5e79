// Case "rbffd" in bench_cases: y = A x alone on one GPU (bench_rbffd.cpp names the rows): the ELL
// kernel of the fused stage, the seed's thread-per-row CSR, a warp-per-row CSR, cuSPARSE's CSR
// algorithms and its sliced ELL (SELL, slices of 32 rows, each column-major and padded to its
// longest row with column -1), and a device-to-device copy of the same bytes (388 per row read and written) as the
// roofline, all in one run so their ratios hold.

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "harness.hpp"
#include "nodes.hpp"
#include "rbffd.hpp"
#include "reference.hpp"
#include "stencils.hpp"

namespace {

namespace rb = cases::rbffd;
constexpr std::size_t kSteps = 10;
constexpr std::size_t kStencil = 31;
constexpr double kSpmvBytes = 12.0 * kStencil + 16;

#define CUSPARSE_CHECK(call)                                                                                   \
  do {                                                                                                         \
    const cusparseStatus_t status_ = (call);                                                                   \
    if (status_ != CUSPARSE_STATUS_SUCCESS)                                                                    \
      throw cush::Error(std::string(#call) + " failed: " + cusparseGetErrorString(status_));                   \
  } while (0)

enum class Impl { ell, csr_thread, csr_warp, cusparse_alg1, cusparse_alg2, cusparse_sell, d2d_copy };

const char* name(Impl i) {
  switch (i) {
    case Impl::ell: return "ell";
    case Impl::csr_thread: return "csr_thread";
    case Impl::csr_warp: return "csr_warp";
    case Impl::cusparse_alg1: return "cusparse_csr_alg1";
    case Impl::cusparse_alg2: return "cusparse_csr_alg2";
    case Impl::cusparse_sell: return "cusparse_sell";
    case Impl::d2d_copy: return "d2d_copy";
  }
  return "?";
}

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* d = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&d, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
  CUSH_CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

constexpr std::size_t kSlice = 32;

// CSR -> cuSPARSE's sliced ELL: slice s holds rows [32 s, 32 s + 32), entry k of its row r at
// offsets[s] + k * 32 + r, padded to the slice's longest row with column -1 and value 0.
struct Sell {
  std::vector<std::int32_t> offsets{0}, cols;
  std::vector<double> values;
  Sell(const std::vector<std::int64_t>& row_ptr, const std::vector<std::int32_t>& c, const std::vector<double>& v) {
    const std::size_t rows = row_ptr.size() - 1;
    for (std::size_t first = 0; first < rows; first += kSlice) {
      std::size_t width = 0;
      for (std::size_t r = first; r < std::min(rows, first + kSlice); ++r)
        width = std::max(width, static_cast<std::size_t>(row_ptr[r + 1] - row_ptr[r]));
      const std::size_t at = cols.size();
      cols.resize(at + width * kSlice, -1);
      values.resize(at + width * kSlice, 0.0);
      for (std::size_t r = first; r < std::min(rows, first + kSlice); ++r)
        for (auto e = static_cast<std::size_t>(row_ptr[r]); e < static_cast<std::size_t>(row_ptr[r + 1]); ++e) {
          const std::size_t k = e - static_cast<std::size_t>(row_ptr[r]);
          cols[at + k * kSlice + (r - first)] = c[e];
          values[at + k * kSlice + (r - first)] = v[e];
        }
      offsets.push_back(static_cast<std::int32_t>(cols.size()));
    }
  }
};

// The matrix of 2^lg kNN rows in every format, on device 0.
struct Spmv {
  std::size_t rows = 0;
  cudaStream_t stream = nullptr;
  std::unique_ptr<rb::DeviceEll> ell;
  std::int64_t* row_ptr64 = nullptr;
  std::int32_t* row_ptr32 = nullptr;
  std::int32_t* cols = nullptr;
  double* values = nullptr;
  double* x = nullptr;
  double* y = nullptr;
  char* copy_from = nullptr;
  char* copy_to = nullptr;
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat = nullptr;
  cusparseSpMatDescr_t sell = nullptr;
  std::int32_t* sell_offsets = nullptr;
  std::int32_t* sell_cols = nullptr;
  double* sell_values = nullptr;
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  void* scratch[3] = {nullptr, nullptr, nullptr};  // by algorithm: CSR ALG1, CSR ALG2, SELL ALG1

  explicit Spmv(std::size_t lg) : rows(std::size_t{1} << lg) {
    CUSH_CUDA_CHECK(cudaSetDevice(0));
    const std::vector<rb::Point> nodes = rb::fibonacci_nodes(rows);
    const rb::Stencils st = rb::nearest_neighbours(nodes, kStencil);
    std::vector<double> v(st.cols.size());
    for (std::size_t i = 0; i < rows; ++i)
      for (auto e = static_cast<std::size_t>(st.row_ptr[i]); e < static_cast<std::size_t>(st.row_ptr[i + 1]); ++e)
        v[e] = st.cols[e] == static_cast<std::int64_t>(i) ? -1.0 : 1.0 / (kStencil - 1);
    const std::vector<std::int32_t> c32 = rb::narrow_columns(st.cols);
    const std::vector<std::int32_t> r32 = rb::narrow_columns(st.row_ptr);
    ell = std::make_unique<rb::DeviceEll>(rb::ell_from_csr(st.row_ptr, c32, v), 0);
    row_ptr64 = device_copy(st.row_ptr);
    row_ptr32 = device_copy(r32);
    cols = device_copy(c32);
    values = device_copy(v);
    std::vector<double> xs(rows);
    for (std::size_t i = 0; i < rows; ++i) xs[i] = rb::y73(nodes[i]);
    x = device_copy(xs);
    want.assign(rows, 0.0);
    for (std::size_t i = 0; i < rows; ++i)
      for (auto e = static_cast<std::size_t>(st.row_ptr[i]); e < static_cast<std::size_t>(st.row_ptr[i + 1]); ++e)
        want[i] += v[e] * xs[static_cast<std::size_t>(st.cols[e])];
    CUSH_CUDA_CHECK(cudaMalloc(&y, rows * sizeof(double)));
    const std::size_t bytes = copy_bytes();
    CUSH_CUDA_CHECK(cudaMalloc(&copy_from, bytes));
    CUSH_CUDA_CHECK(cudaMalloc(&copy_to, bytes));
    CUSH_CUDA_CHECK(cudaMemset(copy_from, 1, bytes));
    CUSH_CUDA_CHECK(cudaDeviceSynchronize());
    CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUSPARSE_CHECK(cusparseCreate(&handle));
    CUSPARSE_CHECK(cusparseSetStream(handle, stream));
    const auto nnz = static_cast<std::int64_t>(c32.size());
    const auto n = static_cast<std::int64_t>(rows);
    CUSPARSE_CHECK(cusparseCreateCsr(&mat, n, n, nnz, row_ptr32, cols, values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    const Sell host_sell(st.row_ptr, c32, v);
    sell_offsets = device_copy(host_sell.offsets);
    sell_cols = device_copy(host_sell.cols);
    sell_values = device_copy(host_sell.values);
    CUSPARSE_CHECK(cusparseCreateSlicedEll(&sell, n, n, nnz, static_cast<std::int64_t>(host_sell.values.size()),
                                           static_cast<std::int64_t>(kSlice), sell_offsets, sell_cols, sell_values,
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CUSPARSE_CHECK(cusparseCreateDnVec(&vx, n, x, CUDA_R_64F));
    CUSPARSE_CHECK(cusparseCreateDnVec(&vy, n, y, CUDA_R_64F));
    const cusparseSpMVAlg_t algs[3] = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2, CUSPARSE_SPMV_SELL_ALG1};
    const double one = 1, zero = 0;
    for (int k = 0; k < 3; ++k) {
      std::size_t size = 0;
      CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, k < 2 ? mat : sell, vx, &zero,
                                             vy, CUDA_R_64F, algs[k], &size));
      CUSH_CUDA_CHECK(cudaMalloc(&scratch[k], std::max<std::size_t>(size, 1)));
    }
  }
  ~Spmv() {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(0));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
    if (vx != nullptr) (void)cusparseDestroyDnVec(vx);
    if (vy != nullptr) (void)cusparseDestroyDnVec(vy);
    if (mat != nullptr) (void)cusparseDestroySpMat(mat);
    if (sell != nullptr) (void)cusparseDestroySpMat(sell);
    if (handle != nullptr) (void)cusparseDestroy(handle);
    for (void* p : {static_cast<void*>(row_ptr64), static_cast<void*>(row_ptr32), static_cast<void*>(cols),
                    static_cast<void*>(values), static_cast<void*>(x), static_cast<void*>(y),
                    static_cast<void*>(copy_from), static_cast<void*>(copy_to), static_cast<void*>(sell_offsets),
                    static_cast<void*>(sell_cols), static_cast<void*>(sell_values), scratch[0], scratch[1], scratch[2]})
      CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(p));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
  }
  Spmv(const Spmv&) = delete;
  Spmv& operator=(const Spmv&) = delete;

  std::vector<double> want;  // y = A x by the host, in entry order

  // Half of the product's traffic each way: read and written, a copy moves 2 x these bytes.
  [[nodiscard]] std::size_t copy_bytes() const { return static_cast<std::size_t>(kSpmvBytes / 2 * static_cast<double>(rows)); }

  void run(Impl impl) {
    const double one = 1, zero = 0;
    switch (impl) {
      case Impl::ell: rb::launch_ell_spmv(ell->view(), x, y, stream); break;
      case Impl::csr_thread: rb::launch_csr_thread(row_ptr64, cols, values, rows, x, y, stream); break;
      case Impl::csr_warp: rb::launch_csr_warp(row_ptr64, cols, values, rows, x, y, stream); break;
      case Impl::cusparse_alg1:
      case Impl::cusparse_alg2: {
        const int k = impl == Impl::cusparse_alg1 ? 0 : 1;
        CUSPARSE_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F,
                                    k == 0 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2, scratch[k]));
        break;
      }
      case Impl::cusparse_sell:
        CUSPARSE_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sell, vx, &zero, vy, CUDA_R_64F,
                                    CUSPARSE_SPMV_SELL_ALG1, scratch[2]));
        break;
      case Impl::d2d_copy:
        CUSH_CUDA_CHECK(cudaMemcpyAsync(copy_to, copy_from, copy_bytes(), cudaMemcpyDeviceToDevice, stream));
        break;
    }
  }
};

void spmv(benchmark::State& state, std::size_t lg, Impl impl) {
  Spmv* s = cush_bench::kept<Spmv>("spmv/" + std::to_string(lg), [&] { return std::make_unique<Spmv>(lg); });
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  CUSH_CUDA_CHECK(cudaMemsetAsync(s->y, 0xff, s->rows * sizeof(double), s->stream));  // NaNs
  s->run(impl);  // warm-up, checked against the host's product
  CUSH_CUDA_CHECK(cudaStreamSynchronize(s->stream));
  if (impl != Impl::d2d_copy) {
    std::vector<double> got(s->rows);
    CUSH_CUDA_CHECK(cudaMemcpy(got.data(), s->y, got.size() * sizeof(double), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(std::fabs(got[i] - s->want[i]) <= 1e-12 * (1 + std::fabs(s->want[i])))) {
        state.SkipWithError((std::string(name(impl)) + ": row " + std::to_string(i) + " differs from the host's product").c_str());
        return;
      }
  }
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    for (std::size_t k = 0; k < kSteps; ++k) s->run(impl);
    CUSH_CUDA_CHECK(cudaStreamSynchronize(s->stream));
    const double t = timer.stop();
    state.SetIterationTime(t);
    seconds += t;
  }
  const double rows = static_cast<double>(s->rows) * kSteps * static_cast<double>(state.iterations());
  state.counters["Gns/s"] = rows / seconds / 1e9;
  state.counters["GB/s"] = rows * kSpmvBytes / seconds / 1e9;
}

std::size_t max_log2() {
  const char* v = std::getenv("CUSH_BENCH_RBFFD_MAX_LOG2");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 24;
}

}  // namespace

void register_rbffd_spmv() {
  if (cush_bench::gpus_for_rows() < 1) return;
  for (std::size_t lg : {20U, 22U, 24U}) {
    if (lg > max_log2()) continue;
    for (Impl impl : {Impl::d2d_copy, Impl::ell, Impl::csr_thread, Impl::csr_warp, Impl::cusparse_alg1, Impl::cusparse_alg2,
                      Impl::cusparse_sell})
      cush_bench::add_timed(std::string("spmv/rbffd/") + name(impl) + "/1gpu/" + std::to_string(lg),
                            [lg, impl](benchmark::State& s) { spmv(s, lg, impl); }, true);
  }
}
