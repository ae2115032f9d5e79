// Case "rbffd" in bench_cases: the three variants of cases/rbffd on resident data, the SpMV
// kernels against the same run's device-to-device copy, and the halo exchange alone.
//
// Names (time: wall clock for kSteps RK4 steps, or kSteps exchanges, on data already on the GPUs):
//   case/rbffd/<variant>/<g>gpu/<log2 N>          bulk (exchange, then every row), n = 31
//   case/rbffd_overlap/<variant>/<g>gpu/<log2 N>  raw and cush: interior rows during the exchange
//   case/rbffd_split/<variant>/<g>gpu/<log2 N>    raw and cush: the boundary rows' owned-column
//                                                 entries during the exchange too (Schedule::split)
//   case/rbffd_graph/<variant>/<g>gpu/<log2 N>    overlapped, each step captured into a CUDA graph
//                                                 and replayed (Options::graph), 2 GPUs or more
//   case/rbffd_weak/<variant>/<g>gpu/<log2 N>     bulk, 2^22 nodes per GPU (N = g 2^22)
//   spmv/rbffd/<impl>/1gpu/<log2 N>               y = A x alone, kSteps times: ell (the stage kernel's
//                                                 product), csr_thread (the seed's), csr_warp,
//                                                 cusparse_csr_alg1, cusparse_csr_alg2, cusparse_sell;
//                                                 each checked against the host once; d2d_copy moves
//                                                 the same bytes with cudaMemcpyAsync (the roofline)
//   exchange/rbffd/<impl>/<g>gpu/<log2 N>         the stage input's exchange alone: raw, or cush by
//                                                 automatic, staged, host_staging, nccl
// The matrix: the kNN stencils (n = 31) of N Fibonacci nodes, the real pattern, with weights that
// are not the RBF-FD ones (those take an LU solve per node: minutes at 2^24) but cost the same to
// apply: w = (-1 centre, 1 / 30 the others) / dt, a graph Laplacian that RK4 keeps bounded.
// Counters: Gns/s (node-stages: rows times stages, or rows times products), GB/s at 12 n + 40 =
// 412 bytes per node-stage (the stage: values, columns, x, u, acc and the next input) or 12 n + 16
// = 388 per product (the SpMV), the copy's bytes read and written; % of the d2d_copy row is for the
// report (same run). Environment: CUSH_BENCH_RBFFD_MAX_LOG2 caps N (default 24).

#include <cusparse.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "harness.hpp"
#include "nodes.hpp"
#include "rbffd.hpp"
#include "reference.hpp"
#include "stencils.hpp"

namespace {

namespace rb = cases::rbffd;
constexpr std::size_t kSteps = 10;
constexpr std::size_t kStencil = 31;
constexpr double kStageBytes = 12.0 * kStencil + 40;
constexpr double kSpmvBytes = 12.0 * kStencil + 16;

std::size_t max_log2() {
  const char* v = std::getenv("CUSH_BENCH_RBFFD_MAX_LOG2");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 24;
}

struct Setup {
  rb::Matrix a;
  double dt = 0;
  std::vector<double> u0;
};

// The matrix of 2^lg nodes (the last one made is kept: 2^24 nodes take seconds and gigabytes).
const Setup& setup(std::size_t lg) {
  static std::size_t made = 0;
  static std::unique_ptr<Setup> s;
  if (s && made == lg) return *s;
  s.reset();
  s = std::make_unique<Setup>();
  const std::size_t n = std::size_t{1} << lg;
  const std::vector<rb::Point> nodes = rb::fibonacci_nodes(n);
  rb::Stencils st = rb::nearest_neighbours(nodes, kStencil);
  s->dt = rb::time_step(n);
  s->a.row_ptr = std::move(st.row_ptr);
  s->a.cols = std::move(st.cols);
  s->a.values.resize(s->a.cols.size());
  for (std::size_t i = 0; i < n; ++i)
    for (auto e = static_cast<std::size_t>(s->a.row_ptr[i]); e < static_cast<std::size_t>(s->a.row_ptr[i + 1]); ++e)
      s->a.values[e] = (s->a.cols[e] == static_cast<std::int64_t>(i) ? -1.0 : 1.0 / (kStencil - 1)) / s->dt;
  s->u0.resize(n);
  for (std::size_t i = 0; i < n; ++i) s->u0[i] = rb::y73(nodes[i]);
  made = lg;
  return *s;
}

template <class V>
void steps(benchmark::State& state, std::size_t lg, int gpus, rb::Options o) {
  const std::string key = std::string(typeid(V).name()) + "/" + std::to_string(lg) + "/" + std::to_string(gpus) + "/" +
                          std::to_string(static_cast<int>(o.schedule)) + (o.graph ? "/graph" : "");
  V* v = cush_bench::kept<V>(key, [&] {
    const Setup& s = setup(lg);
    auto made = std::make_unique<V>(rb::Problem{&s.a, s.dt}, cases::Devices::first(gpus), o);
    made->upload(s.u0.data());
    return made;
  });
  v->run(1);  // warm-up
  v->wait();
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    v->run(kSteps);
    v->wait();
    const double t = timer.stop();
    state.SetIterationTime(t);
    seconds += t;
  }
  const double node_stages = static_cast<double>(std::size_t{1} << lg) * 4 * kSteps * static_cast<double>(state.iterations());
  state.counters["Gns/s"] = node_stages / seconds / 1e9;
  state.counters["GB/s"] = node_stages * kStageBytes / seconds / 1e9;
  state.counters["gpus"] = gpus;
}

