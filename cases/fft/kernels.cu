// Case "fft": the raw variant's transpose kernel and the batched row FFTs (kernels.hpp).
//
// The transpose moves 32 x 32 tiles through shared memory: a warp reads 32 consecutive elements
// of a row (256 bytes) and writes 32 consecutive elements of a column of the result, so both
// sides are whole 256-byte lines; the twiddle is computed on the way in (twiddle.cuh), which
// costs no memory traffic.

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "twiddle.cuh"

namespace cases {
namespace fft {

void check_cufft(int result, const char* what) {
  if (result == CUFFT_SUCCESS) return;
  throw cush::Error(std::string("cases::fft: ") + what + " failed: cuFFT error " + std::to_string(result));
}

namespace {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_kernel(const Complex* __restrict__ src, std::size_t rows, std::size_t cols, std::size_t row0,
                     std::size_t col0, std::size_t ncols, Complex* __restrict__ dst, std::size_t pitch, Twiddle tw) {
  __shared__ Complex tile[kTile][kTile + 1];
  const std::size_t c0 = col0 + static_cast<std::size_t>(blockIdx.x) * kTile;
  const std::size_t c_end = col0 + ncols;
  for (std::size_t r0 = static_cast<std::size_t>(blockIdx.y) * kTile; r0 < rows;
       r0 += static_cast<std::size_t>(gridDim.y) * kTile) {
    const std::size_t c = c0 + threadIdx.x;
    for (int k = static_cast<int>(threadIdx.y); k < kTile; k += kBlockRows) {
      const std::size_t r = r0 + static_cast<std::size_t>(k);
      if (r < rows && c < c_end) tile[k][threadIdx.x] = tw(src[r * cols + c], row0 + r, c);
    }
    __syncthreads();
    const std::size_t r = r0 + threadIdx.x;
    for (int k = static_cast<int>(threadIdx.y); k < kTile; k += kBlockRows) {
      const std::size_t cc = c0 + static_cast<std::size_t>(k);
      if (r < rows && cc < c_end) dst[(cc - col0) * pitch + r] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

}  // namespace

void launch_transpose(const Complex* src, std::size_t rows, std::size_t cols, std::size_t row0, std::size_t col0,
                      std::size_t ncols, Complex* dst, std::size_t dst_pitch, std::size_t n, int sign,
                      cudaStream_t stream) {
  if (rows == 0 || ncols == 0) return;
  const std::size_t row_tiles = (rows + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>((ncols + kTile - 1) / kTile),
                  static_cast<unsigned>(std::min<std::size_t>(row_tiles, 65535)));
  transpose_kernel<<<grid, dim3(kTile, kBlockRows), 0, stream>>>(src, rows, cols, row0, col0, ncols, dst, dst_pitch,
                                                                 Twiddle{n, sign});
  CUSH_CUDA_CHECK(cudaGetLastError());
}

namespace {
__global__ void multiply_kernel(Complex* __restrict__ x, const Complex* __restrict__ k, std::size_t n, float scale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const Complex a = x[i], b = k[i];
    x[i] = Complex{scale * (a.x * b.x - a.y * b.y), scale * (a.x * b.y + a.y * b.x)};
  }
}

__global__ void twiddle_kernel(Twiddle tw, const std::size_t* r, const std::size_t* c, std::size_t count, Complex* out) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < count) out[k] = tw(Complex{1.0f, 0.0f}, r[k], c[k]);
}
}  // namespace

void launch_multiply(Complex* x, const Complex* k, std::size_t n, float scale, cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 65536);
  multiply_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, k, n, scale);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

std::vector<Complex> twiddles(std::size_t n, int sign, const std::vector<std::size_t>& r, const std::vector<std::size_t>& c) {
  const std::size_t count = std::min(r.size(), c.size());
  std::vector<Complex> out(count);
  if (count == 0) return out;
  std::size_t *dr = nullptr, *dc = nullptr;
  Complex* dout = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&dr, count * sizeof(std::size_t)));
  CUSH_CUDA_CHECK(cudaMalloc(&dc, count * sizeof(std::size_t)));
  CUSH_CUDA_CHECK(cudaMalloc(&dout, count * sizeof(Complex)));
  CUSH_CUDA_CHECK(cudaMemcpy(dr, r.data(), count * sizeof(std::size_t), cudaMemcpyHostToDevice));
  CUSH_CUDA_CHECK(cudaMemcpy(dc, c.data(), count * sizeof(std::size_t), cudaMemcpyHostToDevice));
  twiddle_kernel<<<static_cast<unsigned>((count + 255) / 256), 256>>>(Twiddle{n, sign}, dr, dc, count, dout);
  CUSH_CUDA_CHECK(cudaGetLastError());
  CUSH_CUDA_CHECK(cudaMemcpy(out.data(), dout, count * sizeof(Complex), cudaMemcpyDeviceToHost));
  CUSH_CUDA_CHECK(cudaFree(dr));
  CUSH_CUDA_CHECK(cudaFree(dc));
  CUSH_CUDA_CHECK(cudaFree(dout));
  return out;
}

