// Case "advection" in bench_cases: the three variants of cases/advection on resident data.
//
// Names (time: wall clock for kSteps steps on data already on the GPUs, warm-up excluded):
//   case/advection/<variant>/<g>gpu/<n>          bulk-synchronous, n^3 points, FP64
//   case/advection_overlap/<variant>/<g>gpu/<n>  raw and cush with the interior overlapping the exchange
//   deep/advection/<depth>/<g>gpu/<n>            cush with `depth` ghost layers, exchanged every depth steps
//   exchange/advection/<g>gpu/<n>                the cush exchange alone (kSteps of them): the time an
//                                                overlapped step can hide (seed 003's measure)
// Counters: GF (seed 000's 53 flops per point update), Gpts/s (point updates), GB/s (16 bytes
// per point update: one read and one write, the roofline's count). Environment:
// CUSH_BENCH_ADVECTION_MAX_N caps n (default 1024).

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "advection.hpp"
#include "cush/cush.hpp"
#include "harness.hpp"

namespace {

namespace adv = cases::advection;
constexpr std::size_t kSteps = 10;

std::size_t max_n() {
  const char* v = std::getenv("CUSH_BENCH_ADVECTION_MAX_N");
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : 1024;
}

// The initial field on an n^3 grid, made once per n. adv::initial() is a product of one
// function per axis, so tables per axis make 1024^3 points in about a second.
const std::vector<double>& initial_field(std::size_t n) {
  static std::size_t made_for = 0;
  static std::vector<double> field;
  if (made_for == n) return field;
  constexpr double two_pi = 6.283185307179586;
  std::vector<double> sx(n), cy(n), sz(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i) / static_cast<double>(n);
    sx[i] = std::sin(two_pi * x);
    cy[i] = std::cos(two_pi * x);
    sz[i] = sx[i];
  }
  field.assign(n * n * n, 0.0);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i) field[i + n * (j + n * k)] = sx[i] * cy[j] * sz[k] + 0.5;
  made_for = n;
  return field;
}

template <class V>
void steps(benchmark::State& state, std::size_t n, int gpus, adv::Options o) {
  const adv::Grid g{n, n, n};
  const auto a = adv::coefficients({1.0, 0.7, 0.4}, {0.9, 0.9, 0.9});
  V v(g, a, gpus, o);
  v.upload(initial_field(n).data());
  v.run(kSteps);  // warm-up
  v.wait();
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    v.run(kSteps);
    v.wait();
    const double s = timer.stop();
    state.SetIterationTime(s);
    seconds += s;
  }
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
  cush::Field<double> u(cush::DeviceSet::first(gpus), cush::Decomposition({n, n, n}, 3, gpus, o));
  u.scatter(initial_field(n).data());
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

template <class F>
void add(const std::string& name, F f) {
  benchmark::RegisterBenchmark(name.c_str(), f)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(cush_bench::min_time());
}

}  // namespace

void register_advection() {
  const int available = cush::DeviceSet::available();
  for (std::size_t n : {128U, 256U, 420U, 512U, 1024U}) {
    if (n > max_n()) continue;
    const std::string size = "/" + std::to_string(n);
    add("case/advection/single/1gpu" + size, [n](benchmark::State& s) { steps<adv::Single>(s, n, 1, {}); });
    for (int g = 1; g <= available; ++g) {
      const std::string on = "/" + std::to_string(g) + "gpu" + size;
      for (const auto& [family, schedule] : {std::pair{"advection", adv::Schedule::bulk}, std::pair{"advection_overlap", adv::Schedule::overlap}}) {
        const adv::Options o{schedule, 1};
        add(std::string("case/") + family + "/multi_cuda" + on, [n, g, o](benchmark::State& s) { steps<adv::MultiCuda>(s, n, g, o); });
        add(std::string("case/") + family + "/multi_cush" + on, [n, g, o](benchmark::State& s) { steps<adv::MultiCush>(s, n, g, o); });
      }
      add("exchange/advection" + on, [n, g](benchmark::State& s) { exchange_only(s, n, g); });
      for (std::size_t depth : {2U, 4U, 8U})
        add("deep/advection/" + std::to_string(depth) + on,
            [n, g, depth](benchmark::State& s) { steps<adv::MultiCush>(s, n, g, {adv::Schedule::bulk, depth}); });
    }
  }
}
