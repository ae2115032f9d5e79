#pragma once
// Shared by the GPU benchmarks: multi-device event timing, GB/s counters, run context.

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/env.hpp"  // the CUSH_BENCH_* variables
#include "cush/stream.hpp"

namespace cush_bench {

/// Times work spread over several devices with CUDA events. start() waits until every device is
/// idle, then records a start event in each stream (a common point); stop() records a stop event
/// in each stream and returns the longest start-to-stop interval: the time until the slowest
/// device finished.
class EventTimer {
 public:
  explicit EventTimer(std::span<const int> devices);
  void start(std::span<const cudaStream_t> streams);
  /// Seconds.
  double stop(std::span<const cudaStream_t> streams);

 private:
  std::vector<int> devices_;
  std::vector<cush::Event> start_;
  std::vector<cush::Event> stop_;
};

/// Wall-clock timing for work that blocks the host (registration, synchronous copies).
class WallTimer {
 public:
  void start() { t0_ = std::chrono::steady_clock::now(); }
  double stop() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_;
};

/// Runs the benchmark loop of a row timed by the wall clock: per iteration `body()` (which must
/// return when its work is done, e.g. run then wait), its time set as the iteration's manual time.
/// Returns the seconds of all iterations, for the row's rate counters.
template <class Body>
double timed_iterations(benchmark::State& state, Body&& body) {
  WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    body();
    const double s = timer.stop();
    state.SetIterationTime(s);
    seconds += s;
  }
  return seconds;
}

/// Accumulates timed iterations and reports a rate from the manual time, not from CPU time (which
/// is what Google Benchmark's rate counters divide by). The unit scale makes the field's units:
/// 1e9 for GB/s (bytes), GFLOP/s (flops) and GF (seed 000's 53 flops per point-update), 1e6 for
/// MLUPS (lattice updates).
class Throughput {
 public:
  explicit Throughput(double unit_scale = 1e9) : scale_(unit_scale) {}
  void add(double seconds, double amount) {
    seconds_ += seconds;
    amount_ += amount;
  }
  void report(benchmark::State& state, const char* name = "GB/s") const {
    state.counters[name] = seconds_ > 0 ? amount_ / seconds_ / scale_ : 0.0;
  }

 private:
  double scale_;
  double seconds_ = 0;
  double amount_ = 0;
};

/// Minimum time per benchmark, seconds: CUSH_BENCH_MIN_TIME or `fallback`. The report runs the
/// benchmarks with repetitions and a short minimum time.
double min_time(double fallback = 0.3);

/// Adds GPU model and count, driver, CUDA runtime and NCCL versions to the JSON context.
void add_context();

void forget_kept();

/// Names the row now running (add_timed's rows say so): a crash prints it with the stack (run()).
/// `name` must outlive the row.
void entering_row(const char* name);

/// Registers `f` (a callable taking benchmark::State&) under `name` with manual time in
/// milliseconds and min_time(): the settings of the case benchmarks. A row that does not keep its
/// set-up (`keeps`, kept() below) first frees what an earlier row kept, so that no row runs beside
/// another's buffers.
template <class F>
void add_timed(const std::string& name, F f, bool keeps = false) {
  auto row = [f, keeps, name](benchmark::State& state) {
    entering_row(name.c_str());
    if (!keeps) forget_kept();
    f(state);
  };
  benchmark::RegisterBenchmark(name.c_str(), row)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time());
}

/// The GPUs rows may use, in ordinal order (empty without GPUs). With virtual GPUs, only device 0:
/// several logical devices on one GPU cannot show what several GPUs do (link speed, concurrency),
/// so benchmarks report no multi-GPU row on them.
std::vector<int> all_devices();
/// all_devices().size(): the most GPUs a row may use.
int gpus_for_rows();

/// Synchronizes every device of `devices` (throws on a failed one).
void synchronize(std::span<const int> devices);

/// What a benchmark row sets up (plans, buffers, data loaded onto the GPUs), kept for the row's
/// next call. Google Benchmark calls a row's function several times: while it grows the iteration
/// count to the minimum time, then once per repetition; a row whose set-up takes seconds (the FFT
/// at 2^28: its plans and 2 GiB loaded) spent most of its time setting up. The thing kept under
/// `key` is returned; for another key the kept one is freed first (so that `make` sees the GPUs'
/// memory without it), then `make` runs; a null from `make` is returned and nothing is kept.
/// run() frees the last one before it returns.
template <class T, class Make>
T* kept(const std::string& key, Make&& make);

/// Frees what kept() holds (run() and the rows of add_timed that keep nothing call it).
void forget_kept();

/// The main() of every benchmark binary: says so and exits 0 without GPUs; otherwise adds the
/// context (with virtual GPUs: "virtual_gpus", and it says that multi-GPU rows are left out),
/// calls `register_benchmarks` and runs what the command line selects.
int run(int argc, char** argv, const char* program, void (*register_benchmarks)());

namespace detail {
struct Kept {
  std::string key;
  std::shared_ptr<void> thing;
};
Kept& kept_slot();
}  // namespace detail

template <class T, class Make>
T* kept(const std::string& key, Make&& make) {
  detail::Kept& slot = detail::kept_slot();
  if (slot.thing && slot.key == key) return static_cast<T*>(slot.thing.get());
  slot.thing.reset();
  slot.key.clear();
  std::unique_ptr<T> made = make();
  if (!made) return nullptr;
  slot.thing = std::shared_ptr<T>(std::move(made));
  slot.key = key;
  return static_cast<T*>(slot.thing.get());
}

}  // namespace cush_bench
