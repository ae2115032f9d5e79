// Case "fft" in bench_cases: the pieces of the cush variant's transform on one GPU, for the
// README's breakdown (part/fft/... rows, bench_fft.cpp): the two batched cuFFT stages and
// cush::transpose of N points without and with the twiddle. With `length` (a power of two), the
// shape is N = length x (N / length) instead of the balanced one, so that the rows_n1 piece times
// row FFTs of that length. GB/s counts N points read and written once (16 bytes per point).
// Two more pieces time the layouts that would let copy engines do the transposes' moving (the
// reorder taken into cuFFT's loads and stores instead of a transpose kernel): cols_n1, N2 FFTs of
// length N1 down the columns of the N1 x N2 matrix in place (stride N2, batches 1 apart), and
// rows_n2_out_t, N1 FFTs of length N2 along its rows written transposed into a second buffer.

#include <cuda_runtime.h>
#include <cufft.h>

#include "cush/cush.hpp"
#include "cush/error.hpp"
#include "cush/transpose.cuh"
#include "fft.hpp"
#include "harness.hpp"
#include "kernels.hpp"
#include "twiddle.cuh"

namespace fft = cases::fft;

void fft_pieces(benchmark::State& state, std::size_t n, int piece, std::size_t length) {
  std::size_t free = 0, total = 0;
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  CUSH_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (3 * n * sizeof(fft::Complex) + (std::size_t{1} << 30) > free) {
    state.SkipWithError("skipped: the buffers do not fit the GPU's free memory");
    return;
  }
  const fft::Shape s = fft::shape(n, 1, length);
  cush::Plan<fft::Complex> a(cush::DeviceSet({0}), n);
  auto b = cush::Plan<fft::Complex>::alike(a, n);
  const cush::Segment<fft::Complex> seg = a.segment(0);
  fft::RowFfts ffts(cush::physical_device(0), seg.stream(), s, 1);
  CUSH_CUDA_CHECK(cudaMemsetAsync(seg.data(), 0, n * sizeof(fft::Complex), seg.stream()));
  // The strided layouts (pieces 4 and 5): one cuFFT plan each, made here.
  struct Owned {  // destroyed on every way out
    cufftHandle h = 0;
    bool made = false;
    ~Owned() {
      if (made) cufftDestroy(h);
    }
  } plan;
  cufftHandle& strided = plan.h;
  if (piece >= 4) {
    CASES_FFT_CHECK(cufftCreate(&strided));
    plan.made = true;
    long long len = static_cast<long long>(piece == 4 ? s.n1 : s.n2), embed = len;
    const long long n1 = static_cast<long long>(s.n1), n2 = static_cast<long long>(s.n2);
    std::size_t work = 0;
    if (piece == 4)
      CASES_FFT_CHECK(cufftMakePlanMany64(strided, 1, &len, &embed, n2, 1, &embed, n2, 1, CUFFT_C2C, n2, &work));
    else
      CASES_FFT_CHECK(cufftMakePlanMany64(strided, 1, &len, &embed, 1, n2, &embed, n1, 1, CUFFT_C2C, n1, &work));
    CASES_FFT_CHECK(cufftSetStream(strided, seg.stream()));
  }
  fft::Complex* other = b.segment(0).data();
  const auto once = [&] {
    switch (piece) {
      case 0: ffts.run(seg.data(), s.n2, s.n1, fft::Direction::forward); break;
      case 1: ffts.run(seg.data(), s.n1, s.n2, fft::Direction::forward); break;
      case 4: CASES_FFT_CHECK(cufftExecC2C(strided, seg.data(), seg.data(), CUFFT_FORWARD)); break;
      case 5: CASES_FFT_CHECK(cufftExecC2C(strided, seg.data(), other, CUFFT_FORWARD)); break;
      default: cush::transpose(a, b, s.n1, s.n2, fft::Twiddle{n, piece == 3 ? -1 : 0});
    }
  };
  once();  // warm-up
  a.wait();
  constexpr int kRepeats = 10;
  cush_bench::WallTimer timer;
  cush_bench::Throughput rate;
  for (auto _ : state) {
    timer.start();
    for (int r = 0; r < kRepeats; ++r) once();
    a.wait();
    const double t = timer.stop();
    state.SetIterationTime(t / kRepeats);
    rate.add(t, kRepeats * 2.0 * static_cast<double>(n * sizeof(fft::Complex)));
  }
  rate.report(state);
}
