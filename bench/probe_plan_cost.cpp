// Diagnostic, not a benchmark: what creating and destroying a plan costs on the host, piece by
// piece, so that short end-to-end programs (which make plans every call) know where the time
// goes. Prints microseconds per operation, averaged over many repetitions.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>

#include "cush/cush.hpp"

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
  return 0;
}
