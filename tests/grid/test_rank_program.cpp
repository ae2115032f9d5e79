// Host tests of the exchange over ranks (grid/rank_program.hpp), all ranks simulated in one
// process: each rank holds only its own blocks' buffers and runs only its part of the program;
// the transfers between ranks go through a mailbox keyed by their tags. Every ghost cell of every
// block must end up equal to its owner's cell, as in the single-process exchange.

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "cush/grid.hpp"
#include "grid/rank_program.hpp"
#include "support/grids.hpp"
#include "support/host_exchange.hpp"

namespace {

using cush::Decomposition;
using cush::Extent3;
using cush::GridOptions;
using cush::detail::BufferRef;
using cush::detail::RankProgram;
using cush::detail::RankTransfer;

// One rank's memory: its blocks' buffers and its staging buffers; another rank's are empty, so
// a step that touches them fails run_step's size check.
struct RankMemory {
  std::vector<std::vector<double>> blocks, send, recv;
  std::vector<double>& at(const BufferRef& b) {
    if (b.kind == BufferRef::Kind::send) return send.at(b.index);
    if (b.kind == BufferRef::Kind::recv) return recv.at(b.index);
    return blocks.at(b.index);
  }
};

// A transfer in flight: its cells and the ranks at both ends.
struct Mail {
  std::vector<double> cells;
  int from = 0, to = 0;
  std::size_t from_block = 0, to_block = 0;
};

// Runs every rank's program, a phase at a time per rank as far as its incoming transfers have
// arrived (ranks need not be in step), then checks every rank's blocks.
void run_over_ranks(const Decomposition& g, const std::vector<int>& block_rank, int ranks,
                    const cush::detail::PeerStores& pack_to_peer = {}) {
  SCOPED_TRACE(cush_test::describe(g) + ", " + std::to_string(ranks) + " ranks");
  const cush::detail::ExchangeProgram program = cush::detail::exchange_program_over_ranks(g, block_rank, pack_to_peer);
  std::vector<RankProgram> parts;
  std::vector<RankMemory> memory(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    parts.push_back(cush::detail::rank_program(program, block_rank, r));
    RankMemory& m = memory[static_cast<std::size_t>(r)];
    m.blocks.resize(g.size());
    for (std::size_t b = 0; b < g.size(); ++b)
      if (block_rank[b] == r) m.blocks[b] = cush_test::initial_buffer(g, b);
    m.send.resize(program.ends.size());
    m.recv.resize(program.ends.size());
    for (std::size_t k = 0; k < program.ends.size(); ++k) {
      m.send[k].assign(parts.back().send_cells[k], cush_test::unset);
      m.recv[k].assign(parts.back().recv_cells[k], cush_test::unset);
    }
  }
  std::map<std::size_t, Mail> mailbox;
  std::vector<std::size_t> next(static_cast<std::size_t>(ranks), 0);  // each rank's next phase
  std::vector<char> sent(static_cast<std::size_t>(ranks), 0);          // its sends of that phase done
  std::size_t outgoing = 0, delivered = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (next[i] == parts[i].phases.size()) continue;
      const cush::detail::RankPhase& phase = parts[i].phases[next[i]];
      RankMemory& m = memory[i];
      if (!sent[i]) {
        for (const auto& step : phase.sends) {
          ASSERT_EQ(block_rank[step.stream], r);
          cush_test::run_step(step, m.at(step.src.buffer), m.at(step.dst.buffer));
        }
        for (const RankTransfer& t : phase.outgoing) {
          ASSERT_EQ(block_rank[t.block], r);
          ASSERT_NE(t.peer, r);
          const std::vector<double>& src = m.at(t.side.buffer);
          const std::size_t from = cush_test::offset(t.side.alloc, t.side.lo);
          ASSERT_LE(from + t.cells, src.size());
          ASSERT_EQ(mailbox.count(t.tag), 0U) << "tag " << t.tag << " sent twice";
          ASSERT_EQ(block_rank[t.peer_block], t.peer);
          mailbox[t.tag] = Mail{{src.begin() + static_cast<std::ptrdiff_t>(from), src.begin() + static_cast<std::ptrdiff_t>(from + t.cells)}, r, t.peer, t.block, t.peer_block};
          ++outgoing;
        }
        sent[i] = 1;
        progress = true;
      }
      bool arrived = true;
      for (const RankTransfer& t : phase.incoming) arrived = arrived && mailbox.count(t.tag) != 0;
      if (!arrived) continue;
      for (const RankTransfer& t : phase.incoming) {
        const Mail& mail = mailbox.at(t.tag);
        ASSERT_EQ(mail.from, t.peer);
        ASSERT_EQ(mail.to, r);
        // The two ends name each other's blocks (NCCL pairs the devices by them).
        ASSERT_EQ(mail.from_block, t.peer_block);
        ASSERT_EQ(mail.to_block, t.block);
        ASSERT_EQ(mail.cells.size(), t.cells);
        std::vector<double>& dst = m.at(t.side.buffer);
        const std::size_t to = cush_test::offset(t.side.alloc, t.side.lo);
        ASSERT_LE(to + t.cells, dst.size());
        std::copy(mail.cells.begin(), mail.cells.end(), dst.begin() + static_cast<std::ptrdiff_t>(to));
        ++delivered;
      }
      for (const auto& step : phase.receives) {
        ASSERT_EQ(block_rank[step.stream], r);
        cush_test::run_step(step, m.at(step.src.buffer), m.at(step.dst.buffer));
      }
      for (const auto& link : phase.links) EXPECT_TRUE(block_rank[link.first] == r && block_rank[link.second] == r);
      ++next[i];
      sent[i] = 0;
    }
  }
  for (int r = 0; r < ranks; ++r)
    ASSERT_EQ(next[static_cast<std::size_t>(r)], parts[static_cast<std::size_t>(r)].phases.size()) << "rank " << r << " never got its transfers";
  EXPECT_EQ(delivered, outgoing);
  for (std::size_t b = 0; b < g.size(); ++b) cush_test::verify_buffer(g, b, memory[static_cast<std::size_t>(block_rank[b])].blocks[b]);
}

