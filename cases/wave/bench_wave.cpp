// Case "wave" in bench_cases: the three variants of cases/wave on resident data, FP64.
//
// Names (time: wall clock for kSteps steps on data already on the GPUs, warm-up excluded; each
// row makes and loads its variant once and keeps it for its later calls):
//   case/wave/<order>/<variant>/<g>gpu/<n>          bulk-synchronous, n^3 nodes
//   case/wave_overlap/<order>/<variant>/<g>gpu/<n>  raw and cush, the exchange overlapped
//   temporal/wave/<order>/<T>/single/1gpu/<n>       T steps a launch (the streaming kernel), T >= 2
//   temporal/wave_overlap/<order>/<T>/<variant>/<g>gpu/<n>  the same, raw and cush, overlapped
//   temporal/wave_diamond/2/<T>/r<R>/<in_step|step_ahead|prefetched>/1gpu/<n>  the DiamondTorre variant
//                                                   (diamond_variant.hpp), sweeps of T steps,
//                                                   diamonds of radius R, 2 T steps a run
// Counters: Gpts/s (node updates) and GB/s (24 bytes per update: the current and older levels
// read, the new level written; the roofline's count, R1w = copy bandwidth / 24, with the same
// run's roof/copy row). Environment: CUSH_BENCH_WAVE_MAX_N caps n (default 1024).

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "coefficients.hpp"
#include "cush/cush.hpp"
#include "harness.hpp"
#include "reference.hpp"
#include "diamond_variant.hpp"
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

// `run` steps per timed call of variant V (made with options `o` on `gpus` GPUs, loaded once and
// kept under `key`).
template <class V, class O>
void steps(benchmark::State& state, wave::Problem p, int gpus, O o, std::size_t run, const std::string& key) {
  V* v = cush_bench::kept<V>(std::string(typeid(V).name()) + "/" + std::to_string(p.n) + "/" + key, [&] {
    auto made = std::make_unique<V>(p, cases::Devices::first(gpus), o);
    made->upload(mode(p.n).data(), mode(p.n).data());
    made->wait();
    return made;
  });
  v->run(run);  // warm-up
  v->wait();
  const double seconds = cush_bench::timed_iterations(state, [&] {
    v->run(run);
    v->wait();
  });
  const double updates = static_cast<double>(p.points()) * static_cast<double>(run) * static_cast<double>(state.iterations());
  state.counters["Gpts/s"] = updates / seconds / 1e9;
  state.counters["GB/s"] = updates * 24.0 / seconds / 1e9;
  state.counters["gpus"] = gpus;
}

// The case's variants: kSteps steps a timed call.
template <class V>
void steps(benchmark::State& state, wave::Problem p, int gpus, wave::Options o) {
  steps<V>(state, p, gpus, o, kSteps,
           std::to_string(p.order) + "/" + std::to_string(gpus) + "/" + std::to_string(static_cast<int>(o.schedule)) + "/" +
               std::to_string(o.steps));
}

// The DiamondTorre variant: two sweeps of T steps a timed call.
void diamond_steps(benchmark::State& state, wave::Problem p, wave::DiamondOptions o) {
  steps<wave::Diamond>(state, p, 1, o, 2 * o.steps,
                       std::to_string(o.radius) + "/" + std::to_string(o.steps) + "/" + std::to_string(static_cast<int>(o.reads)));
}

// A row of the case: its variant, made and loaded once, kept for the row's later calls (cush_bench::kept).
template <class F>
void add_row(const std::string& name, F f) {
  cush_bench::add_timed(name, f, true);
}

}  // namespace

void register_wave() {
  const int available = cush_bench::gpus_for_rows();
  for (std::size_t n : {512U, 1024U}) {
    if (n > max_n()) continue;
    for (int radius = 1; radius <= 3; ++radius)
      for (wave::DiamondReads reads : wave::kDiamondReads) {
        const wave::Problem p{n, 2, 0.9 * wave::courant_limit(2)};
        const wave::DiamondOptions o{radius, 16, reads};
        add_row("temporal/wave_diamond/2/16/r" + std::to_string(radius) + "/" + wave::name(reads) + "/1gpu/" + std::to_string(n),
                [p, o](benchmark::State& s) { diamond_steps(s, p, o); });
      }
    for (int order : wave::kOrders) {
      const wave::Problem p{n, order, 0.9 * wave::courant_limit(order)};
      const std::string tail = "/" + std::to_string(n);
      const std::string o = "/" + std::to_string(order);
      add_row("case/wave" + o + "/single/1gpu" + tail, [p](benchmark::State& s) { steps<wave::Single>(s, p, 1, {}); });
      for (int g = 1; g <= available; ++g) {
        const std::string on = "/" + std::to_string(g) + "gpu" + tail;
        for (const auto& [family, schedule] : {std::pair{"wave", wave::Schedule::bulk}, std::pair{"wave_overlap", wave::Schedule::overlap}}) {
          const wave::Options opt{schedule};
          add_row(std::string("case/") + family + o + "/multi_cuda" + on,
                  [p, g, opt](benchmark::State& s) { steps<wave::MultiCuda>(s, p, g, opt); });
          add_row(std::string("case/") + family + o + "/multi_cush" + on,
                  [p, g, opt](benchmark::State& s) { steps<wave::MultiCush>(s, p, g, opt); });
        }
      }
      for (std::size_t t = 2; t <= wave::max_fused_steps(order); ++t) {
        const std::string ot = o + "/" + std::to_string(t);
        const wave::Options fused{wave::Schedule::overlap, t};
        add_row("temporal/wave" + ot + "/single/1gpu" + tail,
                [p, fused](benchmark::State& s) { steps<wave::Single>(s, p, 1, fused); });
        for (int g = 1; g <= available; ++g) {
          const std::string on = "/" + std::to_string(g) + "gpu" + tail;
          add_row("temporal/wave_overlap" + ot + "/multi_cuda" + on,
                  [p, g, fused](benchmark::State& s) { steps<wave::MultiCuda>(s, p, g, fused); });
          add_row("temporal/wave_overlap" + ot + "/multi_cush" + on,
                  [p, g, fused](benchmark::State& s) { steps<wave::MultiCush>(s, p, g, fused); });
        }
      }
    }
  }
}
