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

/// The run's group and this rank's first GPU as a CUDA ordinal. Every rank takes one GPU (its
/// local rank modulo the GPUs it sees), or CUSH_BENCH_RANK_GPUS = k of them (local rank r: GPUs
/// r k to r k + k - 1; an error where the host has fewer): `mpiexec -n 1` with k = 4 runs the
/// rows over ranks as one process driving 4 GPUs.
struct Setup {
  const cush::ProcessGroup* group = nullptr;
  int device = 0;
  int gpus_per_rank = 1;
};
[[nodiscard]] const Setup& setup();

/// "/<p>proc/<n>" for rows of p processes of one GPU each, "/<p>proc<k>gpu/<n>" with k GPUs a
/// process (rows that summaries/ranks.py leaves out: they are checks, not the figure).
[[nodiscard]] std::string on(std::size_t n);

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
