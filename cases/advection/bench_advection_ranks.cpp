// Case "advection" across processes: bench_advection_ranks, run with mpiexec, one process per GPU:
//   mpiexec -n 4 bench_advection_ranks [--benchmark_* flags]
// Names (time: wall clock for kSteps steps on data already on the GPUs, warm-up excluded, the
// slowest rank's time; every rank starts each iteration after a barrier):
//   case/advection_ranks/<variant>/<p>proc/<n>          bulk-synchronous, n^3 points, FP64
//   case/advection_ranks_overlap/<variant>/<p>proc/<n>  the interior overlapping the exchange
// with <variant> rank_cush (cush::RankField) or rank_cuda (raw MPI + NCCL). Counters as
// bench_advection's (Gpts/s, GB/s), and gpus (the ranks). The rows run a fixed number of
// iterations (kIterations, CUSH_BENCH_RANK_ITERATIONS) so that every rank runs the same count;
// rank 0 prints and writes the results. CUSH_BENCH_ADVECTION_MAX_N caps n (default 1024).

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/env.hpp"
#include "cush/device_set.hpp"
#include "cush/virtual_gpus.hpp"
#include "harness.hpp"
#include "ranks.hpp"

namespace {

namespace adv = cases::advection;
constexpr std::size_t kSteps = 10;

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

struct Setup {
  const cush::ProcessGroup* group = nullptr;
  int device = 0;  // this rank's GPU (a CUDA ordinal)
};
Setup setup;

// Made and loaded once per row (kept across the row's repetitions; cush_bench::kept).
template <class V>
V* variant(const std::string& row, adv::Grid g, adv::Options o) {
  return cush_bench::kept<V>(row, [&] {
    const auto a = adv::coefficients({1.0, 0.7, 0.4}, {0.9, 0.9, 0.9});
    std::unique_ptr<V> v;
    if constexpr (std::is_same_v<V, adv::RankCush>) {
      v = std::make_unique<V>(*setup.group, g, a, o);
    } else {
      v = std::make_unique<V>(setup.group->comm(), setup.device, g, a, o);
    }
    std::vector<double> field(setup.group->rank() == 0 ? g.points() : 0);
    for (std::size_t i = 0; i < field.size(); ++i) field[i] = 0.5 + 1e-3 * static_cast<double>(i % 1000);
    v->upload(setup.group->rank() == 0 ? field.data() : nullptr);
    v->run(kSteps);  // warm-up
    v->wait();
    return v;
  });
}

template <class V>
void steps(benchmark::State& state, const std::string& row, adv::Grid g, adv::Options o) {
  V* v = variant<V>(row, g, o);
  const MPI_Comm comm = setup.group->comm();
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    MPI_Barrier(comm);
    timer.start();
    v->run(kSteps);
    v->wait();
    double mine = timer.stop(), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    state.SetIterationTime(slowest);
    seconds += slowest;
  }
  const double updates = static_cast<double>(g.points()) * kSteps * static_cast<double>(state.iterations());
  state.counters["Gpts/s"] = updates / seconds / 1e9;
  state.counters["GB/s"] = updates * 16.0 / seconds / 1e9;
  state.counters["gpus"] = setup.group->size();
}

void register_rows() {
  const int ranks = setup.group->size();
  for (std::size_t n : {256U, 512U, 1024U}) {
    if (n > cush::detail::env::size("CUSH_BENCH_ADVECTION_MAX_N")) continue;
    const adv::Grid cube{n, n, n};
    const std::string on = "/" + std::to_string(ranks) + "proc/" + std::to_string(n);
    for (const auto& [family, schedule] : {std::pair{"advection_ranks", adv::Schedule::bulk},
                                           std::pair{"advection_ranks_overlap", adv::Schedule::overlap}}) {
      const adv::Options o{schedule, 1};
      const std::string raw = std::string("case/") + family + "/rank_cuda" + on;
      const std::string cush = std::string("case/") + family + "/rank_cush" + on;
      for (const std::string& row : {raw, cush}) {
        const bool is_raw = row == raw;
        benchmark::RegisterBenchmark(row.c_str(), [row, cube, o, is_raw](benchmark::State& s) {
          if (is_raw) {
            steps<adv::RankCuda>(s, row, cube, o);
          } else {
            steps<adv::RankCush>(s, row, cube, o);
          }
        })->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(iterations());
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
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
    std::fprintf(stderr, "bench_advection_ranks: %s\n", e.what());
    rc = 1;
  }
  MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rc == 0 && fewest == 0) {
    if (rank == 0) std::printf("bench_advection_ranks: a rank has no GPU; nothing to measure.\n");
  } else if (rc == 0) {
    const int local = cush::ProcessGroup::local_rank(MPI_COMM_WORLD);
    const cush::ProcessGroup group(MPI_COMM_WORLD, {local % gpus});
    setup = Setup{&group, cush::physical_device(local % gpus)};
    if (rank == 0) cush_bench::add_context();
    register_rows();
    Silent silent;
    if (rank == 0) {
      benchmark::RunSpecifiedBenchmarks();
    } else {
      benchmark::RunSpecifiedBenchmarks(&silent);
    }
    cush_bench::forget_kept();
  }
  benchmark::Shutdown();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
