// What a transfer between two GPUs costs a memory-bound kernel running on them at the same time,
// per transport: the copy engines leave the SMs to the kernel but share its memory bandwidth; the
// peer kernel and NCCL take SMs as well. An exchange that overlaps computation (a halo exchange
// beside the interior's stencil) is only as hidden as this lets it be (docs/device_ops.md,
// "Transfers beside kernels").
//
// Names: overlap/<transport>/<MiB>
//   transport  peer (copy engines), peer_kernel (SM stores over NVLink), nccl (send/receive):
//              cush::copy between two plans with that transport forced
//   MiB        what each GPU sends per transfer; the two GPUs send at once (0 -> 1 and 1 -> 0)
// On each of the first two GPUs a stream triad (a = b + s c, three arrays of 256 MiB of floats)
// runs `launches` times on a stream of its own. Each row first times the triad alone and one
// transfer alone, then, per timed iteration, the same launches with as many transfers enqueued
// beside them as take about as long. Counters (averages over a repetition's
// iterations): kernel_ms and kernel_alone_ms (one launch), slowdown (their ratio), transfer_ms
// and transfer_alone_ms (one transfer), link_GBps (bytes one GPU sends / transfer_ms), rounds.
// Time: the triad's launches (the work being disturbed). The summary:
// python3 -m cushreport summarize overlap <json> (tools/cushreport/summaries/overlap.py).

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "harness.hpp"

namespace {

constexpr std::size_t kTriadFloats = std::size_t{64} << 20;  // 256 MiB per array
constexpr int kLaunches = 20;

__global__ void triad(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c, float s,
                      std::size_t n4) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// The triad's arrays and stream on one GPU.
struct Triad {
  int device;
  cush::DeviceBuffer a, b, c;
  cush::Stream stream;
  int sms = 0;
  explicit Triad(int d)
      : device(d),
        a(d, kTriadFloats * sizeof(float)),
        b(d, kTriadFloats * sizeof(float)),
        c(d, kTriadFloats * sizeof(float)),
        stream(d) {
    cush::DeviceGuard guard(d);
    CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    for (const cush::DeviceBuffer* x : {&a, &b, &c})
      CUSH_CUDA_CHECK(cudaMemsetAsync(x->data(), 0, kTriadFloats * sizeof(float), stream.get()));
  }
  // Enough blocks of 512 threads to fill every SM (4 per SM: 2,048 threads), grid-stride.
  void launch() const {
    cush::DeviceGuard guard(device);
    triad<<<4 * sms, 512, 0, stream.get()>>>(static_cast<float4*>(a.data()), static_cast<const float4*>(b.data()),
                                             static_cast<const float4*>(c.data()), 3.0f, kTriadFloats / 4);
    CUSH_CUDA_CHECK(cudaGetLastError());
  }
};

void measure(benchmark::State& state, cush::Transport transport, std::size_t bytes) {
  const std::vector<int> all = cush_bench::all_devices();
  const std::vector<int> two{all[0], all[1]};
  std::vector<std::unique_ptr<Triad>> triads;
  for (int d : two) triads.push_back(std::make_unique<Triad>(d));
  std::vector<cudaStream_t> kernel_streams;
  for (const auto& t : triads) kernel_streams.push_back(t->stream.get());
  // Each GPU's segment of `from` lands on the other GPU's segment of `to`.
  cush::Plan<std::byte> from(cush::DeviceSet(two), 2 * bytes);
  cush::Plan<std::byte> to(cush::DeviceSet(std::vector<int>{two[1], two[0]}), 2 * bytes);
  std::vector<cudaStream_t> transfer_streams;
  for (int d : two) transfer_streams.push_back(to.stream(static_cast<std::size_t>(to.devices().position_of(d))));
  const cush::CommOptions options{transport};
  const auto transfer = [&] { cush::copy(from, to, options); };
  const auto kernels = [&] {
    for (int k = 0; k < kLaunches; ++k)
      for (const auto& t : triads) t->launch();
  };

  cush_bench::EventTimer kernel_timer(two);
  cush_bench::EventTimer transfer_timer(two);
  transfer();  // warm-up: communicators, peer access, kernels loaded
  kernels();
  cush_bench::synchronize(two);
  kernel_timer.start(kernel_streams);
  kernels();
  const double kernel_alone = kernel_timer.stop(kernel_streams) / kLaunches;
  constexpr int kProbe = 4;
  transfer_timer.start(transfer_streams);
  for (int r = 0; r < kProbe; ++r) transfer();
  const double transfer_alone = transfer_timer.stop(transfer_streams) / kProbe;
  const int rounds = std::max(1, static_cast<int>(std::lround(kernel_alone * kLaunches / transfer_alone)));

  double kernel_sum = 0, transfer_sum = 0;
  for (auto _ : state) {
    kernel_timer.start(kernel_streams);
    transfer_timer.start(transfer_streams);
    kernels();  // launches return at once: both start together
    for (int r = 0; r < rounds; ++r) transfer();
    const double k = kernel_timer.stop(kernel_streams);
    const double t = transfer_timer.stop(transfer_streams);
    state.SetIterationTime(k);
    kernel_sum += k / kLaunches;
    transfer_sum += t / rounds;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["kernel_alone_ms"] = kernel_alone * 1e3;
  state.counters["kernel_ms"] = kernel_sum / n * 1e3;
  state.counters["slowdown"] = kernel_sum / n / kernel_alone;
  state.counters["transfer_alone_ms"] = transfer_alone * 1e3;
  state.counters["transfer_ms"] = transfer_sum / n * 1e3;
  state.counters["link_GBps"] = static_cast<double>(bytes) / (transfer_sum / n) / 1e9;
  state.counters["rounds"] = rounds;
}

void register_all() {
  if (cush_bench::all_devices().size() < 2) {
    std::printf("bench_overlap: one GPU; the transfers need two.\n");
    return;
  }
  const std::pair<cush::Transport, const char*> transports[] = {
      {cush::Transport::peer, "peer"}, {cush::Transport::peer_kernel, "peer_kernel"}, {cush::Transport::nccl, "nccl"}};
  for (std::size_t mib : {std::size_t{16}, std::size_t{256}})
    for (const auto& [transport, label] : transports) {
      const std::string name = std::string("overlap/") + label + "/" + std::to_string(mib);
      benchmark::RegisterBenchmark(name.c_str(), [transport, mib](benchmark::State& s) { measure(s, transport, mib << 20); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(cush_bench::min_time(0.5));
    }
}

}  // namespace

int main(int argc, char** argv) { return cush_bench::run(argc, argv, "bench_overlap", register_all); }