std::vector<int> random_ranks(std::mt19937& rng, std::size_t blocks, int ranks) {
  std::vector<int> r(blocks);
  for (auto& x : r) x = static_cast<int>(rng() % static_cast<unsigned>(ranks));
  return r;
}

TEST(RankProgram, EveryGhostCellEqualsItsOwnerOverRanks) {
  std::mt19937 rng(49);
  for (int trial = 0; trial < 300; ++trial) {
    const Decomposition g = cush_test::random_grid(rng);
    const int ranks = std::uniform_int_distribution<int>(1, 5)(rng);
    run_over_ranks(g, random_ranks(rng, g.size(), ranks), ranks);
  }
  // Packs straight into peers wherever allowed: only within a rank.
  for (int trial = 0; trial < 200; ++trial) {
    const Decomposition g = cush_test::random_grid(rng);
    const int ranks = std::uniform_int_distribution<int>(1, 4)(rng);
    run_over_ranks(g, random_ranks(rng, g.size(), ranks), ranks, [](std::size_t, std::size_t) { return true; });
  }
}

// The two ends of every transfer stand in phases of the same number and axis on their two ranks
// (ranks drop phases where they have nothing to do): what the CUDA IPC transport's messages rely
// on, which are tagged by the phase (libcush/mpi/rank_ipc.cpp). Random grids, ranks and halo
// selections, one or two components.
TEST(RankProgram, BothEndsOfATransferStandInTheSamePhase) {
  std::mt19937 rng(4950);
  std::size_t transfers = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Decomposition g = cush_test::random_grid(rng);
    const int ranks = std::uniform_int_distribution<int>(2, 5)(rng);
    const std::vector<int> block_rank = random_ranks(rng, g.size(), ranks);
    const std::size_t components = 1 + (rng() & 1U);
    cush::HaloComponents which = cush::HaloComponents::all(components);
    if (trial % 2 == 1) {  // a random selection of sides and components
      which = cush::HaloComponents();
      for (std::size_t axis = 0; axis < 3; ++axis)
        for (int dir : {-1, +1})
          for (std::size_t c = 0; c < components; ++c)
            if (rng() % 3 != 0) which.fill(axis, dir, {c});
    }
    SCOPED_TRACE(cush_test::describe(g) + ", " + std::to_string(ranks) + " ranks, trial " + std::to_string(trial));
    const cush::detail::ExchangeProgram program = cush::detail::exchange_program_over_ranks(g, block_rank, {}, which);
    std::map<std::size_t, std::pair<std::size_t, std::size_t>> sent, received;  // tag -> (phase index, axis)
    for (int r = 0; r < ranks; ++r) {
      const RankProgram p = cush::detail::rank_program(program, block_rank, r);
      for (std::size_t i = 0; i < p.phases.size(); ++i) {
        for (const RankTransfer& t : p.phases[i].outgoing) sent[t.tag] = {i, p.phases[i].axis};
        for (const RankTransfer& t : p.phases[i].incoming) received[t.tag] = {i, p.phases[i].axis};
      }
    }
    ASSERT_EQ(sent.size(), received.size());
    for (const auto& [tag, at] : sent) {
      ASSERT_TRUE(received.count(tag)) << "tag " << tag;
      EXPECT_EQ(at, received.at(tag)) << "tag " << tag << ": phase " << at.first << " (axis " << at.second
                                      << ") on the sender, " << received.at(tag).first << " (axis "
                                      << received.at(tag).second << ") on the receiver";
    }
    transfers += sent.size();
  }
  EXPECT_GT(transfers, 1000U);
}

