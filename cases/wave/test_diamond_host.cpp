// Case "wave", DiamondTorre's schedule on the host (diamond.hpp): the diamonds tile the plane,
// a sweep of T steps in tower order equals T leapfrog steps of step_host bit for bit, another
// order breaks it (the model sees it), and the traffic of one tower is the model's.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "diamond.hpp"
#include "reference.hpp"

namespace wv = cases::wave;

namespace {

std::vector<double> random_values(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(count);
  for (double& x : v) x = u(rng);
  return v;
}

long cells(int r) { return 2L * r * r + 2L * r + 1; }

bool has_nan_inside(const std::vector<double>& v, std::size_t nx, std::size_t ny, std::size_t nz, std::size_t margin) {
  for (std::size_t z = 0; z < nz; ++z)
    for (std::size_t y = margin; y < ny - margin; ++y)
      for (std::size_t x = margin; x < nx - margin; ++x)
        if (std::isnan(v[x + nx * (y + ny * z)])) return true;
  return false;
}

}  // namespace

// Every column of a region lies in the diamond of the tile diamond_tile names, and a tile whose
// diamond lies inside the region is named by exactly its 2R^2 + 2R + 1 columns.
TEST(WaveDiamond, DiamondsTileThePlane) {
  for (int r = 1; r <= 6; ++r) {
    std::map<std::pair<long, long>, long> named;
    const long lo = -23, hi = 31;
    for (long y = lo; y < hi; ++y)
      for (long x = lo; x < hi; ++x) {
        const wv::TowerBase b = wv::diamond_tile(x, y, r);
        ASSERT_LE(std::labs(x - b.x) + std::labs(y - b.y), r) << "(" << x << ", " << y << "), radius " << r;
        ++named[{b.x, b.y}];
      }
    int whole = 0;
    for (const auto& [b, count] : named)
      if (b.first - r >= lo && b.first + r < hi && b.second - r >= lo && b.second + r < hi) {
        EXPECT_EQ(count, cells(r)) << "tile (" << b.first << ", " << b.second << "), radius " << r;
        ++whole;
      }
    EXPECT_GT(whole, 3) << "radius " << r;
  }
}

// T steps through one sweep against T calls of step_host: random grids, data, Courant numbers,
// diamond sizes and step counts, every value compared bit for bit (NaN, where the schedule failed,
// compares unequal).
TEST(WaveDiamond, ASweepEqualsLeapfrogStepsBitForBit) {
  std::mt19937_64 rng(20261128);
  std::uniform_int_distribution<std::size_t> side(3, 14), steps_of(1, 7);
  std::uniform_int_distribution<int> radius_of(1, 5);
  std::uniform_real_distribution<double> courant(0.05, 0.57);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = side(rng), steps = steps_of(rng);
    const int r = radius_of(rng);
    const double c2 = std::pow(courant(rng), 2);
    std::vector<double> older = random_values(n * n * n, rng), current = random_values(n * n * n, rng);
    std::vector<double> prev = older, cur = current;
    for (std::size_t s = 0; s < steps; ++s) {
      wv::step_host(2, c2, n, prev, cur, prev);
      std::swap(prev, cur);
    }
    const wv::DiamondTraffic t = wv::diamond_steps_host(c2, n, r, steps, older, current);
    SCOPED_TRACE(testing::Message() << "n " << n << ", " << steps << " steps, radius " << r);
    ASSERT_EQ(std::memcmp(current.data(), cur.data(), cur.size() * sizeof(double)), 0) << "level T";
    ASSERT_EQ(std::memcmp(older.data(), prev.data(), prev.size() * sizeof(double)), 0) << "level T - 1";
    // Every column of the block once per level: the block is (n + 2T)^2 columns.
    EXPECT_EQ(t.updates, (n + 2 * steps) * (n + 2 * steps) * steps);
    EXPECT_EQ(t.broken, 0u);
  }
}

