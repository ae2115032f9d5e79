// Case "wave": every variant and schedule against the host leapfrog, byte for byte, at every order
// on odd grids and every GPU count the host has (virtual GPUs too); the discrete mode after 200
// steps; bad input.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "coefficients.hpp"
#include "reference.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "wave.hpp"

namespace wave = cases::wave;

namespace {

struct Levels {
  std::vector<double> prev, cur;
};

Levels random_levels(std::size_t n) {
  Levels l{std::vector<double>(n * n * n), std::vector<double>(n * n * n)};
  cush_test::fill_random(std::span<double>(l.prev));
  cush_test::fill_random(std::span<double>(l.cur));
  return l;
}

// `steps` host steps in place over the older level, the roles swapped after each.
Levels host_steps(Levels l, const wave::Problem& p, std::size_t steps) {
  const double courant2 = p.courant * p.courant;
  for (std::size_t s = 0; s < steps; ++s) {
    wave::step_host(p.order, courant2, p.n, l.prev, l.cur, l.prev);
    std::swap(l.prev, l.cur);
  }
  return l;
}

// Runs `steps` steps as run(first) then run(steps - first): the roles carried between calls.
template <class V>
Levels gpu_steps(const Levels& in, const wave::Problem& p, const cases::Devices& gpus, wave::Options o, std::size_t steps,
                 std::size_t first) {
  V v(p, gpus, o);
  v.upload(in.prev.data(), in.cur.data());
  v.run(first);
  v.run(steps - first);
  v.wait();
  Levels out{std::vector<double>(in.prev.size(), NAN), std::vector<double>(in.cur.size(), NAN)};
  v.download(out.prev.data(), out.cur.data());
  return out;
}

void expect_same(const Levels& got, const Levels& want, const std::string& what) {
  for (const auto& [g, w, level] : {std::tuple{&got.prev, &want.prev, "older"}, std::tuple{&got.cur, &want.cur, "current"}}) {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < w->size(); ++i)
      if (std::memcmp(&(*g)[i], &(*w)[i], sizeof(double)) != 0 && bad++ < 5)
        ADD_FAILURE() << what << ", " << level << " level: node " << i << " is " << (*g)[i] << ", expected " << (*w)[i];
    EXPECT_EQ(bad, 0U) << what << ", " << level << " level";
  }
}

wave::Problem problem(std::size_t n, int order) { return {n, order, 0.9 * wave::courant_limit(order)}; }

std::string name(const wave::Problem& p, std::size_t steps) {
  return "order " + std::to_string(p.order) + ", " + std::to_string(p.n) + "^3, " + std::to_string(steps) + " steps";
}

}  // namespace

TEST(CaseWave, SingleGpuEqualsTheHostLeapfrog) {
  CUSH_REQUIRE_GPUS(1);
  for (int order : wave::kOrders)
    for (std::size_t n : {9U, 17U}) {
      const wave::Problem p = problem(n, order);
      const Levels in = random_levels(n);
      for (std::size_t steps : {0U, 1U, 4U, 7U})
        expect_same(gpu_steps<wave::Single>(in, p, cases::Devices::first(1), {}, steps, steps / 2),
                    host_steps(in, p, steps), "single, " + name(p, steps));
    }
}

// 5 steps as 2 + 3 on every GPU count the grid has planes for and every device order worth testing.
TEST(CaseWave, MultiGpuVariantsEqualTheHostLeapfrog) {
  CUSH_REQUIRE_GPUS(1);
  std::vector<std::vector<int>> orders = cush_test::device_orders();
  for (int count = 2; count < cush::DeviceSet::available(); ++count) orders.push_back(cush_test::first_devices(count));
  for (int order : wave::kOrders)
    for (std::size_t n : {9U, 20U}) {
      const wave::Problem p = problem(n, order);
      const Levels in = random_levels(n);
      const Levels want = host_steps(in, p, 5);
      for (const std::vector<int>& ids : orders) {
        if (n < ids.size() * wave::radius(order)) continue;  // slabs thinner than the halo
        const cases::Devices gpus = cases::Devices::of(ids);
        for (wave::Schedule s : {wave::Schedule::bulk, wave::Schedule::overlap}) {
          const std::string what = std::string(s == wave::Schedule::bulk ? "bulk, " : "overlap, ") + name(p, 5) +
                                   " on devices " + cush_test::to_string(ids);
          expect_same(gpu_steps<wave::MultiCuda>(in, p, gpus, {s}, 5, 2), want, "raw, " + what);
          expect_same(gpu_steps<wave::MultiCush>(in, p, gpus, {s}, 5, 2), want, "cush, " + what);
        }
      }
    }
}

// The physics: started with u^{-1} = cos(theta) u^0 the mode sin 2 pi x sin 2 pi y sin 2 pi z
// evolves as cos(n theta) u^0 (reference.hpp); 200 steps of the cush variant on every GPU.
TEST(CaseWave, TheDiscreteModeEvolvesExactly) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices gpus = cases::Devices::first(std::min(cush::DeviceSet::available(), 4));
  for (int order : {2, 8}) {
    const wave::Problem p = problem(16, order);
    const double theta = wave::mode_angle(order, p.courant, p.n);
    Levels in{wave::mode(p.n), wave::mode(p.n)};
    for (double& u : in.prev) u *= std::cos(theta);
    const Levels got = gpu_steps<wave::MultiCush>(in, p, gpus, {wave::Schedule::overlap}, 200, 100);
    const std::vector<double> u0 = wave::mode(p.n);
    double worst = 0;
    for (std::size_t i = 0; i < u0.size(); ++i) worst = std::max(worst, std::fabs(got.cur[i] - std::cos(200 * theta) * u0[i]));
    EXPECT_LE(worst, 1e-10) << "order " << order;
  }
}

TEST(CaseWave, BadInputIsRejected) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices one = cases::Devices::first(1);
  EXPECT_THROW(wave::Single({16, 3, 0.3}, one), std::invalid_argument);                              // no such order
  EXPECT_THROW(wave::Single({16, 2, 1.01 * wave::courant_limit(2)}, one), std::invalid_argument);  // unstable
  EXPECT_THROW(wave::MultiCush({16, 2, 0.0}, one), std::invalid_argument);                          // no time step
  EXPECT_THROW(wave::MultiCuda({8, 8, 0.3}, one), std::invalid_argument);                           // narrower than the stencil
  const cases::Devices three{{0, 0, 0}, {0, 0, 0}};  // rejected before any device is used
  EXPECT_THROW(wave::MultiCuda({9, 8, 0.3}, three), std::invalid_argument);  // 3 planes a GPU, radius 4
}
