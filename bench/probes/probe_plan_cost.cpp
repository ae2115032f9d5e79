// Diagnostic, not a benchmark: what creating and destroying a plan costs on the host, piece by
// piece, so that short end-to-end programs (which make plans every call) know where the time
// goes. Prints microseconds per operation, averaged over many repetitions.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>

#include "cush/cush.hpp"
#include "matmul.hpp"

namespace {
double micros(const std::function<void()>& f, int reps = 2000) {
  f();  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
}
}  // namespace

int main() {
  const int available = cush::DeviceSet::available();
  if (available == 0) {
    std::printf("probe_plan_cost: no GPU here\n");
    return 0;
  }
  for (int g = 1; g <= available; ++g) {
    const cush::DeviceSet set = cush::DeviceSet::first(g);
    std::printf("== %d GPU(s)\n", g);
    std::printf("DeviceSet::first             %8.2f us\n", micros([g] { (void)cush::DeviceSet::first(g); }));
    std::printf("DeviceSet copy               %8.2f us\n", micros([&set] { cush::DeviceSet copy = set; (void)copy; }));
    std::printf("free_memory, every device    %8.2f us\n", micros([&set] {
                  for (std::size_t p = 0; p < set.size(); ++p) (void)set.free_memory(p);
                }));
    std::printf("Stream, every device         %8.2f us\n", micros([&set] {
                  for (std::size_t p = 0; p < set.size(); ++p) cush::Stream s(set[p]);
                }));
    std::printf("DeviceBuffer 1 MiB, every    %8.2f us\n", micros([&set] {
                  for (std::size_t p = 0; p < set.size(); ++p) cush::DeviceBuffer b(set[p], 1 << 20);
                }));
    std::printf("DeviceBuffer 256 MiB, every  %8.2f us\n", micros([&set] {
                  for (std::size_t p = 0; p < set.size(); ++p) cush::DeviceBuffer b(set[p], std::size_t{256} << 20);
                }, 200));
    std::printf("Layout::make                 %8.2f us\n", micros([&set] {
                  (void)cush::Layout::make(1 << 20, cush::Distribution::uniform(), set.topology().devices());
                }));
    std::printf("Plan<float> 1 Mi, uniform    %8.2f us\n", micros([&set] { cush::Plan<float> p(set, 1 << 20); }));
    std::printf("Plan<float> 1 Mi, replicated %8.2f us\n",
                micros([&set] { cush::Plan<float> p(set, 1 << 20, cush::Distribution::replicated()); }));
    std::printf("Plan<float> 64 Mi, uniform   %8.2f us\n", micros([&set] { cush::Plan<float> p(set, 64 << 20); }, 200));
  }
  // The smallest matmul case end to end (k = 1: A 400 x 800), and its pieces.
  const cases::matmul::Dims d = cases::matmul::seed_dims(1);
  const cases::Devices first_gpu = cases::Devices::first(1);
  cush::PinnedBuffer<float> a(d.m * d.n), b(d.n * d.p), c(d.m * d.p);
  std::printf("== matmul k = 1, 1 GPU\n");
  std::printf("raw run (alloc + run + free) %8.2f us\n",
              micros([&] { cases::matmul::multiply<cases::matmul::MultiCuda>(a.data(), b.data(), c.data(), d, first_gpu); }, 500));
  std::printf("cush run                     %8.2f us\n",
              micros([&] { cases::matmul::multiply<cases::matmul::MultiCush>(a.data(), b.data(), c.data(), d, first_gpu); }, 500));
  std::printf("raw construct + destroy      %8.2f us\n", micros([&] { cases::matmul::MultiCuda<float> v(d, first_gpu); }, 500));
  std::printf("cush construct + destroy     %8.2f us\n", micros([&] { cases::matmul::MultiCush<float> v(d, first_gpu); }, 500));
  cases::matmul::MultiCush<float> v(d, first_gpu);
  cases::matmul::MultiCuda<float> r(d, first_gpu);
  std::printf("raw run on made buffers      %8.2f us\n", micros([&] { r.run(a.data(), b.data(), c.data()); }, 500));
  std::printf("cush run on made plans       %8.2f us\n", micros([&] { v.run(a.data(), b.data(), c.data()); }, 500));
  const cush::DeviceSet one = cush::DeviceSet::first(1);
  cush::Plan<float> pa(one, d.m * d.n), pb(one, d.n * d.p, cush::Distribution::replicated()), pc(one, d.m * d.p);
  std::printf("scatter 1.2 MB               %8.2f us\n", micros([&] { pa.scatter(a.data()); pa.wait(); }, 500));
  std::printf("broadcast 1.2 MB             %8.2f us\n", micros([&] { pb.broadcast(b.data()); pb.wait(); }, 500));
  std::printf("gather 0.6 MB                %8.2f us\n", micros([&] { pc.gather(c.data()); pc.wait(); }, 500));
  std::printf("after (host side)            %8.2f us\n", micros([&] { pc.after(pa); }, 2000));
  std::printf("cudaMemcpyAsync 1.2 MB+sync  %8.2f us\n", micros([&] {
                cudaMemcpyAsync(pa.segment(0).data(), a.data(), d.m * d.n * 4, cudaMemcpyHostToDevice, pa.stream(0));
                cudaStreamSynchronize(pa.stream(0));
              }, 500));
  cases::matmul::release_blas_handles();
  return 0;
}