// The sweep order is what makes it right: with the towers in the opposite order (b_x increasing)
// a tower reads columns its right-hand neighbours have not brought to its level yet: the model
// counts broken updates and the owned columns come out NaN; in the sweep order no update breaks,
// not even at the block's edges.
TEST(WaveDiamond, AnotherOrderBreaksTheSchedule) {
  std::mt19937_64 rng(7);
  for (int r = 1; r <= 4; ++r)
    for (std::size_t steps : {2, 5}) {
      const std::size_t nx = 17 + 2 * steps, ny = 13 + 2 * steps, nz = 5;
      const std::vector<wv::TowerBase> sweep = wv::diamond_towers(nx, ny, r, steps);
      std::vector<wv::TowerBase> reversed(sweep.rbegin(), sweep.rend());
      const std::vector<double> even0 = random_values(nx * ny * nz, rng), odd0 = random_values(nx * ny * nz, rng);
      std::vector<double> even = even0, odd = odd0;
      EXPECT_EQ(wv::diamond_sweep_host(0.2, nx, ny, nz, r, steps, sweep, even, odd).broken, 0u);
      EXPECT_FALSE(has_nan_inside(steps % 2 ? odd : even, nx, ny, nz, steps)) << "radius " << r << ", " << steps << " steps";
      even = even0;
      odd = odd0;
      EXPECT_GT(wv::diamond_sweep_host(0.2, nx, ny, nz, r, steps, reversed, even, odd).broken, 0u);
      EXPECT_TRUE(has_nan_inside(steps % 2 ? odd : even, nx, ny, nz, steps)) << "radius " << r << ", " << steps << " steps";
    }
}

// Stages: together they hold the sweep's towers; the towers of a stage run whole in either order
// (or a step at a time together) give the same bits as the sweep, with no broken update. Two
// neighbouring stages merged into one do not (so the test can see a dependence).
TEST(WaveDiamond, TowersOfAStageRunTogether) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> side(3, 12), steps_of(1, 6);
  std::uniform_int_distribution<int> radius_of(1, 4);
  int merged_broke = 0, merged_tried = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const std::size_t n = side(rng), steps = steps_of(rng), nz = 4;
    const int r = radius_of(rng);
    const std::size_t nx = n + 2 * steps, ny = n + 2 * steps + 1;
    SCOPED_TRACE(testing::Message() << nx << " x " << ny << ", " << steps << " steps, radius " << r);
    const std::vector<std::vector<wv::TowerBase>> stages = wv::diamond_stages(nx, ny, r, steps);
    std::vector<std::pair<long, long>> all, staged;
    for (const wv::TowerBase& b : wv::diamond_towers(nx, ny, r, steps)) all.emplace_back(b.x, b.y);
    for (const auto& stage : stages)
      for (const wv::TowerBase& b : stage) staged.emplace_back(b.x, b.y);
    std::sort(all.begin(), all.end());
    std::sort(staged.begin(), staged.end());
    ASSERT_EQ(all, staged);
    const std::vector<double> even0 = random_values(nx * ny * nz, rng), odd0 = random_values(nx * ny * nz, rng);
    std::vector<double> expect_even = even0, expect_odd = odd0;
    const std::vector<wv::TowerBase> order = wv::diamond_towers(nx, ny, r, steps);
    ASSERT_EQ(wv::diamond_sweep_host(0.3, nx, ny, nz, r, steps, order, expect_even, expect_odd).broken, 0u);
    for (auto how : {wv::DiamondInterleave::towers_in_turn, wv::DiamondInterleave::towers_in_turn_reversed,
                     wv::DiamondInterleave::steps_together}) {
      std::vector<double> even = even0, odd = odd0;
      EXPECT_EQ(wv::diamond_stages_sweep_host(0.3, nx, ny, nz, r, steps, stages, how, even, odd).broken, 0u);
      // NaN at the edges on both sides: compare bits.
      EXPECT_EQ(std::memcmp(even.data(), expect_even.data(), even.size() * sizeof(double)), 0);
      EXPECT_EQ(std::memcmp(odd.data(), expect_odd.data(), odd.size() * sizeof(double)), 0);
    }
    // Merge each stage with the next, one pair at a time, and run the pair's towers together.
    for (std::size_t k = 0; k + 1 < stages.size() && steps > 1; ++k) {
      std::vector<std::vector<wv::TowerBase>> fewer(stages.begin(), stages.end());
      fewer[k].insert(fewer[k].begin(), fewer[k + 1].begin(), fewer[k + 1].end());
      fewer.erase(fewer.begin() + static_cast<long>(k) + 1);
      ++merged_tried;
      bool broke = false;
      for (auto how : {wv::DiamondInterleave::towers_in_turn, wv::DiamondInterleave::towers_in_turn_reversed}) {
        std::vector<double> even = even0, odd = odd0;
        broke = broke || wv::diamond_stages_sweep_host(0.3, nx, ny, nz, r, steps, fewer, how, even, odd).broken > 0;
      }
      merged_broke += broke ? 1 : 0;
    }
  }
  // Stages are as few as the dependences allow: merging two neighbouring ones breaks.
  EXPECT_EQ(merged_broke, merged_tried) << merged_broke << " of " << merged_tried << " merged pairs broke";
}

