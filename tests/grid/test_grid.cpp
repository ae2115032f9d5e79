// Host tests of the structured grid: process grids, block boxes, neighbours, regions, and the
// halo phases executed on host arrays (every ghost cell must end up equal to its owner's cell).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "grid/exchange_program.hpp"
#include "cush/error.hpp"
#include "cush/grid.hpp"
#include "grid/halo.hpp"
#include "support/grids.hpp"
#include "support/host_exchange.hpp"

namespace {

using cush::Box;
using cush::Decomposition;
using cush::Extent3;
using cush::GridOptions;
using cush_test::cell_value;
using cush_test::for_each_cell;
using cush_test::initial_buffers;
using cush_test::Point;
using cush_test::random_grid;
using cush_test::unset;
using cush_test::verify_buffers;
using cush_test::describe;

TEST(ProcessGrid, NearCubicBlocksLargestAlongX) {
  const Extent3 cube{420, 420, 420};
  EXPECT_EQ(cush::choose_process_grid(1, cube, 3), (Extent3{1, 1, 1}));
  EXPECT_EQ(cush::choose_process_grid(2, cube, 3), (Extent3{1, 1, 2}));  // z slabs: x and y stay whole
  EXPECT_EQ(cush::choose_process_grid(4, cube, 3), (Extent3{1, 2, 2}));
  EXPECT_EQ(cush::choose_process_grid(6, cube, 3), (Extent3{1, 2, 3}));  // blocks 420 x 210 x 140
  EXPECT_EQ(cush::choose_process_grid(8, cube, 3), (Extent3{2, 2, 2}));
  EXPECT_EQ(cush::choose_process_grid(27, cube, 3), (Extent3{3, 3, 3}));
  EXPECT_EQ(cush::choose_process_grid(2, Extent3{100, 50, 1}, 2), (Extent3{2, 1, 1}));  // 50 x 50 beats 100 x 25
  EXPECT_EQ(cush::choose_process_grid(3, Extent3{1000, 1, 1}, 1), (Extent3{3, 1, 1}));
  EXPECT_EQ(cush::choose_process_grid(4, Extent3{2, 2, 1000}, 3), (Extent3{1, 1, 4}));  // no empty block
  EXPECT_THROW((void)cush::choose_process_grid(4, Extent3{10, 1, 1}, 1, 3), cush::InvalidArgument);
  EXPECT_THROW((void)cush::choose_process_grid(5, Extent3{4, 1, 1}, 1), cush::InvalidArgument);
  EXPECT_THROW((void)cush::choose_process_grid(0, Extent3{4, 1, 1}, 1), cush::InvalidArgument);
}

TEST(Decomposition, UnevenRemaindersGoToTheFirstBlocks) {
  GridOptions o;
  o.blocks = {3, 1, 1};
  const Decomposition g(Extent3{10, 1, 1}, 1, 3, o);
  EXPECT_EQ(g.owned(0), (Box{{0, 0, 0}, {4, 1, 1}}));
  EXPECT_EQ(g.owned(1), (Box{{4, 0, 0}, {3, 1, 1}}));
  EXPECT_EQ(g.owned(2), (Box{{7, 0, 0}, {3, 1, 1}}));
  EXPECT_EQ(g.allocated(0), (Extent3{6, 1, 1}));  // no ghosts along the axes a 1D grid lacks
  EXPECT_EQ(g.index(0, Point{-1, 0, 0}), 0U);
  EXPECT_EQ(g.index(0, Point{4, 0, 0}), 5U);
  EXPECT_THROW((void)g.index(0, Point{5, 0, 0}), cush::InvalidArgument);
  EXPECT_FALSE(g.neighbor(0, 0, -1));
  EXPECT_EQ(g.neighbor(0, 0, +1), 1U);
  EXPECT_FALSE(g.neighbor(2, 0, +1));
  EXPECT_FALSE(g.neighbor(1, 1, +1));  // not an axis of the grid
}

TEST(Decomposition, BadArgumentsAreRejected) {
  GridOptions o;
  EXPECT_THROW(Decomposition(Extent3{0, 1, 1}, 1, 1), cush::InvalidArgument);
  EXPECT_THROW(Decomposition(Extent3{8, 2, 1}, 1, 1), cush::InvalidArgument);  // y beyond a 1D grid
  EXPECT_THROW(Decomposition(Extent3{8, 1, 1}, 4, 1), cush::InvalidArgument);
  o.blocks = {2, 2, 1};
  EXPECT_THROW(Decomposition(Extent3{8, 8, 1}, 2, 3, o), cush::InvalidArgument);  // 4 blocks, not 3
  o.blocks = {1, 1, 2};
  EXPECT_THROW(Decomposition(Extent3{8, 8, 1}, 2, 2, o), cush::InvalidArgument);  // z split in 2D
  o.blocks = {4, 1, 1};
  o.halo = 3;
  EXPECT_THROW(Decomposition(Extent3{8, 1, 1}, 1, 4, o), cush::InvalidArgument);  // blocks of 2 < halo 3
  o.blocks = {1, 1, 1};
  o.periodic = {true, false, false};
  EXPECT_THROW(Decomposition(Extent3{2, 1, 1}, 1, 1, o), cush::InvalidArgument);  // self-wrap needs 3 cells
  o.periodic = {false, true, false};
  o.halo = 1;
  EXPECT_THROW(Decomposition(Extent3{8, 1, 1}, 1, 1, o), cush::InvalidArgument);  // y is not an axis
  o.periodic = {false, false, false};
  o.halo = 0;
  EXPECT_THROW(Decomposition(Extent3{8, 1, 1}, 1, 1, o), cush::InvalidArgument);
  o.halo = 1;
  o.row_align = 0;
  EXPECT_THROW(Decomposition(Extent3{8, 1, 1}, 1, 1, o), cush::InvalidArgument);
  o.row_align = 4097;
  EXPECT_THROW(Decomposition(Extent3{8, 1, 1}, 1, 1, o), cush::InvalidArgument);
  const Decomposition g(Extent3{8, 8, 8}, 3, 2);
  EXPECT_THROW((void)g.interior(0, 2), cush::InvalidArgument);  // radius beyond the halo
  EXPECT_THROW((void)g.neighbor(0, 0, 0), cush::InvalidArgument);
  EXPECT_THROW((void)g.owned(2), cush::InvalidArgument);
}

TEST(Decomposition, AlignedRowsStartTheirOwnedCellsOnTheBoundary) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 300; ++trial) {
    const Decomposition g = random_grid(rng);
    SCOPED_TRACE(describe(g));
    const std::size_t align = g.row_align();
    EXPECT_LT(g.lead(), align);
    for (std::size_t b = 0; b < g.size(); ++b) {
      const Extent3 a = g.allocated(b);
      const Box o = g.owned(b);
      EXPECT_EQ(g.row_cells(b), o.size[0] + 2 * g.halo(0));
      EXPECT_EQ(a[0] % align, 0U);
      EXPECT_GE(a[0], g.row_cells(b));
      EXPECT_LT(a[0], g.row_cells(b) + align);
      EXPECT_EQ(g.allocated_cells(b), a[0] * a[1] * a[2]);
      const auto h = [&](std::size_t axis) { return static_cast<std::ptrdiff_t>(g.halo(axis)); };
      for (std::ptrdiff_t z = -h(2); z < static_cast<std::ptrdiff_t>(o.size[2]) + h(2); ++z)
        for (std::ptrdiff_t y = -h(1); y < static_cast<std::ptrdiff_t>(o.size[1]) + h(1); ++y) {
          EXPECT_EQ((g.lead() + g.index(b, Point{0, y, z})) % align, 0U);
          EXPECT_LT(g.index(b, Point{static_cast<std::ptrdiff_t>(o.size[0]) + h(0) - 1, y, z}), g.allocated_cells(b));
        }
      // The padding holds no cell.
      EXPECT_THROW((void)g.index(b, Point{static_cast<std::ptrdiff_t>(o.size[0]) + h(0), 0, 0}), cush::InvalidArgument);
    }
  }
  GridOptions o;
  o.halo = 3;
  o.row_align = 16;
  const Decomposition g(Extent3{10, 4, 4}, 3, 1, o);
  EXPECT_EQ(g.lead(), 13U);
  EXPECT_EQ(g.allocated(0), (Extent3{16, 10, 10}));
  EXPECT_EQ(g.index(0, Point{0, 1, 0}), 3U + 16U * 4U + 160U * 3U);
}

