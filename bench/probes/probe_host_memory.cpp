// Measures what the pageable-memory defaults of cush depend on (docs/host_memory.md):
//  1. host memcpy pageable -> pinned by thread count
//  2. cost of cudaHostRegister / cudaHostUnregister, whole range vs parallel pieces
//  3. DMA over a range made of two registrations vs one
//  4. whether host functions of different devices' streams run concurrently
//  5. cush's staged scatter/gather by chunk size, slot count and copy threads, against a plain
//     pageable cudaMemcpyAsync loop
// Usage: probe_host_memory [GiB=2]

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cush/cush.hpp"
#include "core/thread_pool.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void touch(std::byte* p, std::size_t n) {
  cush::detail::ThreadPool::shared().run(64, [=](std::size_t i) {
    const std::size_t lo = n / 64 * i, hi = i == 63 ? n : n / 64 * (i + 1);
    for (std::size_t k = lo; k < hi; k += 4096) p[k] = static_cast<std::byte>(k);
  });
}

template <class F>
double best_of(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, since(t0));
  }
  return best;
}

void CUDART_CB sleep_50ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

}  // namespace

int main(int argc, char** argv) {
  if (cush::DeviceSet::available() == 0) {
    std::printf("probe_host_memory: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
    return 0;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep what was measured if a later step dies
  const std::size_t gib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2;
  const std::size_t n = gib << 30;
  const cush::DeviceSet gpus = cush::DeviceSet::all();
  std::printf("# probe_host_memory: %zu GiB, %zu GPU(s), %u cores\n", gib, gpus.size(), std::thread::hardware_concurrency());

  std::unique_ptr<std::byte[]> pageable(new std::byte[n]);
  std::unique_ptr<std::byte[]> pageable2(new std::byte[n]);
  touch(pageable.get(), n);
  touch(pageable2.get(), n);
  cush::PinnedBuffer<std::byte> pinned(n);
  touch(pinned.data(), n);

  std::printf("\n## 1. host memcpy pageable -> pinned (%zu GiB)\n| threads | GB/s |\n|---|---|\n", gib);
  for (unsigned t : {1U, 2U, 4U, 8U, 12U, 16U, 24U, 32U}) {
    const double s = best_of(3, [&] { cush::detail::parallel_memcpy(pinned.data(), pageable.get(), n, t); });
    std::printf("| %u | %.1f |\n", t, static_cast<double>(n) / s / 1e9);
  }

  std::printf("\n## 2. registering %zu GiB of pageable memory\n| how | register ms | unregister ms | GB/s pinned |\n|---|---|---|---|\n", gib);
  {
    auto t0 = Clock::now();
    CUSH_CUDA_CHECK(cudaHostRegister(pageable.get(), n, cudaHostRegisterPortable));
    const double r = since(t0);
    t0 = Clock::now();
    CUSH_CUDA_CHECK(cudaHostUnregister(pageable.get()));
    std::printf("| one cudaHostRegister | %.1f | %.1f | %.1f |\n", r * 1e3, since(t0) * 1e3, static_cast<double>(n) / r / 1e9);
  }
  for (std::size_t chunk_mib : {64, 256, 1024}) {
    cush::HostTransferOptions o = cush::host_transfer_options();
    o.registration_chunk = chunk_mib << 20;
    cush::set_host_transfer_options(o);
    auto t0 = Clock::now();
    std::optional<cush::HostRegistration> reg(std::in_place, pageable.get(), n);
    const double r = since(t0);
    t0 = Clock::now();
    reg.reset();
    std::printf("| HostRegistration, %zu MiB pieces in parallel | %.1f | %.1f | %.1f |\n", chunk_mib, r * 1e3,
                since(t0) * 1e3, static_cast<double>(n) / r / 1e9);
  }

  std::printf("\n## 3. DMA host->device 0 over registrations (1 GiB)\n| host range | GB/s |\n|---|---|\n");
  {
    const std::size_t m = std::size_t{1} << 30;
    void* dev = nullptr;
    CUSH_CUDA_CHECK(cudaSetDevice(gpus[0]));
    CUSH_CUDA_CHECK(cudaMalloc(&dev, m));
    CUSH_CUDA_CHECK(cudaHostRegister(pageable.get(), m, cudaHostRegisterPortable));
    const double one = best_of(3, [&] { CUSH_CUDA_CHECK(cudaMemcpy(dev, pageable.get(), m, cudaMemcpyHostToDevice)); });
    CUSH_CUDA_CHECK(cudaHostUnregister(pageable.get()));
    CUSH_CUDA_CHECK(cudaHostRegister(pageable.get(), m / 2, cudaHostRegisterPortable));
    CUSH_CUDA_CHECK(cudaHostRegister(pageable.get() + m / 2, m / 2, cudaHostRegisterPortable));
    // One copy over two registrations: seen to fail with cudaErrorInvalidValue on CUDA 13.0.
    const cudaError_t across = cudaMemcpy(dev, pageable.get(), m, cudaMemcpyHostToDevice);
    (void)cudaGetLastError();
    CUSH_CUDA_CHECK(cudaHostUnregister(pageable.get()));
    CUSH_CUDA_CHECK(cudaHostUnregister(pageable.get() + m / 2));
    const double none = best_of(2, [&] { CUSH_CUDA_CHECK(cudaMemcpy(dev, pageable.get(), m, cudaMemcpyHostToDevice)); });
    std::printf("| one registration | %.1f |\n| two adjacent registrations, one copy | %s |\n| pageable | %.1f |\n",
                static_cast<double>(m) / one / 1e9, across == cudaSuccess ? "works" : cudaGetErrorName(across),
                static_cast<double>(m) / none / 1e9);
    CUSH_CUDA_CHECK(cudaFree(dev));
  }

  std::printf("\n## 4. host functions on %zu devices' streams, 50 ms each\n", gpus.size());
  {
    std::vector<cush::Stream> streams;
    for (int d : gpus) streams.emplace_back(d);
    const auto t0 = Clock::now();
    for (auto& s : streams) CUSH_CUDA_CHECK(cudaLaunchHostFunc(s.get(), sleep_50ms, nullptr));
    for (auto& s : streams) s.synchronize();
    std::printf("wall %.0f ms (%s)\n", since(t0) * 1e3, since(t0) < 0.075 ? "concurrent" : "serialized");
  }

  std::printf("\n## 5. staged moves over all GPUs, %zu GiB (best of 3)\n", gib);
  cush::Plan<std::byte> plan(gpus, n);
  std::vector<cush::Stream> raw;
  for (int d : gpus) raw.emplace_back(d);
  auto raw_loop = [&](bool to_device) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const auto s = plan.segment(i);
      CUSH_CUDA_CHECK(cudaSetDevice(s.device()));
      if (to_device) CUSH_CUDA_CHECK(cudaMemcpyAsync(s.data(), pageable.get() + s.offset(), s.bytes(), cudaMemcpyHostToDevice, raw[i].get()));
      else CUSH_CUDA_CHECK(cudaMemcpyAsync(pageable2.get() + s.offset(), s.data(), s.bytes(), cudaMemcpyDeviceToHost, raw[i].get()));
    }
    for (auto& s : raw) s.synchronize();
  };
  const double raw_in = best_of(2, [&] { raw_loop(true); });
  const double raw_out = best_of(2, [&] { raw_loop(false); });
  std::printf("raw pageable loop: scatter %.1f GB/s, gather %.1f GB/s\n", static_cast<double>(n) / raw_in / 1e9,
              static_cast<double>(n) / raw_out / 1e9);
  std::printf("| chunk MiB | slots | threads | scatter GB/s | gather GB/s |\n|---|---|---|---|---|\n");
  const cush::HostTransferOptions defaults = cush::host_transfer_options();
  for (std::size_t chunk : {4, 8, 16, 32, 64}) {
    for (int slots : {2, 4}) {
      for (int threads : {8, 16, 24}) {
        if (slots == 2 && threads != 16) continue;
        cush::HostTransferOptions o = defaults;
        o.staging_chunk = chunk << 20;
        o.staging_slots = slots;
        o.copy_threads = threads;
        cush::set_host_transfer_options(o);
        plan.scatter(pageable.get());
        plan.wait();
        const double in = best_of(3, [&] { plan.scatter(pageable.get()); plan.wait(); });
        const double out = best_of(3, [&] { plan.gather(pageable2.get()); plan.wait(); });
        std::printf("| %zu | %d | %d | %.1f | %.1f |\n", chunk, slots, threads, static_cast<double>(n) / in / 1e9,
                    static_cast<double>(n) / out / 1e9);
      }
    }
  }
  cush::set_host_transfer_options(defaults);
  for (std::size_t part_gib : {std::size_t{1}, gib}) {
    cush::Plan<std::byte> sub(gpus, part_gib << 30);
    sub.scatter(pageable.get());
    sub.wait();
    const double in = best_of(3, [&] { sub.scatter(pageable.get()); sub.wait(); });
    const double out = best_of(3, [&] { sub.gather(pageable2.get()); sub.wait(); });
    std::printf("defaults at %zu GiB: scatter %.1f GB/s, gather %.1f GB/s\n", part_gib,
                static_cast<double>(part_gib << 30) / in / 1e9, static_cast<double>(part_gib << 30) / out / 1e9);
  }
  if (std::memcmp(pageable.get(), pageable2.get(), n) != 0) {
    std::printf("ERROR: gathered data differs from scattered data\n");
    return 1;
  }
  std::printf("\ngathered data equals scattered data\n");
  return 0;
}