// One tower inside a large block: it loads its base diamond, then the 2R + 1 columns entering per
// step, and stores as many: per update 2 (|D| + (T - 1)(2R + 1)) / (T |D|) columns moved.
TEST(WaveDiamond, OneTowerMovesItsBaseAndTheColumnsEnteringIt) {
  for (int r = 1; r <= 5; ++r)
    for (std::size_t steps : {1, 4, 9}) {
      const std::size_t nx = 40, ny = 30, nz = 3;
      std::vector<double> even(nx * ny * nz, 1.0), odd(nx * ny * nz, 1.0);
      const wv::TowerBase tower = wv::diamond_tile(10, 15, r);
      const wv::DiamondTraffic t = wv::diamond_sweep_host(0.2, nx, ny, nz, r, steps, {&tower, 1}, even, odd);
      const std::size_t base = static_cast<std::size_t>(cells(r)), entering = static_cast<std::size_t>(2 * r + 1);
      EXPECT_EQ(t.updates, steps * base) << "radius " << r;
      EXPECT_EQ(t.loads, base + (steps - 1) * entering) << "radius " << r;
      EXPECT_EQ(t.stores, base + (steps - 1) * entering) << "radius " << r;
    }
}

TEST(WaveDiamond, BadInputIsRejected) {
  std::vector<double> a(27), b(27), c(26);
  EXPECT_THROW((void)wv::diamond_tile(0, 0, 0), std::invalid_argument);
  EXPECT_THROW((void)wv::diamond_towers(5, 5, 0, 2), std::invalid_argument);
  EXPECT_THROW((void)wv::diamond_towers(5, 5, 1, 0), std::invalid_argument);
  EXPECT_THROW((void)wv::diamond_towers(0, 5, 1, 1), std::invalid_argument);
  EXPECT_THROW(wv::diamond_steps_host(0.2, 3, 1, 0, a, b), std::invalid_argument);
  EXPECT_THROW(wv::diamond_steps_host(0.2, 3, 1, 1, a, c), std::invalid_argument);
  EXPECT_THROW(wv::diamond_steps_host(0.2, 2, 1, 1, a, b), std::invalid_argument);
  const std::vector<wv::TowerBase> none;
  EXPECT_THROW(wv::diamond_sweep_host(0.2, 3, 3, 2, 1, 1, none, {a.data(), 18}, {b.data(), 18}), std::invalid_argument);
  EXPECT_THROW(wv::diamond_sweep_host(0.2, 3, 3, 3, 1, 1, none, a, c), std::invalid_argument);
}

// How a GPU sweep splits a tower's column over the blocks of a cluster (diamond_chunks).
TEST(WaveDiamond, ColumnsSplitIntoEqualBlocksOfAtMost256Threads) {
  const auto split = [](std::size_t nz, std::size_t chunks = 0) {
    const wv::DiamondChunks c = wv::diamond_chunks(nz, chunks);
    return std::pair{c.chunks, c.lanes};
  };
  EXPECT_EQ(split(3), std::pair(1, 3));
  EXPECT_EQ(split(256), std::pair(1, 256));
  EXPECT_EQ(split(258), std::pair(2, 129));    // the fewest blocks that divide it
  EXPECT_EQ(split(1024), std::pair(4, 256));   // 1024^3: four blocks a tower
  EXPECT_EQ(split(770), std::pair(5, 154));    // not 2 blocks of 385 threads
  EXPECT_EQ(split(2048), std::pair(8, 256));
  EXPECT_EQ(split(12, 4), std::pair(4, 3));    // asked for
  EXPECT_EQ(split(3, 3), std::pair(3, 1));     // a node a block
  EXPECT_EQ(split(40, 1), std::pair(1, 40));
  EXPECT_THROW((void)wv::diamond_chunks(2), std::invalid_argument);        // no stencil
  EXPECT_THROW((void)wv::diamond_chunks(257), std::invalid_argument);      // prime, past one block
  EXPECT_THROW((void)wv::diamond_chunks(771), std::invalid_argument);      // 3 x 257
  EXPECT_THROW((void)wv::diamond_chunks(2049), std::invalid_argument);     // past 8 blocks of 256
  EXPECT_THROW((void)wv::diamond_chunks(100, 3), std::invalid_argument);   // 3 does not divide 100
  EXPECT_THROW((void)wv::diamond_chunks(512, 1), std::invalid_argument);   // one block of 512
  EXPECT_THROW((void)wv::diamond_chunks(72, 9), std::invalid_argument);    // more than 8 blocks
}
