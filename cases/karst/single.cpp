// Case "karst", single-GPU reference: every member of the ensemble on gpus.cuda[0], advanced
// together by the batched kernels (kernels.hpp); the members, the forcing and the observed curve
// go to the GPU once per run, the curves and misfits come back once.

#include <cuda_runtime.h>

#include <stdexcept>

#include "cush/error.hpp"
#include "ensemble.hpp"
#include "kernels.hpp"
#include "raw_batch.hpp"

namespace cases {
namespace karst {

struct Single::State {
  Setup setup;
  RawBatch gpu;
  std::size_t last = 0;  // members of the last run
  ~State() { gpu.release(); }
};

Single::Single(const Setup& setup, const Devices& gpus) : s_(std::make_unique<State>()) {
  if (gpus.cuda.empty()) throw std::invalid_argument("cases::karst::Single: no GPU given (gpus.cuda is empty)");
  check(setup.model, setup.grid, Forcing{}, {});
  s_->setup = setup;
  s_->gpu.open(gpus.cuda[0]);
}

Single::~Single() = default;
Single::Single(Single&&) noexcept = default;
Single& Single::operator=(Single&&) noexcept = default;

Runs Single::run(const Forcing& forcing, std::span<const Groups> members, std::span<const double> observed) {
  State& st = *s_;
  RawBatch& s = st.gpu;
  check_run("cases::karst::Single", st.setup.model, st.setup.grid, forcing, members, observed);
  const std::size_t count = members.size(), steps = forcing.steps();
  Runs out;
  if (count == 0 || steps == 0) return out;
  CUSH_CUDA_CHECK(cudaSetDevice(s.device));
  s.reserve(st.setup.model, st.setup.grid, count, steps);
  const std::vector<double> packed = pack(forcing);
  CUSH_CUDA_CHECK(cudaMemcpyAsync(s.members, members.data(), count * sizeof(Groups), cudaMemcpyHostToDevice, s.stream));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(s.forcing, packed.data(), packed.size() * sizeof(double), cudaMemcpyHostToDevice, s.stream));
  launch_forward(st.setup.model, st.setup.grid, st.setup.outlet, forcing, Batch{s.members, s.forcing, s.curves, count},
                 *s.work, s.stream, st.setup.path);
  if (!observed.empty()) {
    CUSH_CUDA_CHECK(cudaMemcpyAsync(s.observed, observed.data(), steps * sizeof(double), cudaMemcpyHostToDevice, s.stream));
    launch_misfits(s.curves, s.observed, count, steps, s.misfits, s.stream);
    out.misfits.resize(count);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(out.misfits.data(), s.misfits, count * sizeof(double), cudaMemcpyDeviceToHost, s.stream));
  }
  out.curves.resize(count * steps);
  CUSH_CUDA_CHECK(cudaMemcpyAsync(out.curves.data(), s.curves, out.curves.size() * sizeof(double), cudaMemcpyDeviceToHost, s.stream));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  st.last = count;
  return out;
}

std::vector<double> Single::water() const {
  const State& s = *s_;
  std::vector<double> w(s.last * s.setup.grid.n);
  if (w.empty()) return w;
  CUSH_CUDA_CHECK(cudaSetDevice(s.gpu.device));
  CUSH_CUDA_CHECK(cudaMemcpy(w.data(), s.gpu.work->water(), w.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return w;
}

std::vector<double> Single::rock() const {
  const State& s = *s_;
  std::vector<double> r(s.setup.model == Model::heat ? s.last * s.setup.grid.m * s.setup.grid.n : 0);
  if (r.empty()) return r;
  CUSH_CUDA_CHECK(cudaSetDevice(s.gpu.device));
  CUSH_CUDA_CHECK(cudaMemcpy(r.data(), s.gpu.work->rock(), r.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return r;
}

}  // namespace karst
}  // namespace cases
