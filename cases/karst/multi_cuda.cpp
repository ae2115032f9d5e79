// Case "karst", multi-GPU raw CUDA: the members divided over the GPUs by hand (the first
// count % G GPUs get one more), each GPU with its own stream, copies of the members, forcing and
// observed curve, its workspace and its part of the curves; all GPUs run at once, then the parts
// come back to their places in the host's arrays.

#include <cuda_runtime.h>

#include <optional>
#include <stdexcept>

#include "cush/error.hpp"
#include "ensemble.hpp"
#include "kernels.hpp"

namespace cases {
namespace karst {

namespace {

struct Gpu {
  int device = -1;
  cudaStream_t stream = nullptr;
  std::size_t capacity = 0, steps = 0;
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

  void release() {
    if (device < 0) return;
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
    if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
    free_buffers();
    if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
    device = -1;
  }

  void reserve(const Setup& setup, std::size_t count, std::size_t n) {
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

}  // namespace

struct MultiCuda::State {
  Setup setup;
  std::vector<Gpu> gpus;
  ~State() {
    for (Gpu& g : gpus) g.release();
  }
};

MultiCuda::MultiCuda(const Setup& setup, const Devices& gpus) : s_(std::make_unique<State>()) {
  if (gpus.cuda.empty()) throw std::invalid_argument("cases::karst::MultiCuda: no GPU given (gpus.cuda is empty)");
  check(setup.model, setup.grid, Forcing{}, {});
  s_->setup = setup;
  for (int id : gpus.cuda) {
    s_->gpus.push_back(Gpu{});
    Gpu& g = s_->gpus.back();
    CUSH_CUDA_CHECK(cudaSetDevice(id));
    g.device = id;
    CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
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
    Gpu& g = st.gpus[i];
    if (parts[i] == 0) continue;
    CUSH_CUDA_CHECK(cudaSetDevice(g.device));
    g.reserve(st.setup, parts[i], steps);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(g.members, members.data() + firsts[i], parts[i] * sizeof(Groups), cudaMemcpyHostToDevice, g.stream));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(g.forcing, packed.data(), packed.size() * sizeof(double), cudaMemcpyHostToDevice, g.stream));
    launch_forward(st.setup.model, st.setup.grid, st.setup.outlet, forcing, Batch{g.members, g.forcing, g.curves, parts[i]},
                   *g.work, g.stream);
    if (!observed.empty()) {
      CUSH_CUDA_CHECK(cudaMemcpyAsync(g.observed, observed.data(), steps * sizeof(double), cudaMemcpyHostToDevice, g.stream));
      launch_misfits(g.curves, g.observed, parts[i], steps, g.misfits, g.stream);
    }
  }
  for (std::size_t i = 0; i < gpus; ++i) {
    Gpu& g = st.gpus[i];
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