TEST(Decomposition, BlocksTileTheGridExactlyOnce) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const Decomposition g = random_grid(rng);
    SCOPED_TRACE(describe(g));
    const Extent3 e = g.extent();
    std::vector<int> owners(e[0] * e[1] * e[2], 0);
    for (std::size_t b = 0; b < g.size(); ++b) {
      EXPECT_EQ(g.block_at(g.coords(b)), b);
      const Box o = g.owned(b);
      EXPECT_FALSE(o.empty());
      for_each_cell(o, [&](const Point& p) { ++owners[p[0] + e[0] * (p[1] + e[1] * p[2])]; });
      // Blocks differ by at most one cell along an axis.
      for (std::size_t a = 0; a < 3; ++a) {
        EXPECT_LE(o.size[a], e[a] / g.blocks()[a] + 1);
        EXPECT_GE(o.size[a], e[a] / g.blocks()[a]);
      }
    }
    ASSERT_TRUE(std::all_of(owners.begin(), owners.end(), [](int n) { return n == 1; }));
  }
}

TEST(Regions, AxesBeforeTheFirstSplitAreExchangedInPlace) {
  GridOptions o;
  o.periodic = {true, true, true};
  o.blocks = {1, 1, 2};
  const Decomposition z(Extent3{16, 12, 20}, 3, 2, o);
  EXPECT_TRUE(z.exchanged_in_place(0));
  EXPECT_TRUE(z.exchanged_in_place(1));
  EXPECT_FALSE(z.exchanged_in_place(2));
  // Split along z only: the interior spans x and y, the boundary is two z slabs.
  EXPECT_EQ(z.interior(0, 1), (Box{{0, 0, 1}, {16, 12, 8}}));
  EXPECT_EQ(z.boundary(0, 1).size(), 2U);
  o.blocks = {1, 2, 1};
  const Decomposition y(Extent3{16, 12, 20}, 3, 2, o);
  EXPECT_TRUE(y.exchanged_in_place(0));
  EXPECT_FALSE(y.exchanged_in_place(1));
  EXPECT_FALSE(y.exchanged_in_place(2));  // after a split axis, even with one block
  EXPECT_EQ(y.interior(0, 1), (Box{{0, 1, 1}, {16, 4, 18}}));
  // One block: every ghost is a copy of the block's own cells, all filled in place.
  o.blocks = {1, 1, 1};
  const Decomposition one(Extent3{16, 12, 20}, 3, 1, o);
  EXPECT_EQ(one.interior(0, 1), (Box{{0, 0, 0}, {16, 12, 20}}));
  EXPECT_TRUE(one.boundary(0, 1).empty());
  EXPECT_THROW((void)one.exchanged_in_place(3), cush::InvalidArgument);
}

