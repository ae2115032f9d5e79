// Case "karst", GPU tests: the batched kernels against the CPU reference on the same discrete
// system (every outlet value and the final fields, max-abs error <= 1e-10), heat and solute, both
// outlet rows, forcing whose dt and v change, odd grids and step counts, grids past the thesis's
// 1024-node limit; the raw and cush multi-GPU variants bit for bit equal to the single-GPU one on
// 1, 2, 4 and 8 GPUs (logical: CUSH_VIRTUAL_GPUS on a host with fewer) in both device orders;
// misfits; bad input rejected before anything runs. The resident path (a member's state on chip)
// equal to the streaming one bit for bit, in every variant.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "ensemble.hpp"
#include "inversion.hpp"
#include "karst.hpp"
#include "kernels.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"

namespace {

namespace karst = cases::karst;
using cases::Devices;
using karst::Groups;
using karst::Model;
using karst::Outlet;

constexpr double kTolerance = 1e-10;  // the bound for GPU against CPU

#define SKIP_WITHOUT_GPUS(n)                                                 \
  do {                                                                       \
    const std::string why = cush_test::missing_gpus(n);                      \
    if (!why.empty()) GTEST_SKIP() << why;                                   \
  } while (0)

// `count` members with random Pe, St, Theta (and Da for the solute model).
std::vector<Groups> random_members(std::size_t count, unsigned seed, double st_max = 20.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Groups> m(count);
  for (Groups& g : m) {
    g.pe = 50.0 + 2950.0 * u(rng);
    g.st = st_max * u(rng);
    g.theta = 0.1 + 5.9 * u(rng);
    g.psi = 2.235;
    g.da = 0.5 * u(rng);
  }
  return m;
}

// A Gaussian inlet pulse with noise; dt* and v change every few steps (so cached factors are
// recomputed); v dt/dx + dt St stays below 1 for St <= 20.
karst::Forcing forcing(const karst::Grid& grid, std::size_t steps, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  const double base = 0.4 * grid.dx() / 1.3;
  karst::Forcing f;
  double t = 0.0;
  for (std::size_t s = 0; s < steps; ++s) {
    f.dt.push_back(s % 7 < 3 ? base : 0.6 * base);
    f.v.push_back(s % 5 < 2 ? 1.0 : 0.8 + 0.5 * std::abs(std::sin(0.1 * static_cast<double>(s))));
    t += f.dt.back();
    f.inlet.push_back(1.0 + 0.5 * std::exp(-std::pow((t - 0.1) / 0.04, 2)) + noise(rng));
  }
  return f;
}

double max_abs(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double e = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

// The CPU reference's curves and final fields of every member (Conduit, one member at a time).
struct Reference {
  std::vector<double> curves, water, rock;
};
Reference cpu(Model model, const karst::Grid& grid, const karst::Forcing& f, const std::vector<Groups>& members,
              Outlet outlet) {
  Reference r;
  for (const Groups& g : members) {
    karst::Conduit c(model, grid, g, outlet);
    for (std::size_t s = 0; s < f.steps(); ++s) {
      c.step(f.dt[s], f.v[s], f.inlet[s]);
      r.curves.push_back(c.outlet());
    }
    r.water.insert(r.water.end(), c.water().begin(), c.water().end());
    if (model == Model::heat)
      for (std::size_t i = 0; i < grid.m; ++i)
        for (std::size_t j = 0; j < grid.n; ++j) r.rock.push_back(c.rock(i, j));
  }
  return r;
}

void expect_matches_cpu(Model model, const karst::Grid& grid, std::size_t steps, std::size_t count, Outlet outlet,
                        unsigned seed, karst::Path path = karst::Path::automatic) {
  const std::vector<Groups> members = random_members(count, seed);
  const karst::Forcing f = forcing(grid, steps, seed + 1);
  const Reference want = cpu(model, grid, f, members, outlet);
  karst::Single gpu(karst::Setup{model, grid, outlet, path}, Devices::first(1));
  const karst::Runs got = gpu.run(f, members);
  const std::string what = std::string(model == Model::heat ? "heat" : "solute") + ", N " + std::to_string(grid.n) +
                           ", M " + std::to_string(grid.m) + ", " + std::to_string(steps) + " steps, " +
                           std::to_string(count) + " members";
  EXPECT_LE(max_abs(got.curves, want.curves), kTolerance) << what << ": outlet curves";
  EXPECT_LE(max_abs(gpu.water(), want.water), kTolerance) << what << ": final water";
  EXPECT_LE(max_abs(gpu.rock(), want.rock), kTolerance) << what << ": final rock";
  // On the longer runs the curves are not trivial: the pulse reached the outlet.
  double duration = 0.0;
  for (double dt : f.dt) duration += dt;
  if (duration > 1.3) EXPECT_GT(*std::max_element(got.curves.begin(), got.curves.end()), 1.01) << what;
}

TEST(KarstGpu, HeatMatchesTheCpuReference) {
  SKIP_WITHOUT_GPUS(1);
  // Odd sizes; odd and even step counts (the schedule ends on an LU or a UL step).
  for (std::size_t steps : {1, 2, 3, 1400, 1401})
    expect_matches_cpu(Model::heat, karst::Grid{203, 37, 0.05}, steps, 5, Outlet::advective, 11);
  expect_matches_cpu(Model::heat, karst::Grid{64, 2, 0.1}, 400, 3, Outlet::advective, 12);  // M = 2
  expect_matches_cpu(Model::heat, karst::Grid{130, 19, 0.02}, 900, 4, Outlet::printed, 13);
}

TEST(KarstGpu, SoluteMatchesTheCpuReference) {
  SKIP_WITHOUT_GPUS(1);
  for (std::size_t steps : {1, 2, 1401})
    expect_matches_cpu(Model::solute, karst::Grid{203, 37, 0.05}, steps, 6, Outlet::advective, 21);
  expect_matches_cpu(Model::solute, karst::Grid{77, 5, 0.05}, 500, 3, Outlet::printed, 22);
}

TEST(KarstGpu, GridsPastTheThesisLimit) {
  SKIP_WITHOUT_GPUS(1);
  // The thesis's solvers held at most 1024 unknowns per system; these hold 3000 and 1500.
  expect_matches_cpu(Model::heat, karst::Grid{3000, 1500, 0.01}, 40, 2, Outlet::advective, 31);
  expect_matches_cpu(Model::solute, karst::Grid{5000, 2, 0.05}, 60, 2, Outlet::advective, 32);
}

// The resident path (a member's state in a cluster's shared memory) against the streaming one:
// the same numbers bit for bit, on clusters of 1, 4 and 8 blocks, a last block with fewer columns
// than the others, M = 2, both outlet rows, odd and even step counts, forcing whose dt and v
// change; and against the CPU reference.
TEST(KarstGpu, ResidentPathEqualsTheStreamingOne) {
  SKIP_WITHOUT_GPUS(1);
  struct Case {
    karst::Grid grid;
    std::size_t steps, count;
    Outlet outlet;
  };
  const Outlet adv = Outlet::advective;
  const Case cases[] = {{{203, 37, 0.05}, 1, 3, adv},  {{203, 37, 0.05}, 2, 3, adv},    {{203, 37, 0.05}, 151, 5, adv},
                        {{64, 2, 0.1}, 400, 3, adv},    {{130, 19, 0.02}, 300, 4, Outlet::printed},
                        {{1000, 60, 0.05}, 201, 3, adv}, {{1021, 90, 0.05}, 78, 2, adv}, {{1024, 128, 0.05}, 120, 2, adv}};
  for (const Case& c : cases) {
    const std::vector<Groups> members = random_members(c.count, 100 + static_cast<unsigned>(c.steps));
    const karst::Forcing f = forcing(c.grid, c.steps, 101);
    karst::Single streaming(karst::Setup{Model::heat, c.grid, c.outlet, karst::Path::streaming}, Devices::first(1));
    karst::Single resident(karst::Setup{Model::heat, c.grid, c.outlet, karst::Path::resident}, Devices::first(1));
    const std::string what = "N " + std::to_string(c.grid.n) + ", M " + std::to_string(c.grid.m) + ", " +
                             std::to_string(c.steps) + " steps";
    EXPECT_EQ(resident.run(f, members).curves, streaming.run(f, members).curves) << what;
    EXPECT_EQ(resident.water(), streaming.water()) << what;
    EXPECT_EQ(resident.rock(), streaming.rock()) << what;
  }
  expect_matches_cpu(Model::heat, karst::Grid{1024, 128, 0.05}, 301, 2, Outlet::advective, 102, karst::Path::resident);
  expect_matches_cpu(Model::heat, karst::Grid{203, 37, 0.05}, 1401, 3, Outlet::advective, 103, karst::Path::resident);
}

TEST(KarstGpu, ResidentPathRefusesWhatItCannotRun) {
  SKIP_WITHOUT_GPUS(1);
  const std::vector<Groups> members = random_members(2, 110);
  const auto message = [&](Model model, const karst::Grid& grid) {
    try {
      karst::Single(karst::Setup{model, grid, Outlet::advective, karst::Path::resident}, Devices::first(1))
          .run(forcing(grid, 10, 111), members);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(Model::solute, karst::Grid{100, 10, 0.05}).find("heat model only"), std::string::npos);
  // 3000 x 1500 doubles: 36 MB per member, more than 16 blocks' shared memory.
  EXPECT_NE(message(Model::heat, karst::Grid{3000, 1500, 0.01}).find("cannot run N 3000, M 1500"), std::string::npos);
}

TEST(KarstGpu, UniformStaysUniform) {
  SKIP_WITHOUT_GPUS(1);
  const karst::Grid grid{256, 64, 0.05};
  karst::Forcing f;
  for (int s = 0; s < 300; ++s) {
    f.dt.push_back(0.9 / (256.0 * 1.2 + 15.8));
    f.v.push_back(s % 2 ? 1.2 : 0.7);
    f.inlet.push_back(1.0);
  }
  std::vector<Groups> members = random_members(9, 41);
  members[0].st = 15.7239;  // Table 4.3
  members[0].theta = 23.0570;
  for (Model model : {Model::heat, Model::solute}) {
    if (model == Model::solute)
      for (Groups& g : members) g.da = 0.0;  // + Da C would grow a uniform field
    karst::Single gpu(karst::Setup{model, grid}, Devices::first(1));
    const karst::Runs r = gpu.run(f, members);
    double drift = 0.0;
    for (double c : r.curves) drift = std::max(drift, std::abs(c - 1.0));
    for (double w : gpu.water()) drift = std::max(drift, std::abs(w - 1.0));
    for (double x : gpu.rock()) drift = std::max(drift, std::abs(x - 1.0));
    EXPECT_LT(drift, 1e-13) << (model == Model::heat ? "heat" : "solute");
  }
}

TEST(KarstGpu, HeatWithoutExchangeEqualsSoluteWithoutReaction) {
  SKIP_WITHOUT_GPUS(1);
  const karst::Grid grid{150, 20, 0.05};
  std::vector<Groups> members = random_members(4, 51);
  for (Groups& g : members) g.st = g.da = 0.0;
  const karst::Forcing f = forcing(grid, 333, 52);
  karst::Single heat(karst::Setup{Model::heat, grid}, Devices::first(1));
  karst::Single solute(karst::Setup{Model::solute, grid}, Devices::first(1));
  EXPECT_EQ(heat.run(f, members).curves, solute.run(f, members).curves);
}

TEST(KarstGpu, MisfitsAreTheRmsOfTheDifference) {
  SKIP_WITHOUT_GPUS(1);
  const karst::Grid grid{100, 16, 0.05};
  const std::vector<Groups> members = random_members(7, 61);
  const karst::Forcing f = forcing(grid, 201, 62);
  std::vector<double> observed(f.steps());
  for (std::size_t s = 0; s < observed.size(); ++s) observed[s] = 1.0 + 0.001 * static_cast<double>(s % 13);
  karst::Single gpu(karst::Setup{Model::heat, grid}, Devices::first(1));
  const karst::Runs r = gpu.run(f, members, observed);
  ASSERT_EQ(r.misfits.size(), members.size());
  for (std::size_t k = 0; k < members.size(); ++k) {
    double sum = 0.0;
    for (std::size_t s = 0; s < f.steps(); ++s) sum += std::pow(r.curves[k * f.steps() + s] - observed[s], 2);
    EXPECT_NEAR(r.misfits[k], std::sqrt(sum / static_cast<double>(f.steps())), 1e-14) << "member " << k;
  }
}

// Runs a variant on `ids` and compares with the single-GPU reference bit for bit.
template <class V, class... Extra>
void expect_same_as_single(const karst::Setup& setup, const std::vector<int>& ids, std::size_t count, Extra... extra) {
  const std::vector<Groups> members = random_members(count, 70 + static_cast<unsigned>(count));
  const karst::Forcing f = forcing(setup.grid, 151, 71);
  std::vector<double> observed(f.steps(), 1.01);
  karst::Setup reference = setup;
  reference.path = karst::Path::streaming;
  const karst::Runs want = karst::Single(reference, Devices::first(1)).run(f, members, observed);
  V v(setup, Devices::of(ids), extra...);
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reuses the device memory
    const karst::Runs got = v.run(f, members, observed);
    std::string where = std::to_string(ids.size()) + " GPUs {";
    for (int id : ids) where += std::to_string(id) + " ";
    where += "}, " + std::to_string(count) + " members, run " + std::to_string(repeat);
    EXPECT_EQ(got.curves, want.curves) << where;
    EXPECT_EQ(got.misfits, want.misfits) << where;
  }
}

std::vector<std::vector<int>> device_lists() {
  std::vector<std::vector<int>> lists;
  for (int k : {1, 2, 4, 8}) {
    if (k > cush::DeviceSet::available()) break;
    std::vector<int> ids;
    for (int i = 0; i < k; ++i) ids.push_back(i);
    lists.push_back(ids);
    if (k > 1) lists.emplace_back(ids.rbegin(), ids.rend());
  }
  if (cush::DeviceSet::available() >= 3) lists.push_back({2, 0, 1});
  return lists;
}

TEST(KarstGpu, MultiGpuVariantsEqualTheSingleGpuOne) {
  SKIP_WITHOUT_GPUS(1);
  const karst::Setup heat{Model::heat, karst::Grid{97, 23, 0.05}};
  const karst::Setup solute{Model::solute, karst::Grid{97, 23, 0.05}};
  const karst::Setup resident{Model::heat, karst::Grid{97, 23, 0.05}, Outlet::advective, karst::Path::resident};
  for (const std::vector<int>& ids : device_lists())
    for (std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{13}}) {
      expect_same_as_single<karst::MultiCuda>(heat, ids, count);
      expect_same_as_single<karst::MultiCush>(heat, ids, count);
      expect_same_as_single<karst::MultiCush>(heat, ids, count, cush::Distribution::memory_bandwidth());
      expect_same_as_single<karst::MultiCuda>(resident, ids, count);
      expect_same_as_single<karst::MultiCush>(resident, ids, count);
    }
  for (const std::vector<int>& ids : device_lists()) {
    expect_same_as_single<karst::MultiCuda>(solute, ids, 11);
    expect_same_as_single<karst::MultiCush>(solute, ids, 11);
  }
}

TEST(KarstGpu, RunsOfDifferentSizesReuseTheVariant) {
  SKIP_WITHOUT_GPUS(1);
  const karst::Setup setup{Model::heat, karst::Grid{80, 12, 0.05}};
  const int k = std::min(2, cush::DeviceSet::available());
  karst::Single single(setup, Devices::first(1));
  karst::MultiCuda raw(setup, Devices::first(k));
  karst::MultiCush cush(setup, Devices::first(k));
  for (std::size_t count : {5, 2, 9, 9}) {
    const std::vector<Groups> members = random_members(count, 80 + static_cast<unsigned>(count));
    for (std::size_t steps : {100, 61}) {
      const karst::Forcing f = forcing(setup.grid, steps, 81);
      const karst::Runs want = karst::Single(setup, Devices::first(1)).run(f, members);
      EXPECT_EQ(single.run(f, members).curves, want.curves) << count << " members, " << steps << " steps";
      EXPECT_EQ(raw.run(f, members).curves, want.curves) << count << " members, " << steps << " steps";
      EXPECT_EQ(cush.run(f, members).curves, want.curves) << count << " members, " << steps << " steps";
    }
  }
}

TEST(KarstGpu, BadRunsAreRejectedBeforeAnythingRuns) {
  SKIP_WITHOUT_GPUS(1);
  const karst::Setup setup{Model::heat, karst::Grid{100, 10, 0.05}};
  karst::Single single(setup, Devices::first(1));
  karst::MultiCuda raw(setup, Devices::first(1));
  karst::MultiCush cush(setup, Devices::first(1));
  std::vector<Groups> members = random_members(3, 90);
  karst::Forcing f = forcing(setup.grid, 50, 91);
  f.dt[17] = 2.0 * setup.grid.dx();  // v dt/dx >= 1: eq. 4.21 fails at step 17
  const auto message = [&](auto& v, std::span<const double> observed) {
    try {
      v.run(f, members, observed);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string& m : {message(single, {}), message(raw, {}), message(cush, {})}) {
    EXPECT_NE(m.find("step 17"), std::string::npos) << m;
    EXPECT_NE(m.find("4.21"), std::string::npos) << m;
  }
  f = forcing(setup.grid, 50, 91);
  const std::vector<double> short_curve(49, 1.0);
  for (const std::string& m : {message(single, short_curve), message(raw, short_curve), message(cush, short_curve)})
    EXPECT_NE(m.find("49 values"), std::string::npos) << m;
  EXPECT_THROW(karst::Single(karst::Setup{Model::heat, karst::Grid{1, 10, 0.05}}, Devices::first(1)), std::invalid_argument);
  EXPECT_THROW(karst::Single(setup, Devices{}), std::invalid_argument);
  // A batch larger than its workspace, or a workspace of another grid.
  karst::Workspace small(cush::physical_device(0), Model::heat, setup.grid, 2);
  const karst::Batch three{nullptr, nullptr, nullptr, 3};
  EXPECT_THROW(karst::launch_forward(Model::heat, setup.grid, Outlet::advective, f, three, small, nullptr), std::invalid_argument);
  const karst::Batch two{nullptr, nullptr, nullptr, 2};
  EXPECT_THROW(karst::launch_forward(Model::heat, karst::Grid{100, 11, 0.05}, Outlet::advective, f, two, small, nullptr),
               std::invalid_argument);
}

// The inversion twin with its ensembles on variant V over `gpus`: Pe, St and Theta from the Table
// 7.3 start recovered within 1%. One test per variant, so that each fits in one machine's time under
// racecheck (the cush one took 871 s; both in one test did not finish in 20 minutes:
// docs/reliability.md).
template <class V>
void expect_twin_recovered(const cases::Devices& gpus) {
  const karst::Grid grid{128, 32, 0.05};
  karst::Forcing f;
  for (int s = 0; s < 750; ++s) {
    f.dt.push_back(0.004);
    f.v.push_back(1.0);
    f.inlet.push_back(1.0 + 0.5 * std::exp(-std::pow((0.004 * (s + 1) - 0.3) / 0.08, 2)));
  }
  const Groups truth{1940.0, 6.0, 2.5, 2.235, 0.0};
  const karst::Setup setup{Model::heat, grid};
  const std::vector<double> observed = karst::Single(setup, Devices::first(1)).run(f, std::vector<Groups>{truth}).curves;
  const karst::Fit fit = karst::nlcg(karst::evaluate_on(std::make_shared<V>(setup, gpus), f, observed),
                                     karst::table_7_3_start(truth));
  EXPECT_NEAR(fit.groups.pe / truth.pe, 1.0, 0.01) << fit.stopped;
  EXPECT_NEAR(fit.groups.st / truth.st, 1.0, 0.01) << fit.stopped;
  EXPECT_NEAR(fit.groups.theta / truth.theta, 1.0, 0.01) << fit.stopped;
  EXPECT_LT(fit.misfit, 1e-3 * fit.history.front().misfit);
}

TEST(KarstGpu, InversionTwinRecoversTheParametersOnOneGpu) {
  SKIP_WITHOUT_GPUS(1);
  expect_twin_recovered<karst::Single>(Devices::first(1));
}

// The cush variant over every logical GPU.
TEST(KarstGpu, InversionTwinRecoversTheParametersWithCush) {
  SKIP_WITHOUT_GPUS(1);
  expect_twin_recovered<karst::MultiCush>(Devices::first(cush::DeviceSet::available()));
}

}  // namespace

// Injected faults (support/faults.hpp): every checked CUDA call of the cush variant fails once,
// on the streaming and the resident path; each failure is a cush error naming the call, and
// leaves no GPU memory behind.
TEST(KarstGpu, CushVariantFailsCleanlyAtEveryCheckedCall) {
  SKIP_WITHOUT_GPUS(1);
  const Devices gpus = Devices::first(std::min(8, cush::DeviceSet::available()));
  const std::vector<Groups> members = random_members(5, 91);
  for (const karst::Path path : {karst::Path::streaming, karst::Path::resident}) {
    const karst::Setup setup{Model::heat, karst::Grid{61, 9, 0.05}, Outlet::advective, path};
    const karst::Forcing f = forcing(setup.grid, 37, 92);
    const std::vector<double> observed(f.steps(), 1.01);
    cush_test::SameAsFirst<karst::Runs> same("karst, cush", [](const karst::Runs& a, const karst::Runs& b) {
      return a.curves == b.curves && a.misfits == b.misfits;
    });
    const auto runs = [&] { same(karst::MultiCush(setup, gpus).run(f, members, observed)); };
    cush_test::walk_faults(std::string("karst, cush variant, ") +
                               (path == karst::Path::resident ? "resident" : "streaming") + " path",
                           runs, runs);
  }
}
