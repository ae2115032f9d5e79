// Case "rbffd": every variant and schedule against the host RK4 step (reference.hpp) at the seed's
// N = 10,201 and an odd N, n = 31; the multi-GPU variants on every GPU count and device order,
// equal to the single GPU bit for bit (the split schedule within rounding); every transport of
// the cush variant; its failures clean.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rbffd.hpp"
#include "reference.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"

namespace rb = cases::rbffd;

namespace {

struct Case {
  rb::Matrix a;
  double dt = 0;
  std::vector<double> u0;
};

// The combined operator for N nodes (nu = 0.01), its time step and Y_7^3 on the nodes; made once per N.
const Case& setup(std::size_t n, std::size_t stencil = 31) {
  static std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<Case>> made;
  auto& s = made[{n, stencil}];
  if (!s) {
    s = std::make_unique<Case>();
    const std::vector<rb::Point> nodes = rb::fibonacci_nodes(n);
    const rb::Stencils st = rb::nearest_neighbours(nodes, stencil);
    rb::Coefficients c;
    c.nu = 0.01;
    s->a = rb::combined(nodes, st, rb::rbf_fd_weights(nodes, st), c);
    s->dt = rb::time_step(n);
    for (const rb::Point& p : nodes) s->u0.push_back(rb::y73(p));
  }
  return *s;
}

template <class V>
std::vector<double> gpu_steps(const Case& s, const cases::Devices& gpus, rb::Options o, std::size_t steps,
                              std::size_t first) {
  V v(rb::Problem{&s.a, s.dt}, gpus, o);
  v.upload(s.u0.data());
  v.run(first);
  v.run(steps - first);
  v.wait();
  std::vector<double> out(s.u0.size(), NAN);
  v.download(out.data());
  return out;
}

std::vector<double> host_steps(const Case& s, std::size_t steps) {
  std::vector<double> u = s.u0;
  if (steps > 0) rb::rk4(s.a, u, s.dt, steps);
  return u;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-12 * scale) && bad++ < 5)
      ADD_FAILURE() << what << ": node " << i << " is " << got[i] << ", expected " << want[i];
  EXPECT_EQ(bad, 0U) << what;
}

void expect_same_bits(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0) {
      ADD_FAILURE() << what << ": node " << i << " is " << got[i] << ", the single GPU's " << want[i];
      return;
    }
}

}  // namespace

TEST(CaseRbffd, SingleGpuMatchesTheHostStep) {
  CUSH_REQUIRE_GPUS(1);
  for (std::size_t n : {5003U, 10201U})
    for (std::size_t steps : {0U, 1U, 3U})
      expect_near(gpu_steps<rb::Single>(setup(n), cases::Devices::first(1), {}, steps, steps / 2),
                  host_steps(setup(n), steps), "single, N = " + std::to_string(n) + ", " + std::to_string(steps) + " steps");
}

// 3 steps run as 1 + 2 (captured: one graph, replayed 3 times), on every device order and GPU
// count (virtual GPUs where the host has one).
TEST(CaseRbffd, MultiGpuVariantsEqualTheSingleGpuBitForBit) {
  CUSH_REQUIRE_GPUS(1);
  std::vector<std::vector<int>> orders = cush_test::device_orders();
  for (int count = 2; count < cush::DeviceSet::available(); ++count) orders.push_back(cush_test::first_devices(count));
  for (std::size_t n : {5003U, 10201U}) {
    const Case& s = setup(n);
    const std::vector<double> single = gpu_steps<rb::Single>(s, cases::Devices::first(1), {}, 3, 1);
    expect_near(single, host_steps(s, 3), "single, N = " + std::to_string(n));
    for (const std::vector<int>& order : orders) {
      const cases::Devices gpus = cases::Devices::of(order);
      const std::string on = "N = " + std::to_string(n) + " on devices " + cush_test::to_string(order);
      for (rb::Schedule sch : {rb::Schedule::bulk, rb::Schedule::overlap})
        for (bool graph : {false, true}) {
          const std::string how = std::string(sch == rb::Schedule::bulk ? "bulk " : "overlap ") + (graph ? "captured " : "");
          const rb::Options o{sch, cush::GraphTransport::automatic, graph};
          expect_same_bits(gpu_steps<rb::MultiCuda>(s, gpus, o, 3, 1), single, "raw " + how + on);
          expect_same_bits(gpu_steps<rb::MultiCush>(s, gpus, o, 3, 1), single, "cush " + how + on);
        }
    }
  }
}

