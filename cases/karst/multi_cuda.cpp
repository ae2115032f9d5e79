// Case "karst", multi-GPU raw CUDA: the members divided over the GPUs by hand (the first
// count % G GPUs get one more), each GPU with its own stream, copies of the members, forcing and
// observed curve, its workspace and its part of the curves; all GPUs run at once, then the parts
// come back to their places in the host's arrays.

#include <cuda_runtime.h>

#include <stdexcept>

#include "cush/error.hpp"
#include "ensemble.hpp"
#include "kernels.hpp"
#include "raw_batch.hpp"

namespace cases {
namespace karst {

struct MultiCuda::State {
  Setup setup;
  std::vector<RawBatch> gpus;
  ~State() {
    for (RawBatch& g : gpus) g.release();
  }
};

MultiCuda::MultiCuda(const Setup& setup, const Devices& gpus) : s_(std::make_unique<State>()) {
  if (gpus.cuda.empty()) throw std::invalid_argument("cases::karst::MultiCuda: no GPU given (gpus.cuda is empty)");
  check(setup.model, setup.grid, Forcing{}, {});
  s_->setup = setup;
  for (int id : gpus.cuda) {
    s_->gpus.emplace_back();
    s_->gpus.back().open(id);
  }
}

MultiCuda::~MultiCuda() = default;
MultiCuda::MultiCuda(MultiCuda&&) noexcept = default;
MultiCuda& MultiCuda::operator=(MultiCuda&&) noexcept = default;

Runs MultiCuda::run(const Forcing& forcing, std::span<const Groups> members, std::span<const double> observed) {
  State& st = *s_;
  check_run("cases::karst::MultiCuda", st.setup.model, st.setup.grid, forcing, members, observed);
  const std::size_t count = members.size(), steps = forcing.steps(), gpus = st.gpus.size();
  Runs out;
  if (count == 0 || steps == 0) return out;
  out.curves.resize(count * steps);
  if (!observed.empty()) out.misfits.resize(count);
  const std::vector<double> packed = pack(forcing);
  // Every GPU's work first (copies from pageable memory return once staged), then the results:
  // a copy into pageable memory would hold the host until that GPU is done.
  std::vector<std::size_t> parts(gpus), firsts(gpus);
  for (std::size_t i = 0, first = 0; i < gpus; ++i) {
    parts[i] = count / gpus + (i < count % gpus ? 1 : 0);
    firsts[i] = first;
    first += parts[i];
    RawBatch& g = st.gpus[i];
    if (parts[i] == 0) continue;
    CUSH_CUDA_CHECK(cudaSetDevice(g.device));
    g.reserve(st.setup.model, st.setup.grid, parts[i], steps);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(g.members, members.data() + firsts[i], parts[i] * sizeof(Groups), cudaMemcpyHostToDevice, g.stream));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(g.forcing, packed.data(), packed.size() * sizeof(double), cudaMemcpyHostToDevice, g.stream));
    launch_forward(st.setup.model, st.setup.grid, st.setup.outlet, forcing, Batch{g.members, g.forcing, g.curves, parts[i]},
                   *g.work, g.stream, st.setup.path);
    if (!observed.empty()) {
      CUSH_CUDA_CHECK(cudaMemcpyAsync(g.observed, observed.data(), steps * sizeof(double), cudaMemcpyHostToDevice, g.stream));
      launch_misfits(g.curves, g.observed, parts[i], steps, g.misfits, g.stream);
    }
  }
  for (std::size_t i = 0; i < gpus; ++i) {
    RawBatch& g = st.gpus[i];
    if (parts[i] == 0) continue;
    CUSH_CUDA_CHECK(cudaSetDevice(g.device));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(out.curves.data() + firsts[i] * steps, g.curves, parts[i] * steps * sizeof(double),
                                    cudaMemcpyDeviceToHost, g.stream));
    if (!observed.empty())
      CUSH_CUDA_CHECK(cudaMemcpyAsync(out.misfits.data() + firsts[i], g.misfits, parts[i] * sizeof(double),
                                      cudaMemcpyDeviceToHost, g.stream));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(g.stream));
  }
  return out;
}

}  // namespace karst
}  // namespace cases