TEST(Regions, InteriorAndBoundaryPartitionTheOwnedCells) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const Decomposition g = random_grid(rng);
    SCOPED_TRACE(describe(g));
    for (std::size_t b = 0; b < g.size(); ++b) {
      const Box o = g.owned(b);
      for (std::size_t r = 0; r <= g.halo(0); ++r) {
        const Box in = g.interior(b, r);
        const std::vector<Box> shell = g.boundary(b, r);
        EXPECT_LE(shell.size(), 6U);
        std::vector<int> hits(o.volume(), 0);
        const auto at = [&](const Point& p) { return p[0] + o.size[0] * (p[1] + o.size[1] * p[2]); };
        for_each_cell(in, [&](const Point& p) {
          ++hits[at(p)];
          // An interior cell's stencil stays off every ghost that an exchange writes after
          // exchange_start() returns (not those of axes exchanged in place).
          for (std::size_t a = 0; a < 3; ++a) {
            if (g.exchanged_in_place(a)) continue;
            if (g.neighbor(b, a, -1)) EXPECT_GE(p[a], static_cast<std::ptrdiff_t>(r));
            if (g.neighbor(b, a, +1)) EXPECT_LT(p[a] + static_cast<std::ptrdiff_t>(r), static_cast<std::ptrdiff_t>(o.size[a]));
          }
        });
        for (const Box& s : shell) {
          EXPECT_FALSE(s.empty());
          for_each_cell(s, [&](const Point& p) {
            ASSERT_TRUE((Box{{0, 0, 0}, o.size}).contains(p));
            ++hits[at(p)];
          });
        }
        ASSERT_TRUE(std::all_of(hits.begin(), hits.end(), [](int n) { return n == 1; })) << "radius " << r;
        // The interior is as large as it may be: one cell more on a side would touch a ghost
        // written later.
        if (r == 0) EXPECT_EQ(in, (Box{{0, 0, 0}, o.size}));
        for (std::size_t a = 0; a < 3 && !in.empty(); ++a) {
          const bool later = !g.exchanged_in_place(a);
          EXPECT_EQ(in.lo[a], later && g.neighbor(b, a, -1) ? static_cast<std::ptrdiff_t>(r) : 0) << "axis " << a;
          const std::ptrdiff_t gap = static_cast<std::ptrdiff_t>(o.size[a]) - (in.lo[a] + static_cast<std::ptrdiff_t>(in.size[a]));
          EXPECT_EQ(gap, later && g.neighbor(b, a, +1) ? static_cast<std::ptrdiff_t>(r) : 0) << "axis " << a;
        }
      }
    }
  }
}

