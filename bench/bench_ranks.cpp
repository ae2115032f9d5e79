// The case studies across processes, one MPI process per GPU: run with mpiexec, e.g.
//   mpiexec -n 4 bench_ranks --benchmark_filter=/4proc/
// Rows: cases/advection/bench_advection_ranks.cpp, cases/lbm/bench_lbm_ranks.cpp. Each row runs a
// fixed number of iterations (CUSH_BENCH_RANK_ITERATIONS, default 10), timed as the slowest
// rank's wall clock after a barrier; Google Benchmark appends /iterations:N/manual_time (and
// /repeats:R) to the names, so a filter must not end in '$'. CUSH_BENCH_RANK_GPUS=k gives each
// process k GPUs (rows /<p>proc<k>gpu/, cush only): `CUSH_BENCH_RANK_GPUS=4 mpiexec -n 1` runs the
// fields over ranks as one process on 4 GPUs, to tell the cost of crossing processes apart.

#include "rank_harness.hpp"

void register_advection_ranks();
void register_lbm_ranks();

int main(int argc, char** argv) {
  return cush_bench::ranks::run(argc, argv, "bench_ranks", [] {
    register_advection_ranks();
    register_lbm_ranks();
  });
}
