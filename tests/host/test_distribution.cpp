// Distributions are pure host code: exact examples, then properties over thousands of random cases.

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "cush/distribution.hpp"
#include "cush/error.hpp"

using cush::DeviceInfo;
using cush::Distribution;
using Counts = std::vector<std::size_t>;

namespace {

std::vector<DeviceInfo> devices(std::size_t p, std::size_t memory = 141, double bandwidth = 4.8e12) {
  std::vector<DeviceInfo> d(p);
  for (std::size_t i = 0; i < p; ++i) {
    d[i].id = static_cast<int>(i);
    d[i].total_memory = memory << 30;
    d[i].memory_bandwidth = bandwidth;
  }
  return d;
}

}  // namespace

TEST(Uniform, SpreadsRemaindersOneEachFromTheFront) {
  EXPECT_EQ(Distribution::uniform().counts(10, devices(4)), (Counts{3, 3, 2, 2}));
  EXPECT_EQ(Distribution::uniform().counts(8, devices(4)), (Counts{2, 2, 2, 2}));
  EXPECT_EQ(Distribution::uniform().counts(1, devices(2)), (Counts{1, 0}));
  EXPECT_EQ(Distribution::uniform().counts(0, devices(3)), (Counts{0, 0, 0}));
  EXPECT_EQ(Distribution::uniform().counts(5, devices(1)), (Counts{5}));
}

TEST(Uniform, KeepsGranulesWholeAndLetsOnlyTheLastBePartial) {
  // 10 rows of 4: 3 + 3 + 2 + 2 rows.
  EXPECT_EQ(Distribution::uniform().with_granularity(4).counts(40, devices(4)), (Counts{12, 12, 8, 8}));
  // 7 elements in granules of 4: one whole granule and a partial one.
  EXPECT_EQ(Distribution::uniform().with_granularity(4).counts(7, devices(4)), (Counts{4, 3, 0, 0}));
  // Granule larger than the extent: everything on the first device.
  EXPECT_EQ(Distribution::uniform().with_granularity(100).counts(7, devices(3)), (Counts{7, 0, 0}));
  // 18 whole granules of 2 and one element: 4, 4, 4, 3, 3 granules, the element on the last.
  EXPECT_EQ(Distribution::uniform().with_granularity(2).counts(37, devices(5)), (Counts{8, 8, 8, 6, 7}));
}

TEST(Proportional, FollowsCapacityBandwidthAndWeights) {
  auto d = devices(2);
  d[0].total_memory = std::size_t{80} << 30;
  d[1].total_memory = std::size_t{40} << 30;
  EXPECT_EQ(Distribution::memory_capacity().counts(300, d), (Counts{200, 100}));
  d[0].memory_bandwidth = 1e12;
  d[1].memory_bandwidth = 3e12;
  EXPECT_EQ(Distribution::memory_bandwidth().counts(400, d), (Counts{100, 300}));
  EXPECT_EQ(Distribution::weighted({1, 0, 3}).counts(8, devices(3)), (Counts{2, 0, 6}));
  // The partial granule stays with the last device that has weight.
  EXPECT_EQ(Distribution::weighted({1, 1, 0}).with_granularity(4).counts(10, devices(3)), (Counts{4, 6, 0}));
  EXPECT_EQ(Distribution::weighted({1, 1}).with_granularity(10).counts(100, devices(2)), (Counts{50, 50}));
}

TEST(Replicated, GivesEveryDeviceEverything) {
  EXPECT_EQ(Distribution::replicated().counts(7, devices(3)), (Counts{7, 7, 7}));
  EXPECT_TRUE(Distribution::replicated().is_replicated());
}

