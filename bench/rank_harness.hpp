#pragma once
// Shared by the benchmark rows that run over MPI ranks, one process per GPU (bench_ranks): the
// process group of the run, the rows' registration with a fixed iteration count (every rank must
// run as many iterations as the others: Google Benchmark's own choice could differ between
// ranks), the time of an iteration as the slowest rank's, and the main() that prints on rank 0.

#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "cush/process_group.hpp"

namespace cush_bench::ranks {

/// The run's group (every rank, one GPU each: its local rank modulo the GPUs it sees) and this
/// rank's GPU as a CUDA ordinal.
struct Setup {
  const cush::ProcessGroup* group = nullptr;
  int device = 0;
};
[[nodiscard]] const Setup& setup();

/// Registers `f` under `name`: manual time in milliseconds, CUSH_BENCH_RANK_ITERATIONS (default
/// 10) iterations.
void add_row(const std::string& name, std::function<void(benchmark::State&)> f);

/// One iteration's time: every rank waits at a barrier, runs `work` (which ends when this rank's
/// GPU work has), and the slowest rank's wall-clock seconds become the iteration's time on every
/// rank. Returns it.
double time_iteration(benchmark::State& state, const std::function<void()>& work);

/// The main() of an MPI benchmark binary: MPI_Init, the group, `register_rows`, the rows the
/// command line selects (rank 0 prints and writes --benchmark_out; the others report nothing),
/// MPI_Finalize. Says so and exits 0 where a rank has no GPU.
int run(int argc, char** argv, const char* program, void (*register_rows)());

}  // namespace cush_bench::ranks