namespace {
/// A batched plan of `rows` transforms of `length`, without a work area; its work size. The device
/// is synchronized after the plan is made, in case cuFFT's making of it left copies or kernels on
/// the legacy default stream, which the non-blocking streams the plans run on do not wait for (a
/// suspected cause, not a proven one, of the illegal addresses in README.md's "Known problem": a
/// chunk's plan is made in the middle of a transform, beside the other GPUs' work).
std::size_t make_plan(int& handle, bool& made, std::size_t length, std::size_t rows) {
  cufftHandle h = 0;
  CASES_FFT_CHECK(cufftCreate(&h));
  handle = h;
  made = true;
  CASES_FFT_CHECK(cufftSetAutoAllocation(h, 0));
  long long len = static_cast<long long>(length);
  std::size_t size = 0;
  CASES_FFT_CHECK(cufftMakePlanMany64(h, 1, &len, nullptr, 1, len, nullptr, 1, len, CUFFT_C2C,
                                      static_cast<long long>(rows), &size));
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  return size;
}
}  // namespace

RowFfts::RowFfts(int device, cudaStream_t stream, const Shape& s, int gpus) : device_(device), stream_(stream) {
  const auto k = static_cast<std::size_t>(gpus);
  try {
    CUSH_CUDA_CHECK(cudaSetDevice(device));
    for (const auto [length, rows] : {std::pair{s.n1, s.n2 / k}, std::pair{s.n2, s.n1 / k}}) {
      Batch& b = plans_.emplace_back();
      b.length = length;
      b.rows = rows;
      work_bytes_ = std::max(work_bytes_, make_plan(b.handle, b.made, length, rows));
    }
    if (work_bytes_ > 0) CUSH_CUDA_CHECK(cudaMalloc(&work_, work_bytes_));
    for (Batch& b : plans_) CASES_FFT_CHECK(cufftSetWorkArea(b.handle, work_));
  } catch (...) {
    release();
    throw;
  }
}

RowFfts::RowFfts(RowFfts&& o) noexcept
    : device_(o.device_), stream_(o.stream_), plans_(std::move(o.plans_)), work_(o.work_), work_bytes_(o.work_bytes_) {
  o.plans_.clear();
  o.work_ = nullptr;
}

RowFfts::~RowFfts() { release(); }

void RowFfts::release() noexcept {
  if (plans_.empty() && work_ == nullptr) return;
  int previous = 0;
  CUSH_CUDA_CHECK_NOEXCEPT(cudaGetDevice(&previous));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  for (Batch& b : plans_) {
    if (b.made) cufftDestroy(b.handle);  // waits for nothing: the owner synchronised its streams
    if (b.own != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(b.own));
  }
  plans_.clear();
  if (work_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(work_));
  work_ = nullptr;
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous));
}

RowFfts::Batch& RowFfts::batch(std::size_t length, std::size_t rows) {
  bool known = false;
  for (std::size_t i = 0; i < 2 && i < plans_.size(); ++i) known = known || (plans_[i].length == length && rows <= plans_[i].rows);
  if (!known)
    throw std::invalid_argument("cases::fft::RowFfts: no plan for " + std::to_string(rows) + " rows of " +
                                std::to_string(length));
  for (Batch& b : plans_)
    if (b.length == length && b.rows == rows) return b;
  // A chunk's plan (the device is current: run's caller made it so).
  plans_.reserve(plans_.size() + 1);  // the emplace below cannot throw
  Batch chunk;
  chunk.length = length;
  chunk.rows = rows;
  try {
    const std::size_t size = make_plan(chunk.handle, chunk.made, length, rows);
    if (size > work_bytes_) CUSH_CUDA_CHECK(cudaMalloc(&chunk.own, size));
    CASES_FFT_CHECK(cufftSetWorkArea(chunk.handle, chunk.own != nullptr ? chunk.own : work_));
  } catch (...) {
    if (chunk.made) cufftDestroy(chunk.handle);
    if (chunk.own != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(chunk.own));
    throw;
  }
  return plans_.emplace_back(chunk);
}

void RowFfts::run(Complex* data, std::size_t rows, std::size_t length, Direction d, cudaStream_t stream) {
  Batch& b = batch(length, rows);
  CASES_FFT_CHECK(cufftSetStream(b.handle, stream != nullptr ? stream : stream_));
  CASES_FFT_CHECK(cufftExecC2C(b.handle, data, data, d == Direction::forward ? CUFFT_FORWARD : CUFFT_INVERSE));
}

}  // namespace fft
}  // namespace cases
