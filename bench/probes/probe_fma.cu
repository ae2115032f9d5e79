// The FP64 FMA ceiling of each GPU (bench/roofs.hpp's kernel), and what it caps: the 27-point
// advection update costs 27 FMAs, so no kernel evaluating all 27 terms updates more than
// FMA/s / 27 points a second (docs/results/temporal.md). Not a benchmark: it prints a table and
// exits. bench_cases times the same kernel (roof/fp64_fma/1gpu) beside the stencil rows.
//
//   usage: probe_fma [repetitions (default 20)]

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cush/error.hpp"
#include "roofs.hpp"

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  int devices = 0;
  CUSH_CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::printf("%-6s %-28s %12s %14s %14s\n", "device", "name", "clock MHz", "FP64 GFMA/s", "27-FMA Gpts/s");
  for (int d = 0; d < devices; ++d) {
    CUSH_CUDA_CHECK(cudaSetDevice(d));
    cudaDeviceProp p{};
    CUSH_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    int clock_khz = 0;
    CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d));
    double* sink = nullptr;
    CUSH_CUDA_CHECK(cudaMalloc(&sink, sizeof(double)));
    cudaEvent_t start, stop;
    CUSH_CUDA_CHECK(cudaEventCreate(&start));
    CUSH_CUDA_CHECK(cudaEventCreate(&stop));
    cush_bench::launch_fp64_fmas(sink, nullptr);  // warm-up
    std::vector<double> rates;
    for (int r = 0; r < repetitions; ++r) {
      CUSH_CUDA_CHECK(cudaEventRecord(start, nullptr));
      const double fmas = cush_bench::launch_fp64_fmas(sink, nullptr);
      CUSH_CUDA_CHECK(cudaEventRecord(stop, nullptr));
      CUSH_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUSH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      rates.push_back(fmas / (ms * 1e-3));
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    std::printf("%-6d %-28s %12d %14.1f %14.1f\n", d, p.name, clock_khz / 1000, median / 1e9, median / 27 / 1e9);
    CUSH_CUDA_CHECK(cudaEventDestroy(start));
    CUSH_CUDA_CHECK(cudaEventDestroy(stop));
    CUSH_CUDA_CHECK(cudaFree(sink));
  }
  return 0;
}