// grown(): every cell of the grown box is an owned cell or a ghost the exchange fills (one that
// stands for a cell of the grid, wrapping around periodic axes: verify_buffer's rule), and the box
// is grown by exactly `layers` on each side that has such ghosts, by none on the others.
TEST(Regions, GrownBoxesHoldOnlyCellsTheExchangeFills) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 300; ++trial) {
    const Decomposition g = random_grid(rng);
    SCOPED_TRACE(describe(g));
    for (std::size_t b = 0; b < g.size(); ++b) {
      const Box o = g.owned(b);
      EXPECT_EQ(g.grown(b, 0), (Box{{0, 0, 0}, o.size}));
      for (std::size_t layers = 1; layers <= g.depth(); ++layers) {
        const Box grown = g.grown(b, layers);
        for (std::size_t a = 0; a < 3; ++a) {
          const auto n = static_cast<std::ptrdiff_t>(g.extent()[a]);
          const std::ptrdiff_t first = o.lo[a] + grown.lo[a];
          const std::ptrdiff_t last = first + static_cast<std::ptrdiff_t>(grown.size[a]) - 1;
          // Outside the owned range only on sides with ghost layers, and inside the grid unless periodic.
          if (first < o.lo[a]) {
            EXPECT_GE(g.halo(a), layers) << "axis " << a;
            EXPECT_TRUE(first >= 0 || g.periodic(a)) << "axis " << a;
          }
          if (last >= o.lo[a] + static_cast<std::ptrdiff_t>(o.size[a])) {
            EXPECT_GE(g.halo(a), layers) << "axis " << a;
            EXPECT_TRUE(last < n || g.periodic(a)) << "axis " << a;
          }
          // Grown wherever a side's ghosts stand for cells of the grid.
          const bool low_filled = g.halo(a) > 0 && (o.lo[a] > 0 || g.periodic(a));
          const bool high_filled = g.halo(a) > 0 && (o.lo[a] + static_cast<std::ptrdiff_t>(o.size[a]) < n || g.periodic(a));
          EXPECT_EQ(grown.lo[a], low_filled ? -static_cast<std::ptrdiff_t>(layers) : 0) << "axis " << a;
          EXPECT_EQ(grown.size[a], o.size[a] + (low_filled ? layers : 0) + (high_filled ? layers : 0)) << "axis " << a;
        }
      }
      EXPECT_THROW((void)g.grown(b, g.depth() + 1), cush::InvalidArgument);
    }
  }
}

