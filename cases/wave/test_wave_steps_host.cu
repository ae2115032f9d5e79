// Case "wave": the streaming kernel's ring (wave_steps.cuh's ring_cell) on the host. No GPU needed.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "wave_steps.cuh"

namespace wv = cases::wave;

namespace {

// The cells a tile's cross stencil of radius r reads outside the w x h tile, in the frame where
// (r, r) is the tile's corner.
std::set<std::pair<int, int>> cross_reads_outside(int r, int w, int h) {
  std::set<std::pair<int, int>> cells;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = -r; k <= r; ++k)
        for (const auto& [dy, dx] : {std::pair{k, 0}, std::pair{0, k}}) {
          const int cy = y + dy, cx = x + dx;
          if (cy < 0 || cy >= h || cx < 0 || cx >= w) cells.insert({cy + r, cx + r});
        }
  return cells;
}

}  // namespace

// The 2 r (w + h) ring cells are distinct and are exactly what the stencil reads outside the tile.
TEST(WaveSteps, RingCellsAreWhatTheCrossReadsOutsideTheTile) {
  for (int r = 1; r <= 4; ++r)
    for (const auto& [w, h] : {std::pair{64, 32}, std::pair{64, 16}, std::pair{32, 16}, std::pair{5, 3}, std::pair{1, 1}}) {
      const std::string what = "r " + std::to_string(r) + ", " + std::to_string(w) + " x " + std::to_string(h);
      std::set<std::pair<int, int>> ring;
      for (int i = 0; i < 2 * r * (w + h); ++i) {
        const wv::RingCell c = wv::ring_cell(i, r, w, h);
        EXPECT_TRUE(ring.insert({c.y, c.x}).second) << what << ": cell " << i << " twice";
      }
      EXPECT_EQ(ring, cross_reads_outside(r, w, h)) << what;
    }
}

// The case's shapes: the ring is the cells a tile reads around it, and the shared plane holds it.
TEST(WaveSteps, CaseShapesHoldTheirRing) {
  using Ring8 = wv::WaveShape<4, 1>;
  static_assert(Ring8::kLoadRing && Ring8::kGrow == 0 && Ring8::kX == 64 && Ring8::kY == 24);
  EXPECT_EQ(Ring8::kRing, 2 * 4 * (64 + 24));
  EXPECT_EQ(Ring8::kRingPerThread, 2);  // 704 cells over 512 threads
  using Grown = wv::WaveShape<1, 4>;
  static_assert(!Grown::kLoadRing && Grown::kGrow == 4 && Grown::kX == 56 && Grown::kY == 24 && Grown::kRing == 0);
  for (int i = 0; i < Ring8::kRing; ++i) {  // every ring cell inside the shared plane's frame
    const wv::RingCell c = wv::ring_cell(i, 4, Ring8::kW, Ring8::kH);
    const int at = c.y * Ring8::kPitch + c.x;
    EXPECT_GE(at, 0);
    EXPECT_LT(at, Ring8::kPlane);
  }
}
