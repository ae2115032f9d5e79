// Case "wave" in bench_cases: the three variants of cases/wave on resident data, FP64.
//
// Names (time: wall clock for kSteps steps on data already on the GPUs, warm-up excluded):
//   case/wave/<order>/<variant>/<g>gpu/<n>          bulk-synchronous, n^3 nodes
//   case/wave_overlap/<order>/<variant>/<g>gpu/<n>  raw and cush, the exchange overlapped
//   temporal/wave/<order>/<T>/single/1gpu/<n>       T steps a launch (the streaming kernel), T >= 2
//   temporal/wave_overlap/<order>/<T>/<variant>/<g>gpu/<n>  the same, raw and cush, overlapped
// Counters: Gpts/s (node updates) and GB/s (24 bytes per update: the current and older levels
// read, the new level written; the roofline's count, R1w = copy bandwidth / 24, with the same
// run's roof/copy row). Environment: CUSH_BENCH_WAVE_MAX_N caps n (default 1024).

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "coefficients.hpp"
#include "cush/cush.hpp"
#include "harness.hpp"
#include "reference.hpp"
#include "wave.hpp"

namespace {

namespace wave = cases::wave;
constexpr std::size_t kSteps = 12;

std::size_t max_n() { return cush::detail::env::size("CUSH_BENCH_WAVE_MAX_N"); }

// The mode on n^3 nodes, made once per n (1024^3 takes seconds).
const std::vector<double>& mode(std::size_t n) {
  static std::map<std::size_t, std::vector<double>> made;
  auto it = made.find(n);
  if (it == made.end()) it = made.emplace(n, wave::mode(n)).first;
  return it->second;
}

template <class V>
void steps(benchmark::State& state, wave::Problem p, int gpus, wave::Options o) {
  const std::vector<double>& u0 = mode(p.n);
  V v(p, cases::Devices::first(gpus), o);
  v.upload(u0.data(), u0.data());
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
  const double updates = static_cast<double>(p.points()) * kSteps * static_cast<double>(state.iterations());
  state.counters["Gpts/s"] = updates / seconds / 1e9;
  state.counters["GB/s"] = updates * 24.0 / seconds / 1e9;
  state.counters["gpus"] = gpus;
}

}  // namespace

void register_wave() {
  const int available = cush_bench::gpus_for_rows();
  for (std::size_t n : {512U, 1024U}) {
    if (n > max_n()) continue;
    for (int order : wave::kOrders) {
      const wave::Problem p{n, order, 0.9 * wave::courant_limit(order)};
      const std::string tail = "/" + std::to_string(n);
      const std::string o = "/" + std::to_string(order);
      cush_bench::add_timed("case/wave" + o + "/single/1gpu" + tail,
                            [p](benchmark::State& s) { steps<wave::Single>(s, p, 1, {}); });
      for (int g = 1; g <= available; ++g) {
        const std::string on = "/" + std::to_string(g) + "gpu" + tail;
        for (const auto& [family, schedule] : {std::pair{"wave", wave::Schedule::bulk}, std::pair{"wave_overlap", wave::Schedule::overlap}}) {
          const wave::Options opt{schedule};
          cush_bench::add_timed(std::string("case/") + family + o + "/multi_cuda" + on,
                                [p, g, opt](benchmark::State& s) { steps<wave::MultiCuda>(s, p, g, opt); });
          cush_bench::add_timed(std::string("case/") + family + o + "/multi_cush" + on,
                                [p, g, opt](benchmark::State& s) { steps<wave::MultiCush>(s, p, g, opt); });
        }
      }
      for (std::size_t t = 2; t <= wave::max_fused_steps(order); ++t) {
        const std::string ot = o + "/" + std::to_string(t);
        const wave::Options fused{wave::Schedule::overlap, t};
        cush_bench::add_timed("temporal/wave" + ot + "/single/1gpu" + tail,
                              [p, fused](benchmark::State& s) { steps<wave::Single>(s, p, 1, fused); });
        for (int g = 1; g <= available; ++g) {
          const std::string on = "/" + std::to_string(g) + "gpu" + tail;
          cush_bench::add_timed("temporal/wave_overlap" + ot + "/multi_cuda" + on,
                                [p, g, fused](benchmark::State& s) { steps<wave::MultiCuda>(s, p, g, fused); });
          cush_bench::add_timed("temporal/wave_overlap" + ot + "/multi_cush" + on,
                                [p, g, fused](benchmark::State& s) { steps<wave::MultiCush>(s, p, g, fused); });
        }
      }
    }
  }
}