TEST(RankProgram, OneBlockPerRankAndAllBlocksOnOneRank) {
  for (const Extent3 blocks : {Extent3{2, 1, 1}, Extent3{1, 2, 1}, Extent3{1, 1, 4}, Extent3{2, 2, 1}, Extent3{2, 2, 2}})
    for (bool periodic : {false, true}) {
      GridOptions o;
      o.blocks = blocks;
      o.halo = 2;
      o.periodic = {periodic, periodic, periodic};
      const Decomposition g(Extent3{9, 10, 11}, 3, blocks[0] * blocks[1] * blocks[2], o);
      std::vector<int> each(g.size());
      for (std::size_t k = 0; k < g.size(); ++k) each[k] = static_cast<int>(k);
      run_over_ranks(g, each, static_cast<int>(g.size()));
      run_over_ranks(g, std::vector<int>(g.size(), 0), 1);
    }
}

// Two ranks of one block each exchange exactly their faces: the x faces of depth 1 (strided)
// through staging buffers, one transfer each way per phase; nothing runs on a rank for the other.
TEST(RankProgram, TwoRanksSendOneTransferEachWayPerFace) {
  GridOptions o;
  o.blocks = {2, 1, 1};
  o.halo = 1;
  const Decomposition g(Extent3{8, 6, 5}, 3, 2, o);
  const std::vector<int> ranks{0, 1};
  const auto program = cush::detail::exchange_program_over_ranks(g, ranks);
  for (int r : {0, 1}) {
    const RankProgram p = cush::detail::rank_program(program, ranks, r);
    ASSERT_EQ(p.phases.size(), 1U);
    EXPECT_EQ(p.phases[0].axis, 0U);
    ASSERT_EQ(p.phases[0].outgoing.size(), 1U);
    ASSERT_EQ(p.phases[0].incoming.size(), 1U);
    EXPECT_EQ(p.phases[0].outgoing[0].peer, 1 - r);
    EXPECT_EQ(p.phases[0].outgoing[0].cells, 6U * 5U);  // a face of 1 x 6 x 5 cells, packed
    EXPECT_EQ(p.phases[0].sends.size(), 1U);            // the pack
    EXPECT_EQ(p.phases[0].receives.size(), 1U);         // the unpack
    EXPECT_TRUE(p.phases[0].links.empty());
  }
  // The two ends of each transfer carry the same tag.
  const RankProgram a = cush::detail::rank_program(program, ranks, 0), b = cush::detail::rank_program(program, ranks, 1);
  EXPECT_EQ(a.phases[0].outgoing[0].tag, b.phases[0].incoming[0].tag);
  EXPECT_EQ(b.phases[0].outgoing[0].tag, a.phases[0].incoming[0].tag);
}

TEST(RankProgram, BadRanksAreRejected) {
  const Decomposition g(Extent3{8, 6, 5}, 3, 4);
  EXPECT_THROW((void)cush::detail::exchange_program_over_ranks(g, std::vector<int>{0, 1, 2}), cush::InvalidArgument);
  EXPECT_THROW((void)cush::detail::exchange_program_over_ranks(g, std::vector<int>{0, 1, -1, 0}), cush::InvalidArgument);
  EXPECT_THROW(cush::detail::check_block_ranks(std::vector<int>{0, 1, 2, 3}, 4, 3), cush::InvalidArgument);
  try {
    cush::detail::check_block_ranks(std::vector<int>{0, 5}, 2, 2);
    FAIL() << "rank 5 of 2 accepted";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("gives block 1 to rank 5 of 2 ranks"), std::string::npos) << e.what();
  }
  // A program made without the ranks may pack into another rank's memory: refused.
  GridOptions o;
  o.blocks = {2, 1, 1};
  const Decomposition x(Extent3{8, 6, 5}, 3, 2, o);
  const auto packs = cush::detail::exchange_program(x, [](std::size_t, std::size_t) { return true; });
  EXPECT_THROW((void)cush::detail::rank_program(packs, std::vector<int>{0, 1}, 0), std::logic_error);
}

}  // namespace
