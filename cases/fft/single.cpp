// Case "fft", single-GPU reference: one cuFFT plan of N points on gpus.cuda[0]
// (cufftMakePlanMany64, so that N >= 2^31 works), out of place; the result becomes the data the
// next transform reads.

#include <cuda_runtime.h>
#include <cufft.h>

#include <stdexcept>
#include <utility>

#include "cush/error.hpp"
#include "fft.hpp"
#include "kernels.hpp"

namespace cases {
namespace fft {

Single::Single(std::size_t n, const Devices& gpus, Options options) {
  if (gpus.cuda.empty()) throw std::invalid_argument("cases::fft::Single: no GPU given (gpus.cuda is empty)");
  shape_ = fft::shape(n, 1, options.n1);
  device_ = gpus.cuda[0];
  try {
    CUSH_CUDA_CHECK(cudaSetDevice(device_));
    CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&kernel_done_, cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaMalloc(&x_, n * sizeof(Complex)));
    CUSH_CUDA_CHECK(cudaMalloc(&y_, n * sizeof(Complex)));
    cufftHandle h = 0;
    CASES_FFT_CHECK(cufftCreate(&h));
    plan_ = h;
    planned_ = true;
    long long len = static_cast<long long>(n);
    std::size_t work = 0;
    CASES_FFT_CHECK(cufftMakePlanMany64(h, 1, &len, nullptr, 1, len, nullptr, 1, len, CUFFT_C2C, 1, &work));
    CASES_FFT_CHECK(cufftSetStream(h, stream_));
  } catch (...) {
    release();
    throw;
  }
}

Single::~Single() { release(); }

// Frees what the constructor got so far; never throws (CUSH_CUDA_CHECK_NOEXCEPT).
void Single::release() {
  if (device_ < 0) return;
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  if (stream_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  if (planned_) cufftDestroy(plan_);
  if (x_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(x_));
  if (y_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(y_));
  if (kernel_done_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(kernel_done_));
  if (stream_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
  device_ = -1;
}

void Single::load(const Complex* host) {
  CUSH_CUDA_CHECK(cudaMemcpyAsync(x_, host, shape_.n * sizeof(Complex), cudaMemcpyHostToDevice, stream_));
}

void Single::store(Complex* host) {
  CUSH_CUDA_CHECK(cudaMemcpyAsync(host, x_, shape_.n * sizeof(Complex), cudaMemcpyDeviceToHost, stream_));
}

void Single::run(Order in, Order out, int direction) {
  if (in != Order::natural || out != Order::natural)
    throw std::invalid_argument("cases::fft::Single: one cuFFT call has natural orders only");
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CASES_FFT_CHECK(cufftExecC2C(plan_, x_, y_, direction));
  std::swap(x_, y_);
}

void Single::forward(Order in, Order out) { run(in, out, CUFFT_FORWARD); }
void Single::inverse(Order in, Order out) { run(in, out, CUFFT_INVERSE); }

void Single::convolve(const Single& kernel, Order signal) {
  if (&kernel == this) throw std::invalid_argument("cases::fft::Single::convolve: the kernel must be another transform");
  if (kernel.shape_.n != shape_.n || kernel.device_ != device_)
    throw std::invalid_argument("cases::fft::Single::convolve: the kernel is a transform of another size or GPU");
  if (signal != Order::natural)
    throw std::invalid_argument("cases::fft::Single::convolve: one cuFFT call has natural orders only");
  forward();
  CUSH_CUDA_CHECK(cudaEventRecord(kernel_done_, kernel.stream_));
  CUSH_CUDA_CHECK(cudaStreamWaitEvent(stream_, kernel_done_, 0));
  launch_multiply(x_, kernel.x_, shape_.n, 1.0f / static_cast<float>(shape_.n), stream_);
  inverse();
}

void Single::wait() { CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace fft
}  // namespace cases
