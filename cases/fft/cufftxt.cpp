// Case "fft", cufftXt: what a user would pick instead of writing the four steps, driven as
// ../shared/specs/fft.md (§1) found it must be. One multi-GPU plan over gpus.cuda (2, 4, 8 or 16
// GPUs; one GPU may be listed twice), the data in a descriptor that cufftXtMalloc spread over
// them. Every exec leaves its result permuted and relabels the descriptor INPLACE_SHUFFLED, after
// which cuFFT refuses to run it again (CUFFT_INVALID_TYPE); so each transform here is the exec
// plus a device-to-device cufftXtMemcpy into a second, natural-order descriptor, which then holds
// the data: the reorder is part of every transform's time, as natural-order output must be.

#include <cuda_runtime.h>
#include <cufftXt.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cush/error.hpp"
#include "fft.hpp"
#include "kernels.hpp"

namespace cases {
namespace fft {

struct Xt::State {
  std::vector<int> ids;
  cufftHandle plan = 0;
  bool planned = false;
  cudaLibXtDesc* data = nullptr;     // the signal, natural order
  cudaLibXtDesc* spare = nullptr;    // the next reorder's target
  cudaStream_t stream = nullptr;     // on ids[0]: the plan's stream

  ~State() {
    int previous = 0;
    CUSH_CUDA_CHECK_NOEXCEPT(cudaGetDevice(&previous));
    for (int id : ids) {
      CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(id));
      CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
    }
    if (data != nullptr) cufftXtFree(data);
    if (spare != nullptr) cufftXtFree(spare);
    if (planned) cufftDestroy(plan);
    if (stream != nullptr) {
      CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(ids[0]));
      CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
    }
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous));  // multi-GPU calls leave the last GPU current
  }
};

namespace {

void check_xt(std::size_t n, std::size_t gpus) {
  const std::string where = "cases::fft::Xt: N = " + std::to_string(n) + " on " + std::to_string(gpus) + " GPUs: ";
  if (gpus != 2 && gpus != 4 && gpus != 8 && gpus != 16)
    throw std::invalid_argument(where + "cufftXt takes 2, 4, 8 or 16 GPUs");
  const std::size_t least = gpus <= 4 ? 64 : (gpus == 8 ? 128 : 1024);
  if (n < least) throw std::invalid_argument(where + "cufftXt needs N >= " + std::to_string(least));
}

// Runs `f` and restores the current device, which multi-GPU cuFFT calls change.
template <class F>
void keeping_device(F f) {
  int previous = 0;
  CUSH_CUDA_CHECK(cudaGetDevice(&previous));
  f();
  CUSH_CUDA_CHECK(cudaSetDevice(previous));
}

}  // namespace

Xt::Xt(std::size_t n, const Devices& gpus, Options options) : s_(std::make_unique<State>()) {
  shape_ = fft::shape(n, 1, options.n1);  // cufftXt chooses its own factors; n1 is only checked
  check_xt(n, gpus.cuda.size());
  s_->ids = gpus.cuda;
  keeping_device([&] {
    CUSH_CUDA_CHECK(cudaSetDevice(s_->ids[0]));
    CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&s_->stream, cudaStreamNonBlocking));
    CASES_FFT_CHECK(cufftCreate(&s_->plan));
    s_->planned = true;
    CASES_FFT_CHECK(cufftSetStream(s_->plan, s_->stream));
    CASES_FFT_CHECK(cufftXtSetGPUs(s_->plan, static_cast<int>(s_->ids.size()), s_->ids.data()));
    std::vector<std::size_t> work(s_->ids.size(), 0);  // one entry per GPU
    long long len = static_cast<long long>(n);
    CASES_FFT_CHECK(cufftMakePlanMany64(s_->plan, 1, &len, nullptr, 1, len, nullptr, 1, len, CUFFT_C2C, 1, work.data()));
    CASES_FFT_CHECK(cufftXtMalloc(s_->plan, &s_->data, CUFFT_XT_FORMAT_INPLACE));
    CASES_FFT_CHECK(cufftXtMalloc(s_->plan, &s_->spare, CUFFT_XT_FORMAT_INPLACE));
  });
}

Xt::~Xt() = default;

void Xt::load(const Complex* host) {
  wait();
  keeping_device([&] {
    s_->data->subFormat = CUFFT_XT_FORMAT_INPLACE;  // natural order, whatever it held
    CASES_FFT_CHECK(cufftXtMemcpy(s_->plan, s_->data, const_cast<Complex*>(host), CUFFT_COPY_HOST_TO_DEVICE));
  });
}

void Xt::store(Complex* host) {
  wait();  // a device-to-host cufftXtMemcpy may overtake the plan stream's last kernels
  keeping_device([&] { CASES_FFT_CHECK(cufftXtMemcpy(s_->plan, host, s_->data, CUFFT_COPY_DEVICE_TO_HOST)); });
}

// The exec, then the reorder into the spare descriptor, which becomes the data.
void Xt::run(Order in, Order out, int direction) {
  State& s = *s_;
  if (in != Order::natural || out != Order::natural)
    throw std::invalid_argument("cases::fft::Xt: cufftXt's output order is its own; natural orders only");
  keeping_device([&] {
    CASES_FFT_CHECK(cufftXtExecDescriptorC2C(s.plan, s.data, s.data, direction));
    s.spare->subFormat = CUFFT_XT_FORMAT_INPLACE;
    CASES_FFT_CHECK(cufftXtMemcpy(s.plan, s.spare, s.data, CUFFT_COPY_DEVICE_TO_DEVICE));
    std::swap(s.data, s.spare);
  });
}

void Xt::forward(Order in, Order out) { run(in, out, CUFFT_FORWARD); }
void Xt::inverse(Order in, Order out) { run(in, out, CUFFT_INVERSE); }

void Xt::wait() {
  keeping_device([&] {
    CUSH_CUDA_CHECK(cudaStreamSynchronize(s_->stream));
    for (int id : s_->ids) {
      CUSH_CUDA_CHECK(cudaSetDevice(id));
      CUSH_CUDA_CHECK(cudaDeviceSynchronize());
    }
  });
}

}  // namespace fft
}  // namespace cases
