// The halo exchange of a graph decomposition over MPI ranks on host arrays (ctest runs this with 2
// and 4 ranks): the graph field's exchange program (libcush/graph/graph_exchange.hpp) split by the
// structured grid's rank_program (grid/rank_program.hpp) unchanged, each rank running its part with
// the transfers between ranks as MPI messages, every ghost of every part checked. The first layer of
// a graph field over ranks: parts of other processes reached by the same program, the routes
// within a rank as in one process (peer, staged, host), staged or through host memory between
// ranks, where a kernel cannot store into the other process's memory.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/graph.hpp"
#include "cush/process_group.hpp"
#include "graph/graph_exchange.hpp"
#include "grid/rank_program.hpp"
#include "mpi_test.hpp"
#include "support/random_graphs.hpp"

namespace {

using cush::GraphDecomposition;
using cush::detail::BufferRef;
using cush::detail::ExchangeStep;
using cush::detail::GraphExchange;
using cush::detail::GraphRoute;
using cush::detail::RankProgram;
using cush::detail::RankTransfer;

double value_of(std::int64_t global, std::size_t c) { return static_cast<double>(global) * 8 + static_cast<double>(c); }

// One step on host arrays: a copy of a run, or a gather through the message's index list.
void run_step(const ExchangeStep& st, const GraphExchange& ex, const std::vector<double>& src, std::vector<double>& dst) {
  for (std::size_t i = 0; i < st.size[0]; ++i) {
    const std::size_t from = st.index_list == ExchangeStep::no_list
                                 ? st.src.lo[0] + i
                                 : static_cast<std::size_t>(ex.index_lists.at(st.index_list).at(i));
    dst.at(st.dst.lo[0] + i) = src.at(from);
  }
}

// This rank's parts (part k on rank part_rank[k]) exchanged over the ranks; returns how many
// transfers crossed ranks here.
std::size_t exchange_over_ranks(const cush::ProcessGroup& group, const GraphDecomposition& dec, std::size_t components,
                                const std::vector<int>& part_rank, const cush::detail::GraphRouteOf& route) {
  const GraphExchange ex = cush::detail::graph_exchange(dec, components, route);
  const RankProgram p = cush::detail::rank_program(ex.program, part_rank, group.rank());
  const auto mine = [&](std::size_t k) { return part_rank[k] == group.rank(); };
  // Buffers: part k's component c at k * C + c (every owned value set, every ghost unset), then the
  // staging buffers of this rank's ends.
  std::vector<std::vector<double>> blocks(dec.size() * components), send(p.ends.size()), recv(p.ends.size());
  for (std::size_t k = 0; k < dec.size(); ++k) {
    if (!mine(k)) continue;
    const cush::GraphPart& part = dec.part(k);
    for (std::size_t c = 0; c < components; ++c) {
      std::vector<double>& b = blocks[k * components + c];
      b.assign(part.size(), -1.0);
      for (std::size_t i = 0; i < part.owned().count; ++i) b[i] = value_of(part.global(i), c);
    }
  }
  for (std::size_t m = 0; m < p.ends.size(); ++m) {
    send[m].assign(p.send_cells[m], -1.0);
    recv[m].assign(p.recv_cells[m], -1.0);
  }
  const auto buffer = [&](const BufferRef& b) -> std::vector<double>& {
    if (b.kind == BufferRef::Kind::send) return send.at(b.index);
    if (b.kind == BufferRef::Kind::recv) return recv.at(b.index);
    return blocks.at(b.index * components + b.component);
  };
  std::size_t crossed = 0;
  for (const cush::detail::RankPhase& phase : p.phases) {
    for (const ExchangeStep& st : phase.sends) run_step(st, ex, buffer(st.src.buffer), buffer(st.dst.buffer));
    std::vector<std::vector<double>> arriving(phase.incoming.size());
    std::vector<MPI_Request> requests;
    for (std::size_t i = 0; i < phase.incoming.size(); ++i) {
      const RankTransfer& t = phase.incoming[i];
      arriving[i].resize(t.cells);
      requests.emplace_back();
      EXPECT_EQ(MPI_Irecv(arriving[i].data(), static_cast<int>(t.cells), MPI_DOUBLE, t.peer, static_cast<int>(t.tag),
                          group.comm(), &requests.back()),
                MPI_SUCCESS);
    }
    for (const RankTransfer& t : phase.outgoing) {
      const std::vector<double>& src = buffer(t.side.buffer);
      EXPECT_LE(t.side.lo[0] + t.cells, src.size());
      requests.emplace_back();
      EXPECT_EQ(MPI_Isend(src.data() + t.side.lo[0], static_cast<int>(t.cells), MPI_DOUBLE, t.peer,
                          static_cast<int>(t.tag), group.comm(), &requests.back()),
                MPI_SUCCESS);
      ++crossed;
    }
    EXPECT_EQ(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (std::size_t i = 0; i < phase.incoming.size(); ++i) {
      const RankTransfer& t = phase.incoming[i];
      std::vector<double>& dst = buffer(t.side.buffer);
      EXPECT_LE(t.side.lo[0] + t.cells, dst.size());
      std::copy(arriving[i].begin(), arriving[i].end(), dst.begin() + static_cast<std::ptrdiff_t>(t.side.lo[0]));
      ++crossed;
    }
    for (const ExchangeStep& st : phase.receives) run_step(st, ex, buffer(st.src.buffer), buffer(st.dst.buffer));
  }
  // Every value of every part of this rank: the owned ones kept, every ghost its node's value.
  for (std::size_t k = 0; k < dec.size(); ++k) {
    if (!mine(k)) continue;
    const cush::GraphPart& part = dec.part(k);
    for (std::size_t c = 0; c < components; ++c)
      for (std::size_t i = 0; i < part.size(); ++i)
        if (blocks[k * components + c][i] != value_of(part.global(i), c)) {
          ADD_FAILURE() << "part " << k << " (rank " << group.rank() << "), component " << c << ", local " << i
                        << " (node " << part.global(i) << ", " << (i < part.owned().count ? "owned" : "ghost")
                        << ") holds " << blocks[k * components + c][i];
          return crossed;
        }
  }
  return crossed;
}

TEST(GraphOverRanks, EveryGhostOfEveryPartOnEveryRank) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  std::mt19937_64 rng(5050);  // the same draws on every rank
  cush_test::Coverage seen;
  std::size_t crossed = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const cush_test::Case c = cush_test::random_case(rng, trial, seen);
    const GraphDecomposition dec(c.graph.adjacency(), c.owner, c.parts);
    std::vector<int> part_rank(dec.size());
    for (int& r : part_rank) r = static_cast<int>(rng() % static_cast<unsigned>(group.size()));
    const std::size_t components = 1 + static_cast<std::size_t>(trial % 3);
    const std::uint64_t salt = rng();
    // Within a rank any route; between ranks staged or through host memory.
    const auto route = [&](std::size_t from, std::size_t to) {
      const auto k = static_cast<int>((from * 7 + to * 13 + salt) % 3);
      if (part_rank[from] != part_rank[to] && k == 0) return GraphRoute::staged;
      return static_cast<GraphRoute>(k);
    };
    SCOPED_TRACE(c.what + ", " + std::to_string(dec.size()) + " parts, " + std::to_string(components) +
                 " components, trial " + std::to_string(trial));
    crossed += exchange_over_ranks(group, dec, components, part_rank, route);
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure())) << "trial " << trial;
  }
  // The trials moved something between ranks on every rank (not a test that cannot fail for want of
  // traffic).
  EXPECT_GT(crossed, 0U) << "rank " << group.rank();
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

