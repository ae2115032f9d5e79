#pragma once
// Case "fft": what the variants share on the GPU (kernels.cu): the raw variant's transpose kernel
// (the cush variant's is cush::transpose with the same Twiddle, twiddle.cuh), the batched row FFTs
// every multi-GPU variant runs on its part, and cuFFT's error checks.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "cush/error.hpp"
#include "fft.hpp"

namespace cases {
namespace fft {

/// Throws cush::Error naming `what` and the cuFFT error unless `result` is CUFFT_SUCCESS.
void check_cufft(int result, const char* what);
/// Checks a cuFFT call; a fault point (cush/error.hpp) like cush's own checked calls, where an
/// injected failure is CUFFT_ALLOC_FAILED (2).
#define CASES_FFT_CHECK(call) \
  ::cases::fft::check_cufft(CUSH_FAULT_POINT(#call) ? 2 : static_cast<int>(call), #call)

/// Columns [col0, col0 + ncols) of the rows x cols matrix `src` (rows row0, row0 + 1, ... of the
/// global matrix), transposed into `dst`: element (r, c) to dst[(c - col0) * dst_pitch + r],
/// multiplied by the twiddle exp(sign 2 pi i (row0 + r) c / N) unless sign is 0. `dst` may be
/// another GPU's memory (peer access enabled). Asynchronous on `stream`, on the current device.
void launch_transpose(const Complex* src, std::size_t rows, std::size_t cols, std::size_t row0, std::size_t col0,
                      std::size_t ncols, Complex* dst, std::size_t dst_pitch, std::size_t n, int sign,
                      cudaStream_t stream);

/// x[i] = scale x[i] k[i] (complex) for i < n: a convolution's pointwise product of two spectra in
/// the same order. Asynchronous on `stream`, on the current device.
void launch_multiply(Complex* x, const Complex* k, std::size_t n, float scale, cudaStream_t stream);

/// The twiddles exp(sign 2 pi i r[k] c[k] / n) as the transposes compute them (twiddle.cuh), on
/// the current device (for the tests).
std::vector<Complex> twiddles(std::size_t n, int sign, const std::vector<std::size_t>& r, const std::vector<std::size_t>& c);

/// One GPU's batched cuFFT plans for the row FFTs of a shape over `gpus` GPUs: N2 / K rows of
/// length N1 and N1 / K rows of length N2, in place, contiguous, on `stream`, sharing one work
/// area; plans for fewer rows (a pipelined transpose's chunks) are made at their first use.
/// Made with `device` current; must be destroyed with any device current. Its runs must not
/// overlap on the GPU (keep them on one stream at a time): every plan uses the same work area.
class RowFfts {
 public:
  RowFfts(int device, cudaStream_t stream, const Shape& s, int gpus);
  ~RowFfts();
  RowFfts(RowFfts&& other) noexcept;
  RowFfts(const RowFfts&) = delete;
  RowFfts& operator=(const RowFfts&) = delete;
  RowFfts& operator=(RowFfts&&) = delete;
  /// `rows` row FFTs of length `length` (one of the two the plans were made for; at most the
  /// plan's rows) on `data`, on `stream` (nullptr: the constructor's), `device` current.
  void run(Complex* data, std::size_t rows, std::size_t length, Direction d, cudaStream_t stream = nullptr);
  /// Bytes of the work area.
  [[nodiscard]] std::size_t work_bytes() const { return work_bytes_; }

 private:
  struct Batch {
    std::size_t length = 0, rows = 0;
    int handle = 0;       // cufftHandle
    bool made = false;    // handle is a plan to destroy
    void* own = nullptr;  // its own work area, where the shared one is too small
  };
  Batch& batch(std::size_t length, std::size_t rows);
  void release() noexcept;
  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  std::vector<Batch> plans_;  // the two whole plans first
  void* work_ = nullptr;
  std::size_t work_bytes_ = 0;
};

}  // namespace fft
}  // namespace cases
