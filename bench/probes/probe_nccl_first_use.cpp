// Probe: what the first nccl operation on a set of devices costs (making its communicator and
// connections), against the same operation once the communicator is kept. Prints one line per
// GPU count: median of 3 first uses (after release_communicators()) and of 20 later ones.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "cush/cush.hpp"

namespace {
double ms_of(auto&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main() {
  const int gpus = cush::DeviceSet::available();
  for (int n = 2; n <= gpus; ++n) {
    std::vector<int> ids(static_cast<std::size_t>(n));
    std::iota(ids.begin(), ids.end(), 0);
    cush::Plan<float> plan(cush::DeviceSet(ids), 1 << 20, cush::Distribution::replicated());
    const auto op = [&] {
      cush::all_reduce(plan, cush::ReduceOp::sum, cush::CommOptions{cush::Transport::nccl});
      plan.wait();
    };
    std::vector<double> first, later;
    for (int r = 0; r < 3; ++r) {
      (void)cush::release_communicators();
      cush::Plan<float> fresh(cush::DeviceSet(ids), 1 << 20, cush::Distribution::replicated());
      first.push_back(ms_of([&] {
        cush::all_reduce(fresh, cush::ReduceOp::sum, cush::CommOptions{cush::Transport::nccl});
        fresh.wait();
      }));
    }
    op();
    for (int r = 0; r < 20; ++r) later.push_back(ms_of(op));
    std::printf("%d GPUs: first nccl all-reduce (4 MiB) %.1f ms, later %.3f ms (medians of 3 and 20)\n", n,
                median(first), median(later));
  }
}
