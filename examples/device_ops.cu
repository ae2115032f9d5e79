// Operations among GPUs: redistribute a plan onto other GPUs with another distribution, gather
// every segment onto every GPU, all-to-all (the block transpose), and an all-reduce of per-GPU
// partial results. Every result is checked on the host.
//
// Usage: cush_device_ops [n=1000003]

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "cush/cush.hpp"

namespace {

int failures = 0;

__global__ void fill(double* x, std::size_t n, double value) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = value;
}

void check(bool ok, const char* what) {
  std::printf("  %-58s %s\n", what, ok ? "ok" : "WRONG");
  failures += ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'003;
    const cush::DeviceSet gpus = cush::DeviceSet::all();
    std::vector<int> reversed(gpus.ids().rbegin(), gpus.ids().rend());
    std::vector<double> weights(gpus.size());
    std::iota(weights.begin(), weights.end(), 1.0);  // 1, 2, 3, ...: uneven on purpose
    std::printf("cush device operations on %zu GPU(s), %zu ints\n", gpus.size(), n);

    std::vector<int> host(n), back(n);
    std::iota(host.begin(), host.end(), 0);
    cush::Plan<int> rows(gpus, n);
    rows.scatter(host);

    // Redistribution: element g of `rows` to element g of a plan on the GPUs in reverse order,
    // weighted 1 : 2 : 3 ...
    cush::Plan<int> moved(cush::DeviceSet(reversed), n, cush::Distribution::weighted(weights));
    cush::copy(rows, moved);
    moved.gather(back);
    moved.wait();
    check(back == host, "copy onto other GPUs with another distribution");

    // All-gather: every segment of `rows` to every replica.
    cush::Plan<int> everywhere(gpus, n, cush::Distribution::replicated());
    cush::all_gather(rows, everywhere);
    // Each replica, copied into a one-GPU plan and gathered from there.
    cush::Plan<int> one(cush::DeviceSet{gpus[0]}, n);
    bool all = true;
    for (std::size_t pos = 0; pos < gpus.size(); ++pos) {
      cush::copy_segment(everywhere, pos, one, 0);
      one.gather(back);
      one.wait();
      all = all && back == host;
    }
    check(all, "all_gather: every replica holds the whole extent");

    // All-to-all: with p GPUs and m = p * p * k elements in equal segments, piece j of source
    // segment i (k elements) lands as piece i of destination segment j.
    const std::size_t p = gpus.size();
    const std::size_t k = 1000;
    const std::size_t m = p * p * k;
    std::vector<int> blocks(m), transposed(m);
    std::iota(blocks.begin(), blocks.end(), 0);
    cush::Plan<int> src(gpus, m), dst(gpus, m);
    src.scatter(blocks);
    cush::all_to_all(src, dst);
    dst.gather(transposed);
    dst.wait();
    bool moved_right = true;
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = 0; j < p; ++j)
        for (std::size_t e = 0; e < k; ++e)
          moved_right = moved_right && transposed[(j * p + i) * k + e] == blocks[(i * p + j) * k + e];
    check(moved_right, "all_to_all: the block transpose");

    // All-reduce: each GPU holds a partial result (here: its position + 1 in every element);
    // afterwards every replica holds the sum 1 + 2 + ... + p.
    cush::Plan<double> partial(gpus, 4096, cush::Distribution::replicated());
    partial.for_each([](cush::Segment<double> s) {
      fill<<<static_cast<unsigned>((s.size() + 255) / 256), 256, 0, s.stream()>>>(s.data(), s.size(),
                                                                                 static_cast<double>(s.pos() + 1));
    });
    cush::all_reduce(partial, cush::ReduceOp::sum);
    std::vector<double> sums(4096);
    partial.gather(sums);
    partial.wait();
    const double want = static_cast<double>(p * (p + 1) / 2);
    check(std::all_of(sums.begin(), sums.end(), [&](double x) { return x == want; }), "all_reduce: the sum over GPUs");
    return failures == 0 ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_device_ops: %s\n", e.what());
    return 1;
  }
}
