// Case "wave", the skewed (wavefront) tiling on the host (skewed.hpp): each level's footprints tile
// the columns it must have, once each; run in ticket order, T fused steps equal T steps of
// step_host bit for bit at every order, reading only the -x, -y and -x-y neighbours' strips 2 r
// wide; another order breaks it, and the model sees it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "coefficients.hpp"
#include "reference.hpp"
#include "skewed.hpp"
#include "skewed_pipeline.hpp"
#include "support/random.hpp"

namespace wv = cases::wave;

namespace {

std::vector<double> random_values(std::size_t count, std::mt19937_64& rng) {
  return cush_test::random_values<double>(count, rng);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

std::string describe(const wv::SkewedTiling& t) {
  return "n " + std::to_string(t.n) + ", order " + std::to_string(t.order) + ", T " + std::to_string(t.steps) +
         ", tiles " + std::to_string(t.w) + " x " + std::to_string(t.h);
}

}  // namespace

// At every level the tickets' footprints cover [-(T - l) r, n + (T - l) r)^2 once each.
TEST(WaveSkewed, FootprintsTileEachLevel) {
  for (const wv::SkewedTiling t : {wv::SkewedTiling{13, 2, 4, 6, 7}, wv::SkewedTiling{17, 8, 2, 8, 9},
                                   wv::SkewedTiling{20, 4, 3, 8, 11}, wv::SkewedTiling{9, 2, 1, 1, 2}}) {
    const long r = static_cast<long>(wv::radius(t.order)), n = static_cast<long>(t.n);
    for (std::size_t l = 1; l <= t.steps; ++l) {
      const long s = static_cast<long>(t.steps - l) * r;
      std::map<std::pair<long, long>, int> covered;
      for (const wv::SkewedTile& tile : wv::skewed_tickets(t)) {
        const wv::ColumnRange f = wv::skewed_footprint(t, tile, l);
        for (long y = f.y0; y < f.y1; ++y)
          for (long x = f.x0; x < f.x1; ++x) ++covered[{x, y}];
      }
      EXPECT_EQ(static_cast<long>(covered.size()), (n + 2 * s) * (n + 2 * s)) << describe(t) << ", level " << l;
      for (const auto& [cell, times] : covered) {
        EXPECT_EQ(times, 1) << describe(t) << ", level " << l << ": (" << cell.first << ", " << cell.second << ")";
        EXPECT_TRUE(cell.first >= -s && cell.first < n + s && cell.second >= -s && cell.second < n + s);
      }
    }
  }
}

// T fused steps in ticket order equal T steps of step_host, at every order, for random grids and
// tiles (odd sizes, tiles that do not divide n, the least tiles the extra row allows); no read
// breaks the schedule, and the neighbours read strips exactly 2 r wide (none where T = 1: the one
// level a tile computes reads only the input levels).
TEST(WaveSkewed, TicketOrderEqualsStepHostBitForBit) {
  std::mt19937_64 rng(2026);
  for (int order : wv::kOrders)
    for (int trial = 0; trial < 4; ++trial) {
      const std::size_t r = wv::radius(order);
      const std::size_t steps = std::uniform_int_distribution<std::size_t>(1, 4)(rng);
      const std::size_t least = std::max<std::size_t>(1, 2 * (steps - 1) * r);
      wv::SkewedTiling t;
      t.order = order;
      t.steps = steps;
      t.w = least + std::uniform_int_distribution<std::size_t>(0, 3)(rng);
      t.h = trial == 0 ? least : least + std::uniform_int_distribution<std::size_t>(0, 5)(rng);
      t.n = std::max<std::size_t>(order + 1, std::uniform_int_distribution<std::size_t>(t.w, 3 * t.w + 2)(rng));
      SCOPED_TRACE(describe(t));
      const std::size_t count = t.n * t.n * t.n;
      const double courant2 = 0.5 * std::pow(wv::courant_limit(order), 2);
      std::vector<double> older = random_values(count, rng), current = random_values(count, rng);
      std::vector<double> want_older = older, want = current, next(count);
      for (std::size_t s = 0; s < steps; ++s) {
        wv::step_host(order, courant2, t.n, want_older, want, next);
        want_older.swap(want);
        want.swap(next);
      }
      const std::vector<wv::SkewedTile> tickets = wv::skewed_tickets(t);
      const wv::SkewedReport got = wv::skewed_steps_host(t, courant2, tickets, older, current);
      EXPECT_EQ(got.broken, 0u);
      EXPECT_TRUE(same_bits(current, want)) << "level T";
      EXPECT_TRUE(same_bits(older, want_older)) << "level T - 1";
      EXPECT_GE(got.updates, t.steps * count);
      const long strip = static_cast<long>(steps > 1 ? 2 * r : 0);
      if (t.n > t.w) EXPECT_EQ(got.edge_x, strip);
      if (t.n > t.h) EXPECT_EQ(got.edge_y, strip);
    }
}

// What a tile publishes per level: the strips 2 r wide along its +x and +y edges, 2 r (w + h) -
// 4 r^2 columns (the -x-y neighbour's corner lies in both), on a grid of whole interior tiles.
TEST(WaveSkewed, NeighboursReadTheEdgeStripsOnly) {
  for (const wv::SkewedTiling t : {wv::SkewedTiling{30, 2, 4, 10, 6}, wv::SkewedTiling{32, 8, 2, 8, 8}}) {
    SCOPED_TRACE(describe(t));
    const long r = static_cast<long>(wv::radius(t.order));
    std::mt19937_64 rng(7);
    const std::size_t count = t.n * t.n * t.n;
    std::vector<double> older = random_values(count, rng), current = random_values(count, rng);
    const wv::SkewedReport got = wv::skewed_steps_host(t, 0.1, wv::skewed_tickets(t), older, current);
    EXPECT_EQ(got.broken, 0u);
    EXPECT_EQ(got.edge_x, 2 * r);
    EXPECT_EQ(got.edge_y, 2 * r);
    EXPECT_EQ(static_cast<long>(got.published),
              2 * r * static_cast<long>(t.w + t.h) - 4 * r * r);
  }
}

// Another order breaks the schedule: the model counts the broken reads and the result is not
// step_host's (NaN spreads from them).
TEST(WaveSkewed, AnotherOrderIsSeenBroken) {
  const wv::SkewedTiling t{14, 4, 2, 5, 6};
  std::mt19937_64 rng(11);
  const std::size_t count = t.n * t.n * t.n;
  std::vector<double> older = random_values(count, rng), current = random_values(count, rng);
  std::vector<wv::SkewedTile> reversed = wv::skewed_tickets(t);
  std::reverse(reversed.begin(), reversed.end());
  const wv::SkewedReport got = wv::skewed_steps_host(t, 0.1, reversed, older, current);
  EXPECT_GT(got.broken, 0u);
  bool nan = false;
  for (double v : current) nan = nan || std::isnan(v);
  EXPECT_TRUE(nan);
  // y before x within the ticket order (column-major) is also a valid wavefront: nothing breaks.
  std::vector<wv::SkewedTile> by_columns = wv::skewed_tickets(t);
  std::stable_sort(by_columns.begin(), by_columns.end());
  older = random_values(count, rng);
  current = random_values(count, rng);
  EXPECT_EQ(wv::skewed_steps_host(t, 0.1, by_columns, older, current).broken, 0u);
}

// Bad tilings are refused, naming the least tile.
TEST(WaveSkewed, BadTilingsAreRefused) {
  std::vector<double> a(27 * 27 * 27), b(a.size());
  EXPECT_THROW(wv::check_tiling({27, 2, 4, 5, 6}), std::invalid_argument);  // 2 (T - 1) r = 6 > 5
  EXPECT_THROW(wv::check_tiling({27, 3, 2, 8, 8}), std::invalid_argument);  // no such order
  EXPECT_THROW(wv::check_tiling({8, 8, 1, 8, 8}), std::invalid_argument);   // n <= order
  EXPECT_THROW(wv::check_tiling({27, 2, 0, 8, 8}), std::invalid_argument);  // no step
  EXPECT_THROW((void)wv::skewed_footprint({27, 2, 2, 8, 8}, {0, 0}, 3), std::invalid_argument);
  EXPECT_THROW(wv::skewed_steps_host({26, 2, 2, 8, 8}, 0.1, wv::skewed_tickets({26, 2, 2, 8, 8}), a, b),
               std::invalid_argument);  // arrays of 27^3
  try {
    wv::check_tiling({27, 8, 3, 15, 16});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tiles of at least 16"), std::string::npos) << e.what();
  }
}

// The tiles run plane by plane as blocks would (skewed_pipeline.hpp): with the kernel's wait (a
// tile runs plane p once its -x, -y and -x-y neighbours ran plane p), every schedule gives T steps
// of step_host bit for bit and never stalls, from one tile resident at a time to all of them, the
// next tile at random or always the latest ticket.
TEST(WaveSkewed, PlaneByPlaneWithTheWaitEqualsStepHost) {
  std::mt19937_64 rng(29);
  for (int order : wv::kOrders)
    for (int trial = 0; trial < 3; ++trial) {
      const std::size_t r = wv::radius(order);
      wv::SkewedTiling t;
      t.order = order;
      t.steps = std::uniform_int_distribution<std::size_t>(1, 3)(rng);
      const std::size_t least = std::max<std::size_t>(1, 2 * (t.steps - 1) * r);
      t.w = least + std::uniform_int_distribution<std::size_t>(0, 2)(rng);
      t.h = least + std::uniform_int_distribution<std::size_t>(0, 3)(rng);
      t.n = std::max<std::size_t>(order + 1, std::uniform_int_distribution<std::size_t>(t.w, 2 * t.w + 3)(rng));
      const std::size_t count = t.n * t.n * t.n;
      const double courant2 = 0.5 * std::pow(wv::courant_limit(order), 2);
      const std::vector<double> older0 = random_values(count, rng), current0 = random_values(count, rng);
      std::vector<double> want_older = older0, want = current0, next(count);
      for (std::size_t s = 0; s < t.steps; ++s) {
        wv::step_host(order, courant2, t.n, want_older, want, next);
        want_older.swap(want);
        want.swap(next);
      }
      const std::size_t tiles = wv::skewed_tickets(t).size();
      for (const std::size_t resident : {std::size_t{1}, std::size_t{2}, std::size_t{5}, tiles})
        for (const bool latest : {false, true}) {
          const wv::SkewedSchedule s{resident, latest, rng(), 0};
          SCOPED_TRACE(describe(t) + ", " + std::to_string(resident) + " resident" + (latest ? ", latest first" : ""));
          std::vector<double> older = older0, current = current0;
          const wv::SkewedPipelineReport got = wv::skewed_pipeline_host(t, courant2, s, older, current);
          EXPECT_FALSE(got.stalled);
          EXPECT_EQ(got.broken, 0u);
          EXPECT_TRUE(same_bits(current, want)) << "level T";
          EXPECT_TRUE(same_bits(older, want_older)) << "level T - 1";
        }
    }
}

// The wait is tight: a tile let one plane ahead of its neighbours (slack 1), the far end of the
// wavefront first, reads cells not written yet, and the model sees it; the same schedule with
// the kernel's wait does not.
TEST(WaveSkewed, APlaneLessWaitIsSeenBroken) {
  for (const wv::SkewedTiling t : {wv::SkewedTiling{12, 2, 2, 4, 5}, wv::SkewedTiling{13, 4, 3, 8, 8}}) {
    SCOPED_TRACE(describe(t));
    std::mt19937_64 rng(5);
    const std::size_t count = t.n * t.n * t.n;
    const std::vector<double> older0 = random_values(count, rng), current0 = random_values(count, rng);
    const std::size_t tiles = wv::skewed_tickets(t).size();
    std::vector<double> older = older0, current = current0;
    const wv::SkewedPipelineReport loose = wv::skewed_pipeline_host(t, 0.1, {tiles, true, 1, 1}, older, current);
    EXPECT_GT(loose.broken, 0u);
    EXPECT_FALSE(loose.stalled);
    older = older0;
    current = current0;
    const wv::SkewedPipelineReport tight = wv::skewed_pipeline_host(t, 0.1, {tiles, true, 1, 0}, older, current);
    EXPECT_EQ(tight.broken, 0u);
    EXPECT_GT(tight.waits, 0u);  // the far end did wait
  }
  std::vector<double> a(27 * 27 * 27), b(a.size());
  EXPECT_THROW(wv::skewed_pipeline_host({27, 2, 2, 8, 8}, 0.1, {0, false, 1, 0}, a, b), std::invalid_argument);
  EXPECT_THROW(wv::skewed_pipeline_host({27, 2, 2, 8, 8}, 0.1, {1, false, 1, -1}, a, b), std::invalid_argument);
}