template <class V>
void exchanges(benchmark::State& state, std::size_t lg, int gpus, rb::Options o) {
  const std::string key = std::string("x") + typeid(V).name() + "/" + std::to_string(lg) + "/" + std::to_string(gpus) +
                          "/" + cush::to_string(o.transport);
  V* v = cush_bench::kept<V>(key, [&] {
    const Setup& s = setup(lg);
    auto made = std::make_unique<V>(rb::Problem{&s.a, s.dt}, cases::Devices::first(gpus), o);
    made->upload(s.u0.data());
    return made;
  });
  v->exchange();  // warm-up
  v->wait();
  cush_bench::WallTimer timer;
  for (auto _ : state) {
    timer.start();
    for (std::size_t k = 0; k < kSteps; ++k) v->exchange();
    v->wait();
    state.SetIterationTime(timer.stop());
  }
  state.counters["gpus"] = gpus;
}

}  // namespace

void register_rbffd_spmv();  // bench_rbffd_spmv.cpp

void register_rbffd() {
  const int available = cush_bench::gpus_for_rows();
  for (std::size_t lg : {20U, 22U, 24U}) {
    if (lg > max_log2()) continue;
    const std::string size = "/" + std::to_string(lg);
    cush_bench::add_timed("case/rbffd/single/1gpu" + size, [lg](benchmark::State& s) { steps<rb::Single>(s, lg, 1, {}); }, true);
    for (int g = 1; g <= available; ++g) {
      const std::string on = "/" + std::to_string(g) + "gpu" + size;
      for (const auto& [family, schedule] : {std::pair{"rbffd", rb::Schedule::bulk}, std::pair{"rbffd_overlap", rb::Schedule::overlap},
                                             std::pair{"rbffd_split", rb::Schedule::split}}) {
        const rb::Options o{schedule};
        cush_bench::add_timed(std::string("case/") + family + "/multi_cuda" + on, [lg, g, o](benchmark::State& s) { steps<rb::MultiCuda>(s, lg, g, o); }, true);
        cush_bench::add_timed(std::string("case/") + family + "/multi_cush" + on, [lg, g, o](benchmark::State& s) { steps<rb::MultiCush>(s, lg, g, o); }, true);
      }
      if (g < 2) continue;
      const rb::Options captured{rb::Schedule::overlap, cush::GraphTransport::automatic, true};
      cush_bench::add_timed("case/rbffd_graph/multi_cuda" + on, [lg, g, captured](benchmark::State& s) { steps<rb::MultiCuda>(s, lg, g, captured); }, true);
      cush_bench::add_timed("case/rbffd_graph/multi_cush" + on, [lg, g, captured](benchmark::State& s) { steps<rb::MultiCush>(s, lg, g, captured); }, true);
      cush_bench::add_timed("exchange/rbffd/raw" + on, [lg, g](benchmark::State& s) { exchanges<rb::MultiCuda>(s, lg, g, {}); }, true);
      for (cush::GraphTransport t : {cush::GraphTransport::automatic, cush::GraphTransport::staged,
                                     cush::GraphTransport::host_staging, cush::GraphTransport::nccl})
        cush_bench::add_timed(std::string("exchange/rbffd/") + cush::to_string(t) + on,
                              [lg, g, t](benchmark::State& s) { exchanges<rb::MultiCush>(s, lg, g, {rb::Schedule::bulk, t}); }, true);
    }
  }
  for (int g = 1; g <= available; ++g) {
    const std::size_t lg = 22 + (g == 1 ? 0 : g == 2 ? 1 : g <= 4 ? 2 : 3);
    if (lg > max_log2() + 2 || (g & (g - 1)) != 0) continue;  // powers of two: N = g 2^22
    const std::string on = "/" + std::to_string(g) + "gpu/" + std::to_string(lg);
    if (g == 1) cush_bench::add_timed("case/rbffd_weak/single" + on, [lg](benchmark::State& s) { steps<rb::Single>(s, lg, 1, {}); }, true);
    cush_bench::add_timed("case/rbffd_weak/multi_cuda" + on, [lg, g](benchmark::State& s) { steps<rb::MultiCuda>(s, lg, g, {}); }, true);
    cush_bench::add_timed("case/rbffd_weak/multi_cush" + on, [lg, g](benchmark::State& s) { steps<rb::MultiCush>(s, lg, g, {}); }, true);
  }
  register_rbffd_spmv();
}