// Runs the phases on host buffers and checks every cell of every block's buffer.
void check_exchange(const Decomposition& g) {
  SCOPED_TRACE(describe(g));
  std::vector<std::vector<double>> buf = initial_buffers(g);
  const std::vector<cush::HaloPhase> phases = cush::halo_phases(g);
  std::size_t expected_messages = 0;
  for (std::size_t a = 0; a < g.dims(); ++a)
    for (std::size_t b = 0; b < g.size(); ++b)
      for (int dir : {-1, 1}) expected_messages += g.neighbor(b, a, dir) ? 1 : 0;
  std::size_t messages = 0;
  for (const cush::HaloPhase& phase : phases) {
    // Messages of a phase read before any writes: snapshot the buffers, then copy.
    const std::vector<std::vector<double>> before = buf;
    std::vector<std::vector<int>> written(g.size());
    for (std::size_t b = 0; b < g.size(); ++b) written[b].assign(g.allocated_cells(b), 0);
    for (const cush::HaloMessage& m : phase.messages) {
      ++messages;
      EXPECT_EQ(m.axis, phase.axis);
      ASSERT_EQ(m.src.size, m.dst.size);
      const Box o = g.owned(m.to);
      for_each_cell(m.src, [&](const Point& s) {
        const Point d{s[0] - m.src.lo[0] + m.dst.lo[0], s[1] - m.src.lo[1] + m.dst.lo[1], s[2] - m.src.lo[2] + m.dst.lo[2]};
        // Only ghost cells are written.
        EXPECT_FALSE((Box{{0, 0, 0}, o.size}).contains(d));
        const std::size_t di = g.index(m.to, d);
        ++written[m.to][di];
        buf[m.to][di] = before[m.from][g.index(m.from, s)];
      });
    }
    for (const auto& w : written) ASSERT_TRUE(std::all_of(w.begin(), w.end(), [](int n) { return n <= 1; }));
  }
  EXPECT_EQ(messages, expected_messages);
  verify_buffers(g, buf);
}

TEST(HaloPhases, EveryGhostCellEqualsItsOwnerAfterTheExchange) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 400; ++trial) check_exchange(random_grid(rng));
}

TEST(HaloPhases, TheIssuesProcessGridsAndOneBlock) {
  for (const Extent3 blocks : {Extent3{2, 1, 1}, Extent3{1, 2, 1}, Extent3{1, 1, 2}, Extent3{1, 1, 1}})
    for (std::size_t depth = 1; depth <= 4; ++depth)
      for (bool periodic : {false, true}) {
        GridOptions o;
        o.blocks = blocks;
        o.halo = depth;
        o.periodic = {periodic, periodic, periodic};
        const Decomposition g(Extent3{9, 10, 11}, 3, blocks[0] * blocks[1] * blocks[2], o);
        check_exchange(g);
        // Three axes, two messages per block and axis where there is a neighbour: 6 per block
        // when every axis is periodic (26 neighbour regions filled by 6 messages).
        if (periodic) {
          std::size_t total = 0;
          for (const auto& phase : cush::halo_phases(g)) total += phase.messages.size();
          EXPECT_EQ(total, 6 * g.size());
        }
      }
}

TEST(HaloPhases, MessagesOfAFaceHaveTheFaceShape) {
  // Two blocks split along z, depth 2, not periodic: the z phase sends 2 layers of the x and y
  // extents including their ghosts (which hold the user's boundary values).
  GridOptions o;
  o.halo = 2;
  const Decomposition g(Extent3{6, 5, 8}, 3, 2, o);
  ASSERT_EQ(g.blocks(), (Extent3{1, 1, 2}));
  const std::vector<cush::HaloPhase> phases = cush::halo_phases(g);
  ASSERT_EQ(phases.size(), 1U);  // no x or y neighbours
  ASSERT_EQ(phases[0].axis, 2U);
  ASSERT_EQ(phases[0].messages.size(), 2U);
  const cush::HaloMessage& up = phases[0].messages[0].from == 0 ? phases[0].messages[0] : phases[0].messages[1];
  EXPECT_EQ(up.to, 1U);
  EXPECT_EQ(up.dir, 1);
  EXPECT_EQ(up.src, (Box{{-2, -2, 2}, {10, 9, 2}}));
  EXPECT_EQ(up.dst, (Box{{-2, -2, -2}, {10, 9, 2}}));
}

