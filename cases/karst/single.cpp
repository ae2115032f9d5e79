// Case "karst", single-GPU reference: every member of the ensemble on gpus.cuda[0], advanced
// together by the batched kernels (kernels.hpp); the members, the forcing and the observed curve
// go to the GPU once per run, the curves and misfits come back once.

#include <cuda_runtime.h>

#include <optional>
#include <stdexcept>

#include "cush/error.hpp"
#include "ensemble.hpp"
#include "kernels.hpp"

namespace cases {
namespace karst {

struct Single::State {
  Setup setup;
  int device = -1;
  cudaStream_t stream = nullptr;
  std::size_t capacity = 0, steps = 0;  // what the buffers below hold
  std::size_t last = 0;                 // members of the last run
  Groups* members = nullptr;
  double *forcing = nullptr, *observed = nullptr, *curves = nullptr, *misfits = nullptr;
  std::optional<Workspace> work;

  void free_buffers() {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(members));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(forcing));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(observed));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(curves));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(misfits));
    members = nullptr;
    forcing = observed = curves = misfits = nullptr;
    work.reset();
    capacity = steps = 0;
  }
  ~State() {
    if (device < 0) return;
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
    if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
    free_buffers();
    if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
  }

  // Buffers for `count` members and `n` steps, allocated again only when they grow.
  void reserve(std::size_t count, std::size_t n) {
    if (count <= capacity && n == steps) return;
    CUSH_CUDA_CHECK(cudaStreamSynchronize(stream));
    free_buffers();
    CUSH_CUDA_CHECK(cudaMalloc(&members, count * sizeof(Groups)));
    CUSH_CUDA_CHECK(cudaMalloc(&forcing, 3 * n * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMalloc(&observed, n * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMalloc(&curves, count * n * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMalloc(&misfits, count * sizeof(double)));
    work.emplace(device, setup.model, setup.grid, count);
    capacity = count;
    steps = n;
  }
};

Single::Single(const Setup& setup, const Devices& gpus) : s_(std::make_unique<State>()) {
  if (gpus.cuda.empty()) throw std::invalid_argument("cases::karst::Single: no GPU given (gpus.cuda is empty)");
  check(setup.model, setup.grid, Forcing{}, {});
  s_->setup = setup;
  CUSH_CUDA_CHECK(cudaSetDevice(gpus.cuda[0]));
  s_->device = gpus.cuda[0];
  CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&s_->stream, cudaStreamNonBlocking));
}

Single::~Single() = default;
Single::Single(Single&&) noexcept = default;
Single& Single::operator=(Single&&) noexcept = default;

Runs Single::run(const Forcing& forcing, std::span<const Groups> members, std::span<const double> observed) {
  State& s = *s_;
  check_run("cases::karst::Single", s.setup.model, s.setup.grid, forcing, members, observed);
  const std::size_t count = members.size(), steps = forcing.steps();
  Runs out;
  if (count == 0 || steps == 0) return out;
  CUSH_CUDA_CHECK(cudaSetDevice(s.device));
  s.reserve(count, steps);
  const std::vector<double> packed = pack(forcing);
  CUSH_CUDA_CHECK(cudaMemcpyAsync(s.members, members.data(), count * sizeof(Groups), cudaMemcpyHostToDevice, s.stream));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(s.forcing, packed.data(), packed.size() * sizeof(double), cudaMemcpyHostToDevice, s.stream));
  launch_forward(s.setup.model, s.setup.grid, s.setup.outlet, forcing, Batch{s.members, s.forcing, s.curves, count},
                 *s.work, s.stream);
  if (!observed.empty()) {
    CUSH_CUDA_CHECK(cudaMemcpyAsync(s.observed, observed.data(), steps * sizeof(double), cudaMemcpyHostToDevice, s.stream));
    launch_misfits(s.curves, s.observed, count, steps, s.misfits, s.stream);
    out.misfits.resize(count);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(out.misfits.data(), s.misfits, count * sizeof(double), cudaMemcpyDeviceToHost, s.stream));
  }
  out.curves.resize(count * steps);
  CUSH_CUDA_CHECK(cudaMemcpyAsync(out.curves.data(), s.curves, out.curves.size() * sizeof(double), cudaMemcpyDeviceToHost, s.stream));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  s.last = count;
  return out;
}

std::vector<double> Single::water() const {
  const State& s = *s_;
  std::vector<double> w(s.last * s.setup.grid.n);
  if (w.empty()) return w;
  CUSH_CUDA_CHECK(cudaSetDevice(s.device));
  CUSH_CUDA_CHECK(cudaMemcpy(w.data(), s.work->water(), w.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return w;
}

std::vector<double> Single::rock() const {
  const State& s = *s_;
  std::vector<double> r(s.setup.model == Model::heat ? s.last * s.setup.grid.m * s.setup.grid.n : 0);
  if (r.empty()) return r;
  CUSH_CUDA_CHECK(cudaSetDevice(s.device));
  CUSH_CUDA_CHECK(cudaMemcpy(r.data(), s.work->rock(), r.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return r;
}

}  // namespace karst
}  // namespace cases
