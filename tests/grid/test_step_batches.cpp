// Which box copies of an exchange run as one launch (grid/step_batches.hpp): the independence of
// two copies against a cell-by-cell check on random boxes, and where a batch ends. The exchange
// schedule's model (test_exchange_schedule) runs every schedule with its batches side by side.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "grid/step_batches.hpp"

namespace {

using cush::Extent3;
using cush::detail::BufferRef;
using cush::detail::ExchangeStep;
using cush::detail::Instruction;
using cush::detail::ScheduleStream;
using cush::detail::StepSide;

constexpr Extent3 alloc{9, 7, 5};

StepSide side(std::size_t block, Extent3 lo) { return StepSide{BufferRef{BufferRef::Kind::block, block, 0}, alloc, lo, 9}; }

ExchangeStep box(std::size_t src_block, Extent3 src_lo, std::size_t dst_block, Extent3 dst_lo, Extent3 size) {
  return ExchangeStep{0, side(src_block, src_lo), side(dst_block, dst_lo), size, false};
}

Instruction step(const ExchangeStep& s, std::size_t block = 0, bool throttled = false) {
  Instruction in;
  in.op = Instruction::Op::step;
  in.stream = ScheduleStream{ScheduleStream::Kind::block, block};
  in.step = s;
  in.step.stream = block;
  in.throttled = throttled;
  return in;
}

using Cell = std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>;  // buffer, x, y, z

std::set<Cell> cells(const StepSide& s, const Extent3& size) {
  std::set<Cell> out;
  for (std::size_t z = 0; z < size[2]; ++z)
    for (std::size_t y = 0; y < size[1]; ++y)
      for (std::size_t x = 0; x < size[0]; ++x) out.insert({s.buffer.index, s.lo[0] + x, s.lo[1] + y, s.lo[2] + z});
  return out;
}

bool meet(const std::set<Cell>& a, const std::set<Cell>& b) {
  for (const Cell& c : a)
    if (b.count(c) != 0) return true;
  return false;
}

}  // namespace

TEST(StepBatches, IndependenceIsWhatTheCellsSay) {
  std::mt19937_64 rng(2027);
  const auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
  const auto random_box = [&] {
    Extent3 size{}, src{}, dst{};
    for (std::size_t d = 0; d < 3; ++d) {  // sometimes an empty box; corners near each other
      size[d] = pick(0, 19) == 0 ? 0 : pick(1, 3);
      src[d] = pick(0, 2);
      dst[d] = pick(0, 2);
    }
    return box(pick(0, 1), src, pick(0, 1), dst, size);
  };
  int independent = 0, dependent = 0;
  for (int i = 0; i < 20000; ++i) {
    const ExchangeStep a = random_box(), b = random_box();
    const bool truth = !meet(cells(a.dst, a.size), cells(b.src, b.size)) && !meet(cells(a.src, a.size), cells(b.dst, b.size)) &&
                       !meet(cells(a.dst, a.size), cells(b.dst, b.size));
    ASSERT_EQ(cush::detail::steps_independent(a, b), truth) << "case " << i;
    ASSERT_EQ(cush::detail::steps_independent(b, a), truth) << "case " << i << ", the other way round";
    (truth ? independent : dependent) += 1;
  }
  std::printf("%d independent, %d dependent\n", independent, dependent);
  EXPECT_GT(independent, 2000);  // the draw has both
  EXPECT_GT(dependent, 2000);
}

TEST(StepBatches, OneBufferSeenInTwoShapesCountsAsOverlapping) {
  ExchangeStep a = box(0, {0, 0, 0}, 0, {5, 0, 0}, {1, 1, 1});
  ExchangeStep b = box(1, {0, 0, 0}, 0, {0, 3, 0}, {1, 1, 1});
  EXPECT_TRUE(cush::detail::steps_independent(a, b));
  b.dst.alloc = Extent3{3, 7, 5};
  EXPECT_FALSE(cush::detail::steps_independent(a, b));
}

TEST(StepBatches, ABatchIsConsecutiveIndependentBoxCopiesOnOneStream) {
  // A periodic block's x ghosts: low from the high interior, high from the low; then a y ghost
  // row that reads the x ghosts just written.
  const ExchangeStep low = box(0, {6, 1, 1}, 0, {0, 1, 1}, {1, 5, 3});
  const ExchangeStep high = box(0, {1, 1, 1}, 0, {7, 1, 1}, {1, 5, 3});
  const ExchangeStep row = box(0, {0, 5, 1}, 0, {0, 0, 1}, {9, 1, 3});
  std::vector<Instruction> list{step(low), step(high), step(row)};
  EXPECT_EQ(cush::detail::batch_end(list, 0), 2U);  // the row reads what the first two write
  EXPECT_EQ(cush::detail::batch_end(list, 1), 2U);
  EXPECT_EQ(cush::detail::batch_end(list, 2), 3U);
  EXPECT_EQ(cush::detail::batch_end(list, 3), 4U);  // past the end: nothing to batch

  // What ends a batch: a record or wait, another stream, a contiguous copy, another throttling.
  Instruction record;
  record.op = Instruction::Op::record;
  for (const Instruction& stop : {record, step(high, 1), step(high, 0, true)}) {
    list = {step(low), stop, step(high)};
    EXPECT_EQ(cush::detail::batch_end(list, 0), 1U);
  }
  Instruction contiguous = step(high);
  contiguous.step.contiguous = true;
  list = {step(low), contiguous};
  EXPECT_EQ(cush::detail::batch_end(list, 0), 1U);
  list = {contiguous, step(low)};
  EXPECT_EQ(cush::detail::batch_end(list, 0), 1U);  // a contiguous copy starts none
  list = {record, step(low)};
  EXPECT_EQ(cush::detail::batch_end(list, 0), 1U);

  // At most `max` copies: eight disjoint one-cell copies in two buffers.
  list.clear();
  for (std::size_t k = 0; k < 8; ++k) list.push_back(step(box(0, {k, 0, 0}, 1, {k, 0, 0}, {1, 1, 1})));
  EXPECT_EQ(cush::detail::batch_end(list, 0), cush::detail::box_copy_max_batch);
  EXPECT_EQ(cush::detail::batch_end(list, 0, 8), 8U);
  EXPECT_EQ(cush::detail::batch_end(list, 6), 8U);
}
