// The FP64 FMA and copy ceilings (roofs.hpp).

#include "roofs.hpp"

#include <benchmark/benchmark.h>

#include "cush/cush.hpp"
#include "harness.hpp"

namespace cush_bench {

namespace {

constexpr int kChains = 8;         // independent chains per thread: enough to cover the FMA latency
constexpr int kIterations = 4096;  // of all chains
constexpr int kThreads = 256;

// Each thread runs kChains chains x = x * b + c; the sum of all ends up in `sink` only if it is
// NaN, which it never is, so nothing is stored but the compiler cannot drop the work.
__global__ void __launch_bounds__(kThreads) fma_chains(double* sink, double b, double c) {
  double x[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) x[k] = threadIdx.x + k;
  for (int i = 0; i < kIterations; ++i)
#pragma unroll
    for (int k = 0; k < kChains; ++k) x[k] = fma(x[k], b, c);
  double sum = 0;
#pragma unroll
  for (int k = 0; k < kChains; ++k) sum += x[k];
  if (sum != sum) *sink = sum;
}

int blocks_for(int device) {
  int sms = 0, per_sm = 0;
  CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUSH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fma_chains, kThreads, 0));
  return 8 * sms * per_sm;  // eight full waves
}

void fp64_fma(benchmark::State& state) {
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  cush::DeviceBuffer sink(0, sizeof(double));
  cush::Stream stream(0);
  double fmas = launch_fp64_fmas(static_cast<double*>(sink.data()), stream.get());  // warm-up
  stream.synchronize();
  Throughput rate;
  WallTimer timer;
  for (auto _ : state) {
    timer.start();
    for (int r = 0; r < 10; ++r) fmas = launch_fp64_fmas(static_cast<double*>(sink.data()), stream.get());
    stream.synchronize();
    const double s = timer.stop();
    state.SetIterationTime(s);
    rate.add(s, 10.0 * fmas);
  }
  rate.report(state, "GFMA/s");
}

void copy(benchmark::State& state, std::size_t bytes) {
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  cush::DeviceBuffer a(0, bytes), b(0, bytes);
  cush::Stream stream(0);
  CUSH_CUDA_CHECK(cudaMemsetAsync(a.data(), 1, bytes, stream.get()));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));  // warm-up
  stream.synchronize();
  Throughput rate;
  WallTimer timer;
  for (auto _ : state) {
    timer.start();
    for (int r = 0; r < 10; ++r)
      CUSH_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    stream.synchronize();
    const double s = timer.stop();
    state.SetIterationTime(s);
    rate.add(s, 10.0 * 2.0 * static_cast<double>(bytes));
  }
  rate.report(state);
}

}  // namespace

double launch_fp64_fmas(double* sink, cudaStream_t stream) {
  int device = 0;
  CUSH_CUDA_CHECK(cudaGetDevice(&device));
  const int blocks = blocks_for(device);
  fma_chains<<<blocks, kThreads, 0, stream>>>(sink, 1.0 - 1e-9, 1e-9);
  CUSH_CUDA_CHECK(cudaGetLastError());
  return static_cast<double>(blocks) * kThreads * kIterations * kChains;
}

void register_roofs() {
  if (gpus_for_rows() == 0) return;
  add_timed("roof/fp64_fma/1gpu", [](benchmark::State& s) { fp64_fma(s); });
  add_timed("roof/copy/1gpu/2048", [](benchmark::State& s) { copy(s, std::size_t{2048} << 20); });
}

}  // namespace cush_bench
