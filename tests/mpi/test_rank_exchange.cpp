// The exchange of a grid over MPI ranks on host arrays (ctest runs this with 2 and 4 ranks): each
// rank holds only its own blocks, runs its part of the exchange program (mpi/rank_grid.hpp) with
// the transfers between ranks as MPI messages, and checks every cell of its blocks. Bad input on
// one rank is an error on every rank, never a rank left waiting.

#include <gtest/gtest.h>
#include <mpi.h>

#include <random>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "cush/grid.hpp"
#include "cush/process_group.hpp"
#include "mpi/rank_grid.hpp"
#include "mpi_test.hpp"
#include "support/grids.hpp"
#include "support/host_exchange.hpp"

namespace {

using cush::Decomposition;
using cush::Extent3;
using cush::GridOptions;
using cush::detail::BufferRef;
using cush::detail::RankProgram;
using cush::detail::RankTransfer;

void check_mpi(int rc) { ASSERT_EQ(rc, MPI_SUCCESS); }

// Runs this rank's part of the exchange of `g` (block k on rank block_rank[k]) on host arrays, the
// transfers as MPI messages on the group's communicator, and checks every cell of its blocks.
void exchange_over_ranks(const cush::ProcessGroup& group, const Decomposition& g, const std::vector<int>& block_rank) {
  SCOPED_TRACE(cush_test::describe(g) + " on rank " + std::to_string(group.rank()));
  const RankProgram p = cush::detail::rank_exchange_program(group, g, block_rank);
  std::vector<std::vector<double>> blocks(g.size()), send(p.ends.size()), recv(p.ends.size());
  for (std::size_t b = 0; b < g.size(); ++b)
    if (block_rank[b] == group.rank()) blocks[b] = cush_test::initial_buffer(g, b);
  for (std::size_t k = 0; k < p.ends.size(); ++k) {
    send[k].assign(p.send_cells[k], cush_test::unset);
    recv[k].assign(p.recv_cells[k], cush_test::unset);
  }
  const auto buffer = [&](const BufferRef& b) -> std::vector<double>& {
    if (b.kind == BufferRef::Kind::send) return send.at(b.index);
    if (b.kind == BufferRef::Kind::recv) return recv.at(b.index);
    return blocks.at(b.index);
  };
  for (const cush::detail::RankPhase& phase : p.phases) {
    for (const auto& step : phase.sends) cush_test::run_step(step, buffer(step.src.buffer), buffer(step.dst.buffer));
    // Receives posted first, into buffers of their own; sends straight from the block or staging buffer.
    std::vector<std::vector<double>> arriving(phase.incoming.size());
    std::vector<MPI_Request> requests;
    for (std::size_t i = 0; i < phase.incoming.size(); ++i) {
      const RankTransfer& t = phase.incoming[i];
      arriving[i].resize(t.cells);
      requests.emplace_back();
      check_mpi(MPI_Irecv(arriving[i].data(), static_cast<int>(t.cells), MPI_DOUBLE, t.peer, static_cast<int>(t.tag),
                          group.comm(), &requests.back()));
    }
    for (const RankTransfer& t : phase.outgoing) {
      std::vector<double>& src = buffer(t.side.buffer);
      const std::size_t from = cush_test::offset(t.side.alloc, t.side.lo);
      ASSERT_LE(from + t.cells, src.size());
      requests.emplace_back();
      check_mpi(MPI_Isend(src.data() + from, static_cast<int>(t.cells), MPI_DOUBLE, t.peer, static_cast<int>(t.tag),
                          group.comm(), &requests.back()));
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    for (std::size_t i = 0; i < phase.incoming.size(); ++i) {
      const RankTransfer& t = phase.incoming[i];
      std::vector<double>& dst = buffer(t.side.buffer);
      const std::size_t to = cush_test::offset(t.side.alloc, t.side.lo);
      ASSERT_LE(to + t.cells, dst.size());
      std::copy(arriving[i].begin(), arriving[i].end(), dst.begin() + static_cast<std::ptrdiff_t>(to));
    }
    for (const auto& step : phase.receives) cush_test::run_step(step, buffer(step.src.buffer), buffer(step.dst.buffer));
  }
  for (std::size_t b = 0; b < g.size(); ++b)
    if (block_rank[b] == group.rank()) cush_test::verify_buffer(g, b, blocks[b]);
}


TEST(RankExchange, EveryGhostCellEqualsItsOwnerOnEveryRank) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  std::mt19937 rng(4949);  // the same draws on every rank
  for (int trial = 0; trial < 150; ++trial) {
    const Decomposition g = cush_test::random_grid(rng);
    std::vector<int> ranks(g.size());
    for (auto& r : ranks) r = static_cast<int>(rng() % static_cast<unsigned>(group.size()));
    exchange_over_ranks(group, g, ranks);
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure())) << "trial " << trial;
  }
}

TEST(RankExchange, OneBlockPerRankPeriodic) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  for (std::size_t depth : {1, 2, 3}) {
    GridOptions o;
    o.halo = depth;
    o.periodic = {true, true, true};
    const Decomposition g(Extent3{12, 10, 9}, 3, static_cast<std::size_t>(group.size()), o);
    std::vector<int> ranks(g.size());
    for (std::size_t k = 0; k < g.size(); ++k) ranks[k] = static_cast<int>(k);
    exchange_over_ranks(group, g, ranks);
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure())) << "depth " << depth;
  }
}


TEST(RankExchange, RanksThatDisagreeFailTogether) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  // Rank 0 has another extent: every rank throws, naming the grid.
  const Decomposition g(Extent3{group.rank() == 0 ? 12U : 13U, 10, 9}, 3, 2);
  try {
    (void)cush::detail::rank_exchange_program(group, g, std::vector<int>{0, 1});
    ADD_FAILURE() << "rank " << group.rank() << ": no error";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), "the ranks disagree on the grid")) << e.what();
  }
  // Other block ranks on the last rank.
  const Decomposition same(Extent3{12, 10, 9}, 3, 2);
  try {
    (void)cush::detail::rank_exchange_program(group, same, std::vector<int>{0, group.rank() == group.size() - 1 ? 0 : 1});
    ADD_FAILURE() << "rank " << group.rank() << ": no error";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), "the ranks disagree on the ranks of the blocks")) << e.what();
  }
  // A rank the group lacks, the same on every rank.
  try {
    (void)cush::detail::rank_exchange_program(group, same, std::vector<int>{0, group.size()});
    ADD_FAILURE() << "rank " << group.rank() << ": no error";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), "to rank " + std::to_string(group.size()) + " of " + std::to_string(group.size()) + " ranks"))
        << e.what();
  }
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
