// Virtual GPUs: a program written for several GPUs, run on one. The process asks for logical
// GPUs before cush touches a device (or sets CUSH_VIRTUAL_GPUS); plans, operations and fields
// then spread over them as over real GPUs, and every result is the one several GPUs would give.
//
// Usage: cush_virtual_gpus [logical GPUs=4]

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <set>
#include <vector>

#include "cush/cush.hpp"

int main(int argc, char** argv) {
  try {
    const int count = argc > 1 ? std::atoi(argv[1]) : 4;
    cush::use_virtual_gpus(count);  // round robin over the GPUs there are
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const cush::DeviceSet gpus = cush::DeviceSet::all();
    std::printf("%s\n%s", cush::describe_devices().c_str(), gpus.topology().describe().c_str());

    // An all-to-all among the logical GPUs: with p of them and equal segments of p * k elements,
    // piece j of source segment i lands as piece i of destination segment j.
    const std::size_t p = gpus.size();
    const std::size_t k = 257;
    std::vector<int> in(p * p * k), out(in.size());
    std::iota(in.begin(), in.end(), 0);
    cush::Plan<int> rows(gpus, in.size());
    cush::Plan<int> cols = cush::Plan<int>::alike(rows, in.size());
    rows.scatter(in);
    cush::all_to_all(rows, cols);  // transport: peer (NCCL cannot take one GPU twice)
    cols.gather(out);
    cols.wait();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = 0; j < p; ++j)
        for (std::size_t e = 0; e < k; ++e) wrong += out[(j * p + i) * k + e] != in[(i * p + j) * k + e] ? 1 : 0;
    const std::vector<int> physical = gpus.physical_ids();
    std::printf("all_to_all over %zu logical GPUs on %zu physical: %s\n", p,
                std::set<int>(physical.begin(), physical.end()).size(), wrong == 0 ? "ok" : "WRONG");
    return wrong == 0 ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_virtual_gpus: %s\n", e.what());
    return 1;
  }
}