TEST(Custom, IsUsedAndChecked) {
  const auto front = Distribution::custom([](std::size_t n, std::span<const DeviceInfo> d) {
    Counts c(d.size(), 0);
    c[0] = n;
    return c;
  }, "front");
  EXPECT_EQ(front.counts(9, devices(3)), (Counts{9, 0, 0}));
  EXPECT_EQ(front.name(), "front");

  const auto wrong_size = Distribution::custom([](std::size_t n, auto) { return Counts{n}; });
  EXPECT_THROW((void)wrong_size.counts(4, devices(2)), cush::InvalidArgument);
  const auto wrong_sum = Distribution::custom([](std::size_t n, auto) { return Counts{n, 1}; });
  EXPECT_THROW((void)wrong_sum.counts(4, devices(2)), cush::InvalidArgument);
  const auto short_sum = Distribution::custom([](std::size_t, auto) { return Counts{1, 1}; });
  EXPECT_THROW((void)short_sum.counts(4, devices(2)), cush::InvalidArgument);
  const auto splits = Distribution::custom([](std::size_t n, auto) { return Counts{3, n - 3}; }).with_granularity(2);
  try {
    (void)splits.counts(8, devices(2));
    FAIL() << "a rule that splits a granule must be rejected";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("splits a granule of 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)Distribution::custom(nullptr), cush::InvalidArgument);
}

TEST(BadInput, IsRejectedWithTheArgumentNamed) {
  EXPECT_THROW((void)Distribution::weighted({}), cush::InvalidArgument);
  EXPECT_THROW((void)Distribution::weighted({1, -1}), cush::InvalidArgument);
  EXPECT_THROW((void)Distribution::weighted({0, 0}), cush::InvalidArgument);
  EXPECT_THROW((void)Distribution::weighted({1, NAN}), cush::InvalidArgument);
  EXPECT_THROW((void)Distribution::weighted({1, INFINITY}), cush::InvalidArgument);
  EXPECT_THROW((void)Distribution::uniform().with_granularity(0), cush::InvalidArgument);
  EXPECT_THROW((void)Distribution::uniform().counts(5, {}), cush::InvalidArgument);
  try {
    (void)Distribution::weighted({1, 2}).counts(10, devices(3));
    FAIL() << "weights of the wrong length must be rejected";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "weights");
    EXPECT_NE(std::string(e.what()).find("2 weights for 3 devices"), std::string::npos) << e.what();
  }
  auto no_memory = devices(2, 0);
  EXPECT_THROW((void)Distribution::memory_capacity().counts(10, no_memory), cush::InvalidArgument);
}

TEST(Names, DescribeTheRule) {
  EXPECT_EQ(Distribution::uniform().name(), "uniform");
  EXPECT_EQ(Distribution::weighted({1, 2.5}).name(), "weighted(1, 2.5)");
  // Each weight reads back exactly: not rounded to six decimals.
  EXPECT_EQ(Distribution::weighted({1e-7, 1}).name(), "weighted(1e-07, 1)");
  EXPECT_EQ(Distribution::weighted({0.1 + 0.2, 4800}).name(), "weighted(0.30000000000000004, 4800)");
  EXPECT_EQ(Distribution::memory_capacity().with_granularity(512).name(), "memory_capacity/granularity 512");
}

// --- properties ----------------------------------------------------------------------------------

namespace {

struct Case {
  std::size_t n;
  std::size_t granularity;
  std::vector<DeviceInfo> devices;
  std::vector<double> weights;
};

Case random_case(std::mt19937_64& g) {
  Case c;
  std::uniform_int_distribution<int> pick(0, 9);
  const int size_class = pick(g);
  std::uniform_int_distribution<std::size_t> small(0, 100), medium(0, 1'000'000), huge(0, std::size_t{1} << 44);
  c.n = size_class < 4 ? small(g) : size_class < 8 ? medium(g) : huge(g);
  const std::size_t p = std::uniform_int_distribution<std::size_t>(1, 8)(g);
  const int gran_class = pick(g);
  c.granularity = gran_class < 4 ? 1 : gran_class < 8 ? std::uniform_int_distribution<std::size_t>(2, 64)(g)
                                                      : std::uniform_int_distribution<std::size_t>(65, 100'000)(g);
  c.devices = devices(p);
  std::uniform_int_distribution<std::size_t> mem(1, 192);
  std::uniform_real_distribution<double> bw(0.5e12, 5e12), w(0.0, 10.0);
  for (auto& d : c.devices) {
    d.total_memory = mem(g) << 30;
    d.memory_bandwidth = bw(g);
  }
  c.weights.resize(p);
  for (double& x : c.weights) x = pick(g) == 0 ? 0.0 : w(g);  // some devices get nothing
  if (std::accumulate(c.weights.begin(), c.weights.end(), 0.0) == 0.0) c.weights[0] = 1.0;
  return c;
}

// The invariants every distribution keeps; `ideal` gives each device's exact share.
void check(const Counts& counts, const Case& c, const std::vector<long double>& ideal, const std::string& what) {
  ASSERT_EQ(counts.size(), c.devices.size()) << what;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    offset += counts[i];
    ASSERT_LE(offset, c.n) << what;
    if (offset < c.n) ASSERT_EQ(offset % c.granularity, 0U) << what << ": boundary " << i << " splits a granule";
    const long double slack = static_cast<long double>(c.granularity) * (1.0L + 1e-9L) + 1e-6L * ideal[i];
    ASSERT_LE(std::fabs(static_cast<long double>(counts[i]) - ideal[i]), slack)
        << what << ": device " << i << " got " << counts[i] << ", ideal " << static_cast<double>(ideal[i]);
  }
  ASSERT_EQ(offset, c.n) << what << ": counts do not add up to n";
}

std::vector<long double> ideal_shares(std::size_t n, const std::vector<double>& w) {
  long double total = 0;
  for (double x : w) total += x;
  std::vector<long double> ideal(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) ideal[i] = static_cast<long double>(n) * w[i] / total;
  return ideal;
}

}  // namespace

TEST(Properties, HoldForThousandsOfRandomCases) {
  std::mt19937_64 g(42);
  constexpr int cases = 5000;
  for (int k = 0; k < cases; ++k) {
    const Case c = random_case(g);
    const std::string what = "case " + std::to_string(k) + " (n " + std::to_string(c.n) + ", p " +
                             std::to_string(c.devices.size()) + ", granularity " + std::to_string(c.granularity) + ")";
    const std::size_t p = c.devices.size();

    const Counts uniform = Distribution::uniform().with_granularity(c.granularity).counts(c.n, c.devices);
    check(uniform, c, ideal_shares(c.n, std::vector<double>(p, 1.0)), "uniform " + what);
    // Whole granules: the front devices get the extra ones, at most one each.
    for (std::size_t i = 0; i + 1 < p; ++i)
      ASSERT_GE(uniform[i] / c.granularity, uniform[i + 1] / c.granularity) << "uniform " << what;
    ASSERT_LE(uniform.front() / c.granularity - uniform.back() / c.granularity, 1U) << "uniform " << what;

    std::vector<double> capacity(p), bandwidth(p);
    for (std::size_t i = 0; i < p; ++i) {
      capacity[i] = static_cast<double>(c.devices[i].total_memory);
      bandwidth[i] = c.devices[i].memory_bandwidth;
    }
    check(Distribution::memory_capacity().with_granularity(c.granularity).counts(c.n, c.devices), c,
          ideal_shares(c.n, capacity), "capacity " + what);
    check(Distribution::memory_bandwidth().with_granularity(c.granularity).counts(c.n, c.devices), c,
          ideal_shares(c.n, bandwidth), "bandwidth " + what);
    const Counts weighted = Distribution::weighted(c.weights).with_granularity(c.granularity).counts(c.n, c.devices);
    check(weighted, c, ideal_shares(c.n, c.weights), "weighted " + what);
    for (std::size_t i = 0; i < p; ++i)
      if (c.weights[i] == 0.0) ASSERT_EQ(weighted[i], 0U) << "a zero weight must get nothing, " << what;
  }
}
