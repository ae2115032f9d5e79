// Case "advection" in bench_cases: the three variants of cases/advection on resident data.
//
// Names (time: wall clock for kSteps steps on data already on the GPUs, warm-up excluded):
//   case/advection/<variant>/<g>gpu/<n>          bulk-synchronous, n^3 points, FP64
//   case/advection_overlap/<variant>/<g>gpu/<n>  raw and cush with the interior overlapping the exchange
//   case/advection_weak/<variant>/<g>gpu/<nz>    bulk, 512 x 512 x nz with nz = 256 g: the work per
//                                                GPU fixed (the report's weak-scaling plot pairs
//                                                1 GPU at nz with g GPUs at g nz)
//   deep/advection/<depth>/<g>gpu/<n>            cush with `depth` ghost layers, exchanged every depth steps
//   exchange/advection/<g>gpu/<n>                the cush exchange alone (kSteps of them): the time an
//                                                overlapped step can hide (seed 003's measure)
//   temporal/advection/<T>/single/1gpu/<n>       the single reference with T steps per fused launch
//                                                (T ghost layers filled every T steps); T = 1 is the
//                                                one-step kernel
//   temporal/advection_overlap/<T>/<variant>/<g>gpu/<n>  raw and cush, T steps fused per exchange of T
//                                                layers, the interior overlapping the exchange
//   temporal/advection_factorized/<T>/single/1gpu/<n>, temporal/advection_factorized_overlap/<T>/...
//                                                the same with Options::factorized (three 3-point
//                                                passes an update instead of 27 terms)
// The same run's roof/fp64_fma and roof/copy rows (bench/roofs.hpp) give the ceilings.
// Counters: GF (seed 000's 53 flops per point update), Gpts/s (point updates), GB/s (16 bytes
// per point update: one read and one write, the roofline's count). Environment:
// CUSH_BENCH_ADVECTION_MAX_N caps n (default 1024).

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "advection.hpp"
#include "kernels.hpp"
#include "cush/cush.hpp"
#include "harness.hpp"

namespace {

namespace adv = cases::advection;
constexpr std::size_t kSteps = 12;  // a multiple of every fused T (1 .. 4)

std::size_t max_n() {
  return cush::detail::env::size("CUSH_BENCH_ADVECTION_MAX_N");
}

// The initial field on a grid, made once per grid. adv::initial() is a product of one function
// per axis, so tables per axis make 1024^3 points in about a second.
const std::vector<double>& initial_field(adv::Grid g) {
  static adv::Grid made_for{};
  static std::vector<double> field;
  if (made_for.nx == g.nx && made_for.ny == g.ny && made_for.nz == g.nz) return field;
  constexpr double two_pi = 6.283185307179586;
  auto table = [&](std::size_t n, bool cosine) {
    std::vector<double> t(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = two_pi * static_cast<double>(i) / static_cast<double>(n);
      t[i] = cosine ? std::cos(x) : std::sin(x);
    }
    return t;
  };
  const std::vector<double> sx = table(g.nx, false), cy = table(g.ny, true), sz = table(g.nz, false);
  field.assign(g.points(), 0.0);
  for (std::size_t k = 0; k < g.nz; ++k)
    for (std::size_t j = 0; j < g.ny; ++j)
      for (std::size_t i = 0; i < g.nx; ++i) field[i + g.nx * (j + g.ny * k)] = sx[i] * cy[j] * sz[k] + 0.5;
  made_for = g;
  return field;
}

template <class V>
void steps(benchmark::State& state, adv::Grid g, int gpus, adv::Options o) {
  const auto a = adv::coefficients({1.0, 0.7, 0.4}, {0.9, 0.9, 0.9});
  V v(g, a, cases::Devices::first(gpus), o);
  v.upload(initial_field(g).data());
  v.run(kSteps);  // warm-up
  v.wait();
  const double seconds = cush_bench::timed_iterations(state, [&] {
    v.run(kSteps);
    v.wait();
  });
  const double updates = static_cast<double>(g.points()) * kSteps * static_cast<double>(state.iterations());
  state.counters["GF"] = updates * adv::flops_per_point / seconds / 1e9;
  state.counters["Gpts/s"] = updates / seconds / 1e9;
  state.counters["GB/s"] = updates * 16.0 / seconds / 1e9;
  state.counters["gpus"] = gpus;
}

void exchange_only(benchmark::State& state, std::size_t n, int gpus) {
  cush::GridOptions o;
  o.periodic = {true, true, true};
  o.blocks = {1, 1, static_cast<std::size_t>(gpus)};
  o.row_align = cases::kRowAlign;  // the layout of the cush variant's fields
  cush::Field<double> u(cush::DeviceSet::first(gpus), cush::Decomposition({n, n, n}, 3, gpus, o));
  u.scatter(initial_field(adv::Grid{n, n, n}).data());
  u.exchange();  // warm-up
  u.wait();
  cush_bench::WallTimer timer;
  for (auto _ : state) {
    timer.start();
    for (std::size_t s = 0; s < kSteps; ++s) u.exchange();
    u.wait();
    state.SetIterationTime(timer.stop());
  }
  state.counters["gpus"] = gpus;
}

}  // namespace