// The Field's exchange program run on host arrays, step by step as the GPU engine runs it: a
// contiguous step as one linear copy (which must equal the box copy it replaces), any other as
// a box copy; staging buffers sized as the program says.
// `pack_to_peer` says which senders may pack straight into which receivers' memory.
void run_program(const Decomposition& g, const cush::detail::PeerStores& pack_to_peer = {}) {
  SCOPED_TRACE(describe(g));
  using cush::detail::BufferRef;
  const cush::detail::ExchangeProgram program = cush::detail::exchange_program(g, pack_to_peer);
  std::vector<std::vector<double>> blocks = initial_buffers(g);
  std::vector<std::vector<double>> send(program.ends.size());
  std::vector<std::vector<double>> recv(program.ends.size());
  for (std::size_t m = 0; m < program.ends.size(); ++m) {
    send[m].assign(program.send_cells[m], unset);
    recv[m].assign(program.recv_cells[m], unset);
  }
  const auto buffer = [&](const BufferRef& b) -> std::vector<double>& {
    if (b.kind == BufferRef::Kind::send) return send.at(b.index);
    if (b.kind == BufferRef::Kind::recv) return recv.at(b.index);
    return blocks.at(b.index);
  };
  const auto run = [&](const cush::detail::ExchangeStep& step) { cush_test::run_step(step, buffer(step.src.buffer), buffer(step.dst.buffer)); };
  std::size_t remote = 0;
  for (const cush::detail::ExchangePhase& phase : program.phases) {
    for (const auto& step : phase.sends) {
      run(step);
      // Steps on a sender's stream touch that sender's buffers, the receiver's ghosts or its
      // receive buffer (after waiting for the receiver's start).
      if (step.src.buffer.kind == BufferRef::Kind::block) EXPECT_EQ(step.src.buffer.index, step.stream);
      // A kernel (not a copy) that writes another block's memory is a pack into a peer: only
      // where allowed, and then it reads the sender's block itself (no staging on the sender).
      const std::size_t written = step.dst.buffer.kind == BufferRef::Kind::block ? step.dst.buffer.index
                                  : step.dst.buffer.kind == BufferRef::Kind::recv ? program.ends.at(step.dst.buffer.index).second
                                                                                  : program.ends.at(step.dst.buffer.index).first;
      if (!step.contiguous && written != step.stream) {
        ASSERT_TRUE(pack_to_peer && pack_to_peer(step.stream, written));
        EXPECT_EQ(step.src.buffer.kind, BufferRef::Kind::block);
      }
    }
    for (const auto& step : phase.receives) {
      run(step);
      EXPECT_EQ(step.dst.buffer.index, step.stream);
      EXPECT_EQ(step.src.buffer.kind, BufferRef::Kind::recv);
    }
    remote += phase.links.size();
  }
  if (g.size() == 1) EXPECT_EQ(remote, 0U);
  verify_buffers(g, blocks);
}

TEST(ExchangeProgram, RunOnHostArraysFillsEveryGhost) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 400; ++trial) run_program(random_grid(rng));
  // Packs straight into peers: everywhere, and between random pairs of blocks only.
  for (int trial = 0; trial < 200; ++trial) run_program(random_grid(rng), [](std::size_t, std::size_t) { return true; });
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint32_t salt = rng();
    run_program(random_grid(rng), [salt](std::size_t from, std::size_t to) { return ((from * 7 + to * 13 + salt) & 2U) != 0; });
  }
  for (const Extent3 blocks : {Extent3{2, 1, 1}, Extent3{1, 2, 1}, Extent3{1, 1, 2}, Extent3{1, 1, 1}})
    for (bool periodic : {false, true}) {
      GridOptions o;
      o.blocks = blocks;
      o.halo = 2;
      o.periodic = {periodic, periodic, periodic};
      run_program(Decomposition(Extent3{9, 10, 11}, 3, blocks[0] * blocks[1] * blocks[2], o));
    }
}

