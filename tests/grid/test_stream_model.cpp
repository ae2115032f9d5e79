// The stream checker itself (support/simulate_streams.hpp): CUDA's binding of a wait to the
// latest record enqueued before it, and the conflicts it reports.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "support/simulate_streams.hpp"

namespace {

using cush_test::Access;
using cush_test::Cells3;
using cush_test::StreamModel;

std::string name(std::size_t buffer) { return "buffer " + std::to_string(buffer); }

const Access write_all{0, {0, 0, 0}, {4, 4, 1}, true};
const Access read_all{0, {0, 0, 0}, {4, 4, 1}, false};

TEST(StreamModel, AWaitOrdersAfterTheRecordBeforeIt) {
  StreamModel m;
  const std::size_t w = m.work(0, {write_all}, "write");
  m.record(0, 7, "record");
  m.wait(1, 7, "wait");
  const std::size_t r = m.work(1, {read_all}, "read");
  EXPECT_TRUE(m.before(w, r));
  EXPECT_FALSE(m.before(r, w));
  EXPECT_EQ(m.unordered_conflict(name), "");
}

TEST(StreamModel, AWaitForANeverRecordedEventIsNoWait) {
  StreamModel m;
  m.wait(1, 7, "wait");  // recorded only later: binds to nothing
  m.work(0, {write_all}, "write");
  m.record(0, 7, "record");
  m.work(1, {read_all}, "read");
  EXPECT_EQ(m.unordered_conflict(name),
            "unordered: #1 (write) writes and #3 (read) reads cells [0, 4) x [0, 4) x [0, 1) of buffer 0");
}

TEST(StreamModel, AWaitBindsToTheLatestRecordEnqueuedBeforeIt) {
  StreamModel m;
  m.record(0, 7, "first record");
  m.wait(1, 7, "wait");                    // the first record: before the write
  const std::size_t w = m.work(0, {write_all}, "write");
  m.record(0, 7, "second record");         // too late for the wait above
  const std::size_t r = m.work(1, {read_all}, "read");
  EXPECT_FALSE(m.before(w, r));
  EXPECT_NE(m.unordered_conflict(name), "");
  // A new wait binds to the second record.
  StreamModel n;
  n.record(0, 7, "first record");
  const std::size_t w2 = n.work(0, {write_all}, "write");
  n.record(0, 7, "second record");
  n.wait(1, 7, "wait");
  const std::size_t r2 = n.work(1, {read_all}, "read");
  EXPECT_TRUE(n.before(w2, r2));
  EXPECT_EQ(n.unordered_conflict(name), "");
}

TEST(StreamModel, OrderIsTransitiveAndOnlyConflictsCount) {
  StreamModel m;
  const std::size_t w = m.work(0, {write_all}, "write");
  m.record(0, 1, "r1");
  m.wait(1, 1, "w1");
  m.record(1, 2, "r2");
  m.wait(2, 2, "w2");
  const std::size_t r = m.work(2, {read_all}, "read");
  EXPECT_TRUE(m.before(w, r));
  // Two reads of the same cells (this one after the write too, not after the first read), and
  // writes of other cells or other buffers, need no order.
  m.wait(3, 2, "w3");
  m.work(3, {read_all}, "another read");
  m.work(4, {Access{0, {0, 0, 1}, {4, 4, 1}, true}}, "the next plane");
  m.work(5, {Access{1, {0, 0, 0}, {4, 4, 1}, true}}, "another buffer");
  EXPECT_EQ(m.unordered_conflict(name), "");
  m.work(6, {Access{0, {3, 3, 0}, {9, 9, 9}, true}}, "a corner");
  EXPECT_EQ(m.unordered_conflict(name),
            "unordered: #0 (write) writes and #10 (a corner) writes cells [3, 4) x [3, 4) x [0, 1) of buffer 0");
}

TEST(StreamModel, RandomOrdersKeepTheOrder) {
  StreamModel m;
  for (std::size_t i = 0; i < 20; ++i) {
    m.work(i % 3, {}, "work");
    if (i % 4 == 0) m.record(i % 3, i, "record");
    if (i % 5 == 0) m.wait((i + 1) % 3, i - i % 4, "wait");
  }
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<std::size_t> order = m.random_order(rng);
    ASSERT_EQ(order.size(), m.ops().size());
    std::vector<std::size_t> place(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) place[order[i]] = i;
    for (std::size_t b = 0; b < order.size(); ++b)
      for (std::size_t a = 0; a < b; ++a)
        if (m.before(a, b)) {
          ASSERT_LT(place[a], place[b]);
        }
  }
}

TEST(StreamModel, RunBoxesCoverExactlyTheRun) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 2000; ++trial) {
    const Cells3 dims{1 + rng() % 7, 1 + rng() % 5, 1 + rng() % 4};
    const std::size_t cells = dims[0] * dims[1] * dims[2];
    const std::size_t first = rng() % cells;
    const std::size_t count = rng() % (cells - first + 1);
    std::vector<int> hits(cells, 0);
    for (const auto& [lo, size] : cush_test::run_boxes(dims, first, count))
      for (std::size_t z = lo[2]; z < lo[2] + size[2]; ++z)
        for (std::size_t y = lo[1]; y < lo[1] + size[1]; ++y)
          for (std::size_t x = lo[0]; x < lo[0] + size[0]; ++x) {
            ASSERT_LT(x, dims[0]);
            ASSERT_LT(y, dims[1]);
            ASSERT_LT(z, dims[2]);
            ++hits[x + dims[0] * (y + dims[1] * z)];
          }
    for (std::size_t i = 0; i < cells; ++i)
      ASSERT_EQ(hits[i], i >= first && i < first + count ? 1 : 0) << "cell " << i << " of a run of " << count << " from " << first;
  }
}

}  // namespace
