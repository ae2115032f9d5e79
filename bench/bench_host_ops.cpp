// Host<->GPU operations: cush against the hand-written per-GPU cudaMemcpyAsync loop, on the same
// device buffers, from pinned and from ordinary (pageable) host memory.
//
// Names: host/<op>/<memory>/<impl>/<MiB>
//   op      scatter | gather | broadcast
//   memory  pinned         cudaHostAlloc'd buffer
//           pageable       plain heap buffer; cush stages it, raw hands it to cudaMemcpyAsync
//           registered     pageable buffer under a cush::HostRegistration made once, before timing
//                          ("moved again": the common case in time-stepping codes)
//           register_each  pageable buffer registered, moved and unregistered in every iteration
//                          (first use paid through registration; wall-clock time)
//   impl    raw | cush
// Environment: CUSH_BENCH_HOST_OPS_MAX_MIB (default 4096) caps the sizes.

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cush/cush.hpp"
#include "harness.hpp"

namespace {

using Byte = std::byte;
enum class Op { scatter, gather, broadcast };
enum class Memory { pinned, pageable, registered, register_each };
enum class Impl { raw, cush };

const char* name(Op o) { return o == Op::scatter ? "scatter" : o == Op::gather ? "gather" : "broadcast"; }
const char* name(Memory m) {
  switch (m) {
    case Memory::pinned: return "pinned";
    case Memory::pageable: return "pageable";
    case Memory::registered: return "registered";
    case Memory::register_each: return "register_each";
  }
  return "?";
}

std::size_t max_bytes() {
  return cush::detail::env::size("CUSH_BENCH_HOST_OPS_MAX_MIB") << 20;
}

// Touches every page (first touch is slow on the GPU host's VM) with a pattern, on all cores.
void fill(Byte* p, std::size_t n) {
  const unsigned t = std::max(1U, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < t; ++i)
    threads.emplace_back([=] {
      const std::size_t lo = n / t * i;
      const std::size_t hi = i + 1 == t ? n : n / t * (i + 1);
      for (std::size_t k = lo; k < hi; ++k) p[k] = static_cast<Byte>(k * 131 + 7);
    });
  for (auto& th : threads) th.join();
}

// One pinned and one pageable host buffer of the largest size, shared by all benchmarks.
Byte* host_buffer(Memory m) {
  static cush::PinnedBuffer<Byte> pinned;
  static std::unique_ptr<Byte[]> pageable;
  const std::size_t n = max_bytes();
  if (m == Memory::pinned) {
    if (pinned.size() == 0) {
      pinned = cush::PinnedBuffer<Byte>(n);
      fill(pinned.data(), n);
    }
    return pinned.data();
  }
  if (!pageable) {
    pageable.reset(new Byte[n]);
    fill(pageable.get(), n);
  }
  return pageable.get();
}

void run(benchmark::State& state, Op op, Memory memory, Impl impl, std::size_t bytes) {
  const std::vector<int> ids = cush_bench::all_devices();
  const cush::DeviceSet gpus(ids);
  const std::size_t p = ids.size();
  cush::Plan<Byte> plan(gpus, bytes, op == Op::broadcast ? cush::Distribution::replicated() : cush::Distribution::uniform());
  Byte* host = host_buffer(memory);

  // The hand-written twin: its own stream per GPU, the plan's device buffers.
  std::vector<cush::Stream> raw_streams;
  std::vector<cudaStream_t> raw(p), planned(p);
  for (std::size_t i = 0; i < p; ++i) {
    raw_streams.emplace_back(ids[i]);
    raw[i] = raw_streams[i].get();
    planned[i] = plan.stream(i);
  }
  auto raw_op = [&] {
    for (std::size_t i = 0; i < p; ++i) {
      const cush::Segment<Byte> s = plan.segment(i);
      CUSH_CUDA_CHECK(cudaSetDevice(cush::physical_device(ids[i])));
      if (op == Op::scatter)
        CUSH_CUDA_CHECK(cudaMemcpyAsync(s.data(), host + s.offset(), s.bytes(), cudaMemcpyHostToDevice, raw[i]));
      else if (op == Op::gather)
        CUSH_CUDA_CHECK(cudaMemcpyAsync(host + s.offset(), s.data(), s.bytes(), cudaMemcpyDeviceToHost, raw[i]));
      else
        CUSH_CUDA_CHECK(cudaMemcpyAsync(s.data(), host, bytes, cudaMemcpyHostToDevice, raw[i]));
    }
  };
  auto cush_op = [&] {
    if (op == Op::scatter) plan.scatter(host);
    else if (op == Op::gather) plan.gather(host);
    else plan.broadcast(host);
  };
  auto once = [&] { impl == Impl::raw ? raw_op() : cush_op(); };
  const std::vector<cudaStream_t>& streams = impl == Impl::raw ? raw : planned;

  std::optional<cush::HostRegistration> registration;
  if (memory == Memory::registered) registration.emplace(host, bytes);
  if (memory != Memory::register_each) once();  // warm-up: staging buffers, peer access, caches
  cush_bench::synchronize(ids);

  cush_bench::EventTimer timer(ids);
  cush_bench::WallTimer wall;
  cush_bench::Throughput throughput;
  const double delivered = static_cast<double>(op == Op::broadcast ? bytes * p : bytes);
  for (auto _ : state) {
    double seconds = 0;
    if (memory == Memory::register_each) {
      wall.start();
      {
        const cush::HostRegistration r(host, bytes);
        once();
        plan.wait();
      }
      seconds = wall.stop();
    } else {
      timer.start(streams);
      once();
      seconds = timer.stop(streams);
    }
    state.SetIterationTime(seconds);
    throughput.add(seconds, delivered);
  }
  throughput.report(state);
  state.counters["MiB"] = static_cast<double>(bytes >> 20);
  state.counters["gpus"] = static_cast<double>(p);
}

void register_all() {
  for (Op op : {Op::scatter, Op::gather, Op::broadcast}) {
    for (Memory memory : {Memory::pinned, Memory::pageable, Memory::registered, Memory::register_each}) {
      for (Impl impl : {Impl::raw, Impl::cush}) {
        // The raw twin of a registered buffer is the pinned case; registration per move is cush's.
        if (impl == Impl::raw && memory != Memory::pinned && memory != Memory::pageable) continue;
        for (std::size_t mib = 1; (mib << 20) <= max_bytes(); mib *= 4) {
          const std::size_t bytes = mib << 20;
          const std::string n = std::string("host/") + name(op) + "/" + name(memory) + "/" +
                                (impl == Impl::raw ? "raw" : "cush") + "/" + std::to_string(mib) + "MiB";
          benchmark::RegisterBenchmark(n.c_str(), [=](benchmark::State& s) { run(s, op, memory, impl, bytes); })
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond)
              ->MinTime(cush_bench::min_time());
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return cush_bench::run(argc, argv, "bench_host_ops", register_all); }
