#include "rank_harness.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/virtual_gpus.hpp"
#include "harness.hpp"

namespace cush_bench::ranks {

namespace {

Setup the_setup;

// CUSH_BENCH_RANK_GPUS: the GPUs each rank takes (default 1).
int gpus_per_rank() {
  const char* text = std::getenv("CUSH_BENCH_RANK_GPUS");
  const int k = text != nullptr ? std::atoi(text) : 1;
  return k > 0 ? k : 1;
}

int iterations() {
  const char* text = std::getenv("CUSH_BENCH_RANK_ITERATIONS");
  const int n = text != nullptr ? std::atoi(text) : 10;
  return n > 0 ? n : 10;
}

// Reports nothing: the ranks other than 0 run the rows but leave the printing to rank 0.
class Silent : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

const Setup& setup() { return the_setup; }

std::string on(std::size_t n) {
  const std::string p = std::to_string(the_setup.group->size()) + "proc";
  const int k = the_setup.gpus_per_rank;
  return "/" + p + (k == 1 ? "" : std::to_string(k) + "gpu") + "/" + std::to_string(n);
}

void add_row(const std::string& name, std::function<void(benchmark::State&)> f) {
  benchmark::RegisterBenchmark(name.c_str(), [f, name](benchmark::State& state) {
    entering_row(name.c_str());
    f(state);
  })->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(iterations());
}

double time_iteration(benchmark::State& state, const std::function<void()>& work) {
  const MPI_Comm comm = the_setup.group->comm();
  MPI_Barrier(comm);
  const auto t0 = std::chrono::steady_clock::now();
  work();
  const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  state.SetIterationTime(slowest);
  return slowest;
}

int run(int argc, char** argv, const char* program, void (*register_rows)()) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only rank 0 writes the output file.
  std::vector<char*> args(argv, argv + argc);
  if (rank != 0) std::erase_if(args, [](const char* a) { return std::string(a).rfind("--benchmark_out", 0) == 0; });
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  int rc = benchmark::ReportUnrecognizedArguments(count, args.data()) ? 2 : 0;
  int gpus = 0, fewest = 0;
  try {
    gpus = rc == 0 ? cush::DeviceSet::available() : 0;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    rc = 1;
  }
  MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const int k = gpus_per_rank();
  const int local = cush::ProcessGroup::local_rank(MPI_COMM_WORLD);
  // Local rank r takes GPU r mod the count, or GPUs r k to r k + k - 1, which must exist. The
  // ranks decide together: a problem on one stops all.
  if (rc == 0 && fewest > 0 && k > 1 && (local + 1) * k > gpus) {
    std::fprintf(stderr, "%s: CUSH_BENCH_RANK_GPUS=%d: this host has %d GPUs, fewer than its ranks x %d\n", program, k, gpus, k);
    rc = 1;
  }
  int ok = rc == 0 ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_ok == 0) {
    rc = rc == 0 ? 1 : rc;
  } else if (fewest == 0) {
    if (rank == 0) std::printf("%s: a rank has no GPU; nothing to measure.\n", program);
  } else {
    std::vector<int> mine;
    for (int j = 0; j < k; ++j) mine.push_back(k == 1 ? local % gpus : local * k + j);
    const cush::ProcessGroup group(MPI_COMM_WORLD, mine);
    the_setup = Setup{&group, cush::physical_device(mine.front()), k};
    if (rank == 0) add_context();
    register_rows();
    Silent silent;
    if (rank == 0) {
      benchmark::RunSpecifiedBenchmarks();
    } else {
      benchmark::RunSpecifiedBenchmarks(&silent);
    }
    forget_kept();  // while the group and CUDA are still up
    the_setup = Setup{};
  }
  benchmark::Shutdown();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

}  // namespace cush_bench::ranks
