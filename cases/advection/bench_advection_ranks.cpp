// Case "advection" across processes in bench_ranks (bench/bench_ranks.cpp; mpiexec, one process
// per GPU). Names (time: wall clock for kSteps steps on data already on the GPUs, warm-up
// excluded, the slowest rank's time after a barrier):
//   case/advection_ranks/<variant>/<p>proc/<n>          bulk-synchronous, n^3 points, FP64
//   case/advection_ranks_overlap/<variant>/<p>proc/<n>  the interior overlapping the exchange
// with <variant> rank_cush (cush::RankField, automatic: CUDA IPC between ranks of one host),
// rank_cush_nccl (the same, faces over NCCL) or rank_cuda (raw MPI + NCCL); compare with
// bench_cases' case/advection[_overlap]/multi_*/<p>gpu/<n> (one process driving p GPUs).
// Counters as bench_advection's (Gpts/s, GB/s) and gpus (every rank's GPUs). CUSH_BENCH_ADVECTION_MAX_N
// caps n (default 1024).

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/env.hpp"
#include "harness.hpp"
#include "rank_harness.hpp"
#include "ranks.hpp"

namespace {

namespace adv = cases::advection;
namespace ranks = cush_bench::ranks;
constexpr std::size_t kSteps = 10;

// Made and loaded once per row (kept across the row's repetitions; cush_bench::kept).
template <class V>
V* variant(const std::string& row, adv::Grid g, adv::Options o, cush::RankTransport t) {
  return cush_bench::kept<V>(row, [&] {
    const ranks::Setup& s = ranks::setup();
    const auto a = adv::coefficients({1.0, 0.7, 0.4}, {0.9, 0.9, 0.9});
    std::unique_ptr<V> v;
    if constexpr (std::is_same_v<V, adv::RankCush>) {
      v = std::make_unique<V>(*s.group, g, a, o, t);
    } else {
      v = std::make_unique<V>(s.group->comm(), s.device, g, a, o);
    }
    std::vector<double> field(s.group->rank() == 0 ? g.points() : 0);
    for (std::size_t i = 0; i < field.size(); ++i) field[i] = 0.5 + 1e-3 * static_cast<double>(i % 1000);
    v->upload(s.group->rank() == 0 ? field.data() : nullptr);
    v->run(kSteps);  // warm-up
    v->wait();
    return v;
  });
}

template <class V>
void steps(benchmark::State& state, const std::string& row, adv::Grid g, adv::Options o,
           cush::RankTransport t = cush::RankTransport::automatic) {
  V* v = variant<V>(row, g, o, t);
  double seconds = 0;
  for (auto _ : state) seconds += ranks::time_iteration(state, [&] {
    v->run(kSteps);
    v->wait();
  });
  const double updates = static_cast<double>(g.points()) * kSteps * static_cast<double>(state.iterations());
  state.counters["Gpts/s"] = updates / seconds / 1e9;
  state.counters["GB/s"] = updates * 16.0 / seconds / 1e9;
  state.counters["gpus"] = ranks::setup().group->size();
}

}  // namespace

void register_advection_ranks() {
  for (std::size_t n : {256U, 512U, 1024U}) {
    if (n > cush::detail::env::size("CUSH_BENCH_ADVECTION_MAX_N")) continue;
    const adv::Grid cube{n, n, n};
    const std::string on = ranks::on(n);
    for (const auto& [family, schedule] : {std::pair{"advection_ranks", adv::Schedule::bulk},
                                           std::pair{"advection_ranks_overlap", adv::Schedule::overlap}}) {
      const adv::Options o{schedule, 1};
      const std::string raw = std::string("case/") + family + "/rank_cuda" + on;
      const std::string cush = std::string("case/") + family + "/rank_cush" + on;
      if (ranks::setup().gpus_per_rank == 1)  // the raw twin takes one GPU a process
        ranks::add_row(raw, [raw, cube, o](benchmark::State& s) { steps<adv::RankCuda>(s, raw, cube, o); });
      ranks::add_row(cush, [cush, cube, o](benchmark::State& s) { steps<adv::RankCush>(s, cush, cube, o); });
      const std::string nccl = std::string("case/") + family + "/rank_cush_nccl" + on;
      ranks::add_row(nccl, [nccl, cube, o](benchmark::State& s) {
        steps<adv::RankCush>(s, nccl, cube, o, cush::RankTransport::nccl);
      });
    }
  }
}
