// Case "advection": every variant and schedule against the host reference step, on odd grids
// (sizes that fill no thread block and no z run exactly), on 1 and 2 GPUs.

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "advection.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace adv = cases::advection;

namespace {

std::vector<double> host_steps(std::vector<double> u, adv::Grid g, const std::array<double, 27>& a, std::size_t steps) {
  std::vector<double> next(u.size());
  for (std::size_t s = 0; s < steps; ++s) {
    adv::step_host(u, next, g, a);
    u.swap(next);
  }
  return u;
}

// Runs `steps` steps as run(first) then run(steps - first), so that state carried between calls
// (the current buffer, a deep halo's cycle) is tested too.
template <class V>
std::vector<double> gpu_steps(const std::vector<double>& in, adv::Grid g, const std::array<double, 27>& a,
                              const cases::Devices& gpus, adv::Options o, std::size_t steps, std::size_t first) {
  V v(g, a, gpus, o);
  v.upload(in.data());
  v.run(first);
  v.run(steps - first);
  v.wait();
  std::vector<double> out(in.size(), NAN);
  v.download(out.data());
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << ": point " << i << " is " << got[i] << ", expected " << want[i];
  EXPECT_EQ(bad, 0U) << what;
}

const std::array<double, 27> kCoefficients = adv::coefficients({1.0, -0.7, 0.4}, {0.9, 0.9, 0.9});


}  // namespace

TEST(CaseAdvection, SingleGpuMatchesTheHostStep) {
  CUSH_REQUIRE_GPUS(1);
  for (const adv::Grid g : {adv::Grid{1, 1, 1}, adv::Grid{3, 5, 2}, adv::Grid{17, 9, 23}, adv::Grid{33, 31, 20}}) {
    std::vector<double> in(g.points());
    cush_test::fill_random(std::span<double>(in));
    for (std::size_t steps : {0U, 1U, 4U}) {
      const std::string what = "single " + std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" +
                               std::to_string(g.nz) + ", " + std::to_string(steps) + " steps";
      expect_near(gpu_steps<adv::Single>(in, g, kCoefficients, cases::Devices::first(1), {}, steps, steps / 2), host_steps(in, g, kCoefficients, steps),
                  what);
    }
  }
}

namespace {

// Every multi-GPU variant, schedule and depth on `gpus` GPUs; combinations the grid is too thin
// for (fewer z planes per GPU than ghost layers) are left out.
void check_multi_gpu(adv::Grid g, const cases::Devices& gpus, std::size_t steps, std::size_t first) {
  std::vector<double> in(g.points());
  cush_test::fill_random(std::span<double>(in));
  const std::vector<double> want = host_steps(in, g, kCoefficients, steps);
  const std::string on = std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) +
                         " on devices " + cush_test::to_string(gpus.cush) + ", " + std::to_string(steps) + " steps";
  const std::size_t planes = g.nz / static_cast<std::size_t>(gpus.count());
  for (adv::Schedule s : {adv::Schedule::bulk, adv::Schedule::overlap}) {
    const std::string name = s == adv::Schedule::bulk ? "bulk " : "overlap ";
    expect_near(gpu_steps<adv::MultiCuda>(in, g, kCoefficients, gpus, {s, 1}, steps, first), want, "raw " + name + on);
    expect_near(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, {s, 1}, steps, first), want, "cush " + name + on);
  }
  for (std::size_t depth : {2U, 3U}) {
    if (planes < depth || g.nx < depth || g.ny < depth) continue;
    expect_near(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, {adv::Schedule::bulk, depth}, steps, first), want,
                "cush depth " + std::to_string(depth) + " " + on);
  }
}

}  // namespace

// 5 steps run as 2 + 3: a deep-halo cycle of 2 or 3 cut at the end of a call. Every GPU count the
// grid has planes for, and every device order worth testing.
TEST(CaseAdvection, MultiGpuVariantsMatchTheHostStep) {
  CUSH_REQUIRE_GPUS(1);
  std::vector<std::vector<int>> orders = cush_test::device_orders();
  for (int count = 2; count < cush::DeviceSet::available(); ++count) orders.push_back(cush_test::first_devices(count));
  for (const adv::Grid g : {adv::Grid{3, 5, 6}, adv::Grid{17, 9, 23}, adv::Grid{33, 31, 20}})
    for (const std::vector<int>& order : orders)
      if (g.nz >= order.size()) check_multi_gpu(g, cases::Devices::of(order), 5, 2);
}

// Two GPUs, kernels large enough and enough steps for an ordering bug between the GPUs to show.
TEST(CaseAdvection, TwoGpusOverManySteps) {
  CUSH_REQUIRE_GPUS(2);
  check_multi_gpu(adv::Grid{96, 80, 72}, cases::Devices::of({1, 0}), 30, 13);
}

TEST(CaseAdvection, BadOptionsAreRejected) {
  CUSH_REQUIRE_GPUS(1);
  const adv::Grid g{8, 8, 8};
  const cases::Devices one = cases::Devices::first(1);
  EXPECT_THROW(adv::MultiCush(g, kCoefficients, one, {adv::Schedule::overlap, 2}), std::invalid_argument);
  EXPECT_THROW(adv::MultiCush(g, kCoefficients, one, {adv::Schedule::bulk, 0}), std::invalid_argument);
  const cases::Devices two{{0, 0}, {0, 0}};  // rejected before any device is used
  EXPECT_THROW(adv::MultiCuda(adv::Grid{8, 8, 1}, kCoefficients, two, {}), std::invalid_argument);
}

// Injected faults (support/faults.hpp): every checked CUDA call of the cush variant fails once,
// with the bulk and the overlapped schedule and a deep halo; each failure is a cush error naming
// the call, and leaves no GPU memory behind.
TEST(CaseAdvection, CushVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices gpus = cases::Devices::first(cush::DeviceSet::available());
  const adv::Grid g{13, 11, 3 * static_cast<std::size_t>(gpus.count()) + 1};
  std::vector<double> in(g.points());
  cush_test::fill_random(std::span<double>(in));
  for (const adv::Options o : {adv::Options{adv::Schedule::bulk, 1}, adv::Options{adv::Schedule::overlap, 1},
                               adv::Options{adv::Schedule::bulk, 2}}) {
    cush_test::SameAsFirst<std::vector<double>> same("advection, cush");
    const auto steps = [&] { same(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, o, 3, 1)); };
    cush_test::walk_faults(std::string("advection, cush variant, ") +
                               (o.schedule == adv::Schedule::bulk ? "bulk" : "overlap") + ", depth " + std::to_string(o.depth),
                           steps, steps);
  }
}
