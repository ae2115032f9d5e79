// Case "scale" in bench_cases: the three variants of cases/scale, each on 1..all GPUs, end to end
// from pinned host memory.
//
// Names: case/scale/<variant>/<gpus>gpu/<n>   variant: single | multi_cuda | multi_cush
// Counters: gpus, n (problem size), GB/s (bytes moved in and out over the time).
// Time: wall clock around the whole call; the variants allocate, copy, compute, copy back and free
// inside, and return when done. Environment: CUSH_BENCH_MAX_N caps the sizes.

#include <cstdlib>
#include <string>
#include <utility>

#include "cush/cush.hpp"
#include "harness.hpp"
#include "scale.hpp"

namespace {

using Variant = void (*)(const float*, float*, std::size_t, const cases::Devices&);

std::size_t max_n() {
  return cush::detail::env::size("CUSH_BENCH_MAX_N");
}

// Pinned input and output of the largest size, shared by all benchmarks.
std::pair<float*, float*> buffers() {
  static cush::PinnedBuffer<float> in, out;
  if (in.size() == 0) {
    in = cush::PinnedBuffer<float>(max_n());
    out = cush::PinnedBuffer<float>(max_n());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 4093) * 0.5F;
  }
  return {in.data(), out.data()};
}

void run_scale(benchmark::State& state, Variant variant, int gpus, std::size_t n) {
  auto [in, out] = buffers();
  const cases::Devices devices = cases::Devices::first(gpus);
  variant(in, out, n, devices);  // warm-up: contexts, modules, peer access
  cush_bench::WallTimer timer;
  cush_bench::Throughput rate;
  for (auto _ : state) {
    timer.start();
    variant(in, out, n, devices);
    const double s = timer.stop();
    state.SetIterationTime(s);
    rate.add(s, 2.0 * static_cast<double>(n * sizeof(float)));
  }
  for (std::size_t i = 0; i < n; i += n / 7 + 1)  // spot check; the tests check every element
    if (out[i] != 3.0F * in[i] - 1.0F) state.SkipWithError("wrong result");
  rate.report(state);
  state.counters["gpus"] = gpus;
  state.counters["n"] = static_cast<double>(n);
}

}  // namespace

void register_scale() {
  const int available = cush_bench::gpus_for_rows();
  const std::pair<const char*, Variant> variants[] = {
      {"single", cases::scale::single}, {"multi_cuda", cases::scale::multi_cuda}, {"multi_cush", cases::scale::multi_cush}};
  for (const auto& [name, fn] : variants) {
    const int max_gpus = std::string(name) == "single" ? 1 : available;
    for (int gpus = 1; gpus <= max_gpus; ++gpus) {
      for (std::size_t n : {std::size_t{1} << 22, std::size_t{1} << 24, std::size_t{1} << 26, std::size_t{1} << 27,
                            std::size_t{1} << 28}) {
        if (n > max_n()) continue;
        const std::string label = std::string("case/scale/") + name + "/" + std::to_string(gpus) + "gpu/" + std::to_string(n);
        cush_bench::add_timed(label, [fn = fn, gpus, n](benchmark::State& s) { run_scale(s, fn, gpus, n); });
      }
    }
  }
}

