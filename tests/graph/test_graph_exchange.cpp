// Host proof of a graph field's exchange (graph/graph_exchange.hpp, ordered by
// grid/exchange_schedule.hpp): over random graphs, every route and 1-3 components, the
// instructions the engine enqueues, with the user's work around two exchanges in a row, under
// CUDA's stream and event rules (support/simulate_streams.hpp). Every two accesses to the same
// values, one a write, must be ordered, and the exchange run on host arrays in random allowed
// orders must leave every ghost equal to its owner's value of that round. The checker is shown
// to fail when a wait is taken out.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cush/graph.hpp"
#include "graph/graph_exchange.hpp"
#include "grid/exchange_schedule.hpp"
#include "support/random_graphs.hpp"
#include "support/graph_exchange_model.hpp"

namespace {

using cush::GraphDecomposition;
using cush::detail::ExchangeStep;
using cush::detail::GraphExchange;
using cush_test::route_for;

using cush_test::check_graph_exchange;

const char* route_name(int kind) {
  static const char* names[] = {"peer", "staged", "host", "mixed"};
  return names[kind];
}

TEST(GraphExchange, RandomGraphsAreOrderedAndFillEveryGhost) {
  std::mt19937_64 rng(50);
  cush_test::Coverage seen;
  std::size_t gathers = 0, copies = 0, host_receives = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const cush_test::Case c = random_case(rng, trial, seen);
    const GraphDecomposition dec(c.graph.adjacency(), c.owner, c.parts);
    const int kind = trial % 4;
    const std::size_t components = 1 + static_cast<std::size_t>(trial % 3);
    const std::string failure = check_graph_exchange(dec, components, kind, rng);
    ASSERT_TRUE(failure.empty()) << c.what << ", route " << route_name(kind) << ", " << components << " components\n"
                                 << failure;
    const GraphExchange ex = cush::detail::graph_exchange(dec, components, route_for(kind, 1));
    for (const auto& phase : ex.program.phases) {
      for (const ExchangeStep& st : phase.sends) (st.index_list == ExchangeStep::no_list ? copies : gathers) += 1;
      host_receives += phase.receives.size();
    }
  }
  // The graphs exercised every kind of step.
  EXPECT_GT(gathers, 100U);
  EXPECT_GT(copies, 100U);
  EXPECT_GT(host_receives, 50U);
}

// The hand example of spec §7 (parts {0,1,2} | {3,4,5}): one message each way, a copy of one value.
TEST(GraphExchange, HandExampleHasOneCopyEachWay) {
  const cush_test::Graph g = cush_test::csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {1, 3, 4}, {4, 5}});
  const std::vector<int> owner{0, 0, 0, 1, 1, 1};
  const GraphDecomposition dec(g.adjacency(), owner, 2);
  for (int kind = 0; kind < 3; ++kind) {
    const GraphExchange ex = cush::detail::graph_exchange(dec, 1, route_for(kind, 0));
    ASSERT_EQ(ex.program.phases.size(), 1U);
    const auto& phase = ex.program.phases[0];
    EXPECT_EQ(phase.links.size(), 2U);
    // A message of one value is one run: no gather, so no send buffer on any route.
    EXPECT_EQ(phase.sends.size(), 2U) << route_name(kind);
    EXPECT_EQ(phase.receives.size(), kind == 2 ? 2U : 0U) << route_name(kind);
    for (const ExchangeStep& st : phase.sends) EXPECT_EQ(st.index_list, ExchangeStep::no_list);
    std::mt19937_64 rng(1);
    EXPECT_EQ(check_graph_exchange(dec, 1, kind, rng), "") << route_name(kind);
  }
}

// Without one of the waits the exchange streams make, the checker finds a race on some graph.
TEST(GraphExchange, CheckerFailsWithoutAWait) {
  std::mt19937_64 rng(7);
  cush_test::Coverage seen;
  std::size_t caught = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const cush_test::Case c = random_case(rng, trial, seen);
    if (c.parts < 2) continue;
    const GraphDecomposition dec(c.graph.adjacency(), c.owner, c.parts);
    if (dec.messages().empty()) continue;
    if (!check_graph_exchange(dec, 1, trial % 3, rng, true).empty()) ++caught;
  }
  EXPECT_GT(caught, 5U);
}

}  // namespace