// The split schedule sums the boundary rows in another order: within 1e-13 of the single GPU
// (relative to the largest value), on every device order, uncaptured and captured.
TEST(CaseRbffd, SplitScheduleMatchesWithinRounding) {
  CUSH_REQUIRE_GPUS(1);
  const Case& s = setup(10201);
  const std::vector<double> single = gpu_steps<rb::Single>(s, cases::Devices::first(1), {}, 3, 1);
  double scale = 0;
  for (double v : single) scale = std::max(scale, std::fabs(v));
  const auto expect_close = [&](const std::vector<double>& got, const std::string& what) {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(std::fabs(got[i] - single[i]) <= 1e-13 * scale) && bad++ < 5)
        ADD_FAILURE() << what << ": node " << i << " is " << got[i] << ", the single GPU's " << single[i];
    EXPECT_EQ(bad, 0U) << what;
  };
  for (const std::vector<int>& order : cush_test::device_orders())
    for (bool graph : {false, true}) {
      const cases::Devices gpus = cases::Devices::of(order);
      const rb::Options o{rb::Schedule::split, cush::GraphTransport::automatic, graph};
      const std::string on = std::string(graph ? "captured, " : "") + "devices " + cush_test::to_string(order);
      expect_close(gpu_steps<rb::MultiCuda>(s, gpus, o, 3, 1), "raw split, " + on);
      expect_close(gpu_steps<rb::MultiCush>(s, gpus, o, 3, 1), "cush split, " + on);
    }
}

// The cush variant on every transport the devices allow (peer and nccl only between distinct GPUs).
TEST(CaseRbffd, CushVariantOnEveryTransport) {
  CUSH_REQUIRE_GPUS(1);
  const std::vector<int> all = cush_test::device_orders().back();
  const cases::Devices gpus = cases::Devices::of(all);
  const Case& s = setup(5003);
  const std::vector<double> single = gpu_steps<rb::Single>(s, cases::Devices::first(1), {}, 2, 1);
  std::vector<cush::GraphTransport> transports{cush::GraphTransport::staged, cush::GraphTransport::host_staging};
  if (!cush_test::gpus_are_shared()) {
    transports.push_back(cush::GraphTransport::peer);
    transports.push_back(cush::GraphTransport::nccl);
  }
  for (cush::GraphTransport t : transports)
    for (rb::Schedule sch : {rb::Schedule::bulk, rb::Schedule::overlap})
      expect_same_bits(gpu_steps<rb::MultiCush>(s, gpus, {sch, t}, 2, 1), single,
                       std::string("cush, ") + cush::to_string(t) + " on " + cush_test::to_string(all));
}

// Two GPUs (or virtual ones), many steps: an ordering bug between the GPUs would show.
TEST(CaseRbffd, ManyStepsOnTwoDevices) {
  CUSH_REQUIRE_GPUS(1);
  const std::vector<int> all = cush_test::device_orders().back();
  if (all.size() < 2) GTEST_SKIP() << "needs 2 devices (GPUs or virtual GPUs)";
  const cases::Devices gpus = cases::Devices::of({all[1], all[0]});
  const Case& s = setup(10201);
  const std::vector<double> single = gpu_steps<rb::Single>(s, cases::Devices::first(1), {}, 40, 17);
  expect_same_bits(gpu_steps<rb::MultiCuda>(s, gpus, {rb::Schedule::overlap}, 40, 17), single, "raw overlap, 40 steps");
  expect_same_bits(gpu_steps<rb::MultiCush>(s, gpus, {rb::Schedule::overlap}, 40, 17), single, "cush overlap, 40 steps");
  const rb::Options captured{rb::Schedule::overlap, cush::GraphTransport::automatic, true};
  expect_same_bits(gpu_steps<rb::MultiCuda>(s, gpus, captured, 40, 17), single, "raw overlap captured, 40 steps");
  expect_same_bits(gpu_steps<rb::MultiCush>(s, gpus, captured, 40, 17), single, "cush overlap captured, 40 steps");
}

TEST(CaseRbffd, BadProblemsAreRejected) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices one = cases::Devices::first(1);
  EXPECT_THROW(rb::Single(rb::Problem{}, one), std::invalid_argument);
  EXPECT_THROW(rb::MultiCuda(rb::Problem{}, one), std::invalid_argument);
  EXPECT_THROW(rb::MultiCush(rb::Problem{}, one), std::invalid_argument);
  EXPECT_THROW(rb::MultiCush(rb::Problem{&setup(5003).a, -1.0}, one), std::invalid_argument);
}

// Injected faults (support/faults.hpp): every checked CUDA call of the cush variant fails once,
// bulk, overlapped and captured; each failure is a cush error naming the call and leaves no memory behind.
TEST(CaseRbffd, CushVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices gpus = cases::Devices::first(cush::DeviceSet::available());
  const Case& s = setup(401, 17);
  for (const rb::Options o : {rb::Options{rb::Schedule::bulk}, rb::Options{rb::Schedule::overlap},
                              rb::Options{rb::Schedule::overlap, cush::GraphTransport::automatic, true}}) {
    cush_test::SameAsFirst<std::vector<double>> same("rbffd, cush");
    const auto steps = [&] { same(gpu_steps<rb::MultiCush>(s, gpus, o, 2, 1)); };
    cush_test::walk_faults(std::string("rbffd, cush variant, ") + (o.schedule == rb::Schedule::bulk ? "bulk" : "overlap") +
                               (o.graph ? ", captured" : ""),
                           steps, steps);
  }
}