// A kernel storing into another part's memory (the peer route with a gather) cannot cross
// processes: the split refuses it instead of producing a program that would.
TEST(GraphOverRanks, PeerStoresAcrossRanksAreRefused) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  // Part 0 owns nodes 0-2 and sends {0, 2} to part 1 (node 3) and {1} to part 2 (node 4): the message
  // to part 1 is not a run of part 0's local order, so the peer route gathers it into part 1's memory.
  const std::vector<std::int64_t> row_ptr{0, 1, 2, 3, 6, 8};
  const std::vector<std::int64_t> cols{0, 1, 2, 0, 2, 3, 1, 4};
  const std::vector<int> owner{0, 0, 0, 1, 2};
  const GraphDecomposition dec(cush::Adjacency{row_ptr, cols}, owner, 3);
  const GraphExchange ex = cush::detail::graph_exchange(dec, 1, [](std::size_t, std::size_t) { return GraphRoute::peer; });
  ASSERT_FALSE(ex.index_lists.empty());
  ASSERT_TRUE(std::any_of(ex.index_lists.begin(), ex.index_lists.end(), [](const auto& l) { return !l.empty(); }))
      << "the example has no gather";
  const std::vector<int> part_rank{0, group.size() - 1, 0};
  EXPECT_THROW((void)cush::detail::rank_program(ex.program, part_rank, group.rank()), std::logic_error);
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