TEST(ExchangeProgram, ContiguousFacesSkipPackAndUnpack) {
  // Blocks split along z: the z faces (whole x-y planes with their ghosts) are runs, so each
  // message is one device-to-device copy and needs no staging.
  GridOptions o;
  o.halo = 2;
  const Decomposition z(Extent3{16, 12, 20}, 3, 2, o);
  ASSERT_EQ(z.blocks(), (Extent3{1, 1, 2}));
  const cush::detail::ExchangeProgram pz = cush::detail::exchange_program(z);
  ASSERT_EQ(pz.phases.size(), 1U);
  EXPECT_EQ(pz.phases[0].sends.size(), 2U);
  EXPECT_TRUE(pz.phases[0].receives.empty());
  for (const auto& step : pz.phases[0].sends) EXPECT_TRUE(step.contiguous);
  // Split along x: an x face is 2 cells wide in every row, so it is packed, copied, unpacked.
  o.blocks = {2, 1, 1};
  const Decomposition x(Extent3{16, 12, 20}, 3, 2, o);
  const cush::detail::ExchangeProgram px = cush::detail::exchange_program(x);
  ASSERT_EQ(px.phases.size(), 1U);
  EXPECT_EQ(px.phases[0].sends.size(), 4U);  // 2 packs + 2 copies
  EXPECT_EQ(px.phases[0].receives.size(), 2U);
  EXPECT_EQ(px.send_cells[0], 2U * 12U * 20U);
  EXPECT_EQ(px.phases[0].links.size(), 2U);
  // Packed straight into the receivers' memory: one kernel per message, no send buffer.
  const cush::detail::ExchangeProgram pd =
      cush::detail::exchange_program(x, [](std::size_t, std::size_t) { return true; });
  ASSERT_EQ(pd.phases.size(), 1U);
  EXPECT_EQ(pd.phases[0].sends.size(), 2U);
  for (const auto& step : pd.phases[0].sends) {
    EXPECT_FALSE(step.contiguous);
    EXPECT_EQ(step.dst.buffer.kind, cush::detail::BufferRef::Kind::recv);
  }
  EXPECT_EQ(pd.phases[0].receives.size(), 2U);
  EXPECT_EQ(pd.send_cells[0], 0U);
  EXPECT_EQ(pd.recv_cells[0], 2U * 12U * 20U);
  // Contiguous faces stay one copy whatever the peers allow.
  const cush::detail::ExchangeProgram pzd =
      cush::detail::exchange_program(z, [](std::size_t, std::size_t) { return true; });
  for (const auto& step : pzd.phases[0].sends) EXPECT_TRUE(step.contiguous);
  EXPECT_TRUE(cush::detail::box_is_contiguous(Extent3{8, 4, 3}, Extent3{8, 4, 2}));
  EXPECT_TRUE(cush::detail::box_is_contiguous(Extent3{8, 4, 3}, Extent3{8, 2, 1}));
  EXPECT_TRUE(cush::detail::box_is_contiguous(Extent3{8, 4, 3}, Extent3{5, 1, 1}));
  EXPECT_FALSE(cush::detail::box_is_contiguous(Extent3{8, 4, 3}, Extent3{8, 2, 2}));
  EXPECT_FALSE(cush::detail::box_is_contiguous(Extent3{8, 4, 3}, Extent3{7, 2, 1}));
}

TEST(ExchangeProgram, PaddedRowsKeepContiguousFacesOneCopy) {
  // Rows padded to 16 cells: a z face is whole rows with padding between them, one run of the
  // same shape on both sides, so still one copy (padding included) and no staging.
  GridOptions o;
  o.halo = 2;
  o.row_align = 16;
  const Decomposition z(Extent3{13, 12, 20}, 3, 2, o);
  ASSERT_EQ(z.blocks(), (Extent3{1, 1, 2}));
  EXPECT_EQ(z.allocated(0), (Extent3{32, 16, 14}));  // 13 + 4 cells padded to 32
  const cush::detail::ExchangeProgram pz = cush::detail::exchange_program(z);
  ASSERT_EQ(pz.phases.size(), 1U);
  ASSERT_EQ(pz.phases[0].sends.size(), 2U);
  EXPECT_TRUE(pz.phases[0].receives.empty());
  for (const auto& step : pz.phases[0].sends) {
    EXPECT_TRUE(step.contiguous);
    EXPECT_EQ(cush::detail::box_span(step.src.alloc, step.size), (2U * 16U - 1U) * 32U + 17U);
  }
  EXPECT_EQ(pz.send_cells[0] + pz.recv_cells[0], 0U);
  const cush::detail::StepSide rows{{}, Extent3{32, 16, 14}, Extent3{0, 0, 3}, 17};
  EXPECT_TRUE(cush::detail::box_spans_rows(rows, Extent3{17, 16, 2}));
  EXPECT_TRUE(cush::detail::box_spans_rows(rows, Extent3{17, 3, 1}));
  EXPECT_FALSE(cush::detail::box_spans_rows(rows, Extent3{17, 3, 2}));  // gaps between planes
  EXPECT_FALSE(cush::detail::box_spans_rows(rows, Extent3{16, 16, 2}));  // not whole rows
  EXPECT_FALSE(cush::detail::box_is_contiguous(rows.alloc, Extent3{17, 16, 2}));
}

}  // namespace
