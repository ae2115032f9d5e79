// Case "karst" in bench_cases: ensembles of forward runs of the heat model.
//
// Names (time: wall clock of one ensemble run, host to host: members and forcing in, curves out):
//   case/karst/<variant>/<g>gpu/<K>        K members, N = 1024, M = 128, dr = 0.05, 2,000 steps
//   case/karst/<variant>/<g>vgpu/<K>       the same on g virtual GPUs (CUSH_VIRTUAL_GPUS only)
//   case/karst_goal/<variant>/1gpu/512     the run: 512 members, 20,000 steps
//   case/karst_streaming/single/1gpu/<K>   single on the streaming path (karst.hpp's Path), where
//                                          the rows above take the resident one
//   cpu/karst/<t>threads/<K>               the CPU reference (forward_cpu) on t threads, 2,000 steps
// variant: single (1 GPU), multi_cuda, multi_cush. Counters: runs/s (K / t), Gcell/s (rock and
// water nodes advanced per second: K (M + 1) N steps / t), gpus or threads.

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "cush/cush.hpp"
#include "ensemble.hpp"
#include "harness.hpp"

namespace {

namespace karst = cases::karst;

constexpr karst::Grid kGrid{1024, 128, 0.05};

// The benchmark's forcing: a Gaussian pulse at the inlet, v = 1, dt* = dx*/2 (eq. 4.21 holds
// for St < N / 2).
karst::Forcing pulse(std::size_t steps) {
  karst::Forcing f;
  for (std::size_t s = 0; s < steps; ++s) {
    const double t = static_cast<double>(s) / static_cast<double>(steps);
    f.dt.push_back(0.5 * kGrid.dx());
    f.v.push_back(1.0);
    f.inlet.push_back(1.0 + 0.3 * std::exp(-std::pow((t - 0.1) / 0.02, 2)));
  }
  return f;
}

// K members spread over the Table 7.3 box.
std::vector<karst::Groups> members(std::size_t count) {
  std::vector<karst::Groups> m(count);
  for (std::size_t k = 0; k < count; ++k) {
    const double u = static_cast<double>(k % 97) / 96.0, w = static_cast<double>(k % 89) / 88.0;
    m[k] = karst::Groups{1900.0 + 150.0 * u, 0.75 + 19.25 * w, 0.1 + 5.9 * (1.0 - u), 2.235, 0.0};
  }
  return m;
}

void counters(benchmark::State& state, std::size_t count, std::size_t steps, double seconds) {
  const double runs = static_cast<double>(count * state.iterations());
  state.counters["runs/s"] = runs / seconds;
  state.counters["Gcell/s"] = runs * static_cast<double>((kGrid.m + 1) * kGrid.n * steps) / seconds / 1e9;
}

template <class V>
void ensemble(benchmark::State& state, std::size_t count, std::size_t steps, cases::Devices gpus,
              karst::Path path = karst::Path::automatic) {
  const karst::Forcing f = pulse(steps);
  const std::vector<karst::Groups> m = members(count);
  V v(karst::Setup{karst::Model::heat, kGrid, karst::Outlet::advective, path}, gpus);
  v.run(f, m);  // warm-up: allocates
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    const karst::Runs r = v.run(f, m);
    benchmark::DoNotOptimize(r.curves.data());
    const double s = timer.stop();
    state.SetIterationTime(s);
    seconds += s;
  }
  counters(state, count, steps, seconds);
  state.counters["gpus"] = gpus.count();
}

void cpu(benchmark::State& state, std::size_t count, std::size_t steps, unsigned threads) {
  const karst::Forcing f = pulse(steps);
  const std::vector<karst::Groups> m = members(count);
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    const std::vector<double> curves = karst::forward_cpu(karst::Model::heat, kGrid, f, m, karst::Outlet::advective, threads);
    benchmark::DoNotOptimize(curves.data());
    const double s = timer.stop();
    state.SetIterationTime(s);
    seconds += s;
  }
  counters(state, count, steps, seconds);
  state.counters["threads"] = threads;
}

void add_variants(const std::string& family, std::size_t count, std::size_t steps, int g, const std::string& on) {
  const std::string tail = "/" + on + "/" + std::to_string(count);
  const cases::Devices gpus = cases::Devices::first(g);
  if (g == 1)
    cush_bench::add_timed("case/" + family + "/single" + tail,
                          [=](benchmark::State& s) { ensemble<karst::Single>(s, count, steps, gpus); });
  cush_bench::add_timed("case/" + family + "/multi_cuda" + tail,
                        [=](benchmark::State& s) { ensemble<karst::MultiCuda>(s, count, steps, gpus); });
  cush_bench::add_timed("case/" + family + "/multi_cush" + tail,
                        [=](benchmark::State& s) { ensemble<karst::MultiCush>(s, count, steps, gpus); });
}

}  // namespace

void register_karst() {
  const int available = cush_bench::gpus_for_rows();
  if (available == 0) return;
  constexpr std::size_t kSteps = 2000;
  for (std::size_t count : {1, 4, 16, 64, 256, 512, 1024, 2048, 4096})
    for (int g = 1; g <= available; g *= 2) add_variants("karst", count, kSteps, g, std::to_string(g) + "gpu");
  add_variants("karst_goal", 512, 20000, 1, "1gpu");
  for (std::size_t count : {1, 16, 64, 512, 4096})
    cush_bench::add_timed("case/karst_streaming/single/1gpu/" + std::to_string(count), [=](benchmark::State& s) {
      ensemble<karst::Single>(s, count, kSteps, cases::Devices::first(1), karst::Path::streaming);
    });
  if (cush::virtual_gpus_active())
    for (std::size_t count : {16, 512})
      for (int g = 2; g <= cush::DeviceSet::available(); g *= 2) add_variants("karst", count, kSteps, g, std::to_string(g) + "vgpu");
  const unsigned threads = std::max(1U, std::thread::hardware_concurrency());
  for (std::size_t count : {1, 16, 64, 512})
    cush_bench::add_timed("cpu/karst/" + std::to_string(threads) + "threads/" + std::to_string(count),
                          [=](benchmark::State& s) { cpu(s, count, kSteps, threads); });
}