void register_advection() {
  const int available = cush_bench::gpus_for_rows();
  for (std::size_t n : {128U, 256U, 420U, 512U, 1024U}) {
    if (n > max_n()) continue;
    const std::string size = "/" + std::to_string(n);
    const adv::Grid cube{n, n, n};
    cush_bench::add_timed("case/advection/single/1gpu" + size, [cube](benchmark::State& s) { steps<adv::Single>(s, cube, 1, {}); });
    for (int g = 1; g <= available; ++g) {
      const std::string on = "/" + std::to_string(g) + "gpu" + size;
      for (const auto& [family, schedule] : {std::pair{"advection", adv::Schedule::bulk}, std::pair{"advection_overlap", adv::Schedule::overlap}}) {
        const adv::Options o{schedule, 1};
        cush_bench::add_timed(std::string("case/") + family + "/multi_cuda" + on, [cube, g, o](benchmark::State& s) { steps<adv::MultiCuda>(s, cube, g, o); });
        cush_bench::add_timed(std::string("case/") + family + "/multi_cush" + on, [cube, g, o](benchmark::State& s) { steps<adv::MultiCush>(s, cube, g, o); });
      }
      cush_bench::add_timed("exchange/advection" + on, [n, g](benchmark::State& s) { exchange_only(s, n, g); });
      for (std::size_t depth : {2U, 4U, 8U})
        cush_bench::add_timed("deep/advection/" + std::to_string(depth) + on,
            [cube, g, depth](benchmark::State& s) { steps<adv::MultiCush>(s, cube, g, {adv::Schedule::bulk, depth}); });
    }
  }
  for (std::size_t n : {512U, 1024U}) {
    if (n > max_n()) continue;
    const adv::Grid cube{n, n, n};
    for (const bool factorized : {false, true})
    for (std::size_t t = 1; t <= adv::kMaxFusedSteps; ++t) {
      const std::string kind = factorized ? "temporal/advection_factorized" : "temporal/advection";
      const std::string fused = "/" + std::to_string(t);
      const std::string size = "/" + std::to_string(n);
      adv::Options one{adv::Schedule::bulk, 1, t};
      one.factorized = factorized;
      cush_bench::add_timed(kind + fused + "/single/1gpu" + size,
                            [cube, one](benchmark::State& s) { steps<adv::Single>(s, cube, 1, one); });
      for (int g = 1; g <= available; ++g) {
        const std::string on = "/" + std::to_string(g) + "gpu" + size;
        adv::Options o{adv::Schedule::overlap, 1, t};
        o.factorized = factorized;
        cush_bench::add_timed(kind + "_overlap" + fused + "/multi_cuda" + on,
                              [cube, g, o](benchmark::State& s) { steps<adv::MultiCuda>(s, cube, g, o); });
        cush_bench::add_timed(kind + "_overlap" + fused + "/multi_cush" + on,
                              [cube, g, o](benchmark::State& s) { steps<adv::MultiCush>(s, cube, g, o); });
      }
    }
  }
  for (int g = 1; g <= available; ++g) {
    const adv::Grid weak{512, 512, 256 * static_cast<std::size_t>(g)};
    if (weak.nx > max_n()) continue;
    const std::string on = "/" + std::to_string(g) + "gpu/" + std::to_string(weak.nz);
    if (g == 1) cush_bench::add_timed("case/advection_weak/single" + on, [weak](benchmark::State& s) { steps<adv::Single>(s, weak, 1, {}); });
    cush_bench::add_timed("case/advection_weak/multi_cuda" + on, [weak, g](benchmark::State& s) { steps<adv::MultiCuda>(s, weak, g, {}); });
    cush_bench::add_timed("case/advection_weak/multi_cush" + on, [weak, g](benchmark::State& s) { steps<adv::MultiCush>(s, weak, g, {}); });
  }
}
