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
#include "support/simulate_streams.hpp"

namespace {

using cush::GraphDecomposition;
using cush::detail::BufferRef;
using cush::detail::ExchangeSchedule;
using cush::detail::ExchangeStep;
using cush::detail::GraphExchange;
using cush::detail::GraphRoute;
using cush::detail::Instruction;
using cush::detail::ScheduleStream;
using cush_test::Access;
using cush_test::Cells3;
using cush_test::StreamModel;

double value_of(std::int64_t global, std::size_t c, int round) {
  return static_cast<double>(global) * 8 + static_cast<double>(c) + 1000.0 * round;
}

Access run(std::size_t buffer, std::size_t first, std::size_t count, bool write) {
  return Access{buffer, Cells3{first, 0, 0}, Cells3{count, 1, 1}, write};
}

// The exchange of one decomposition as the engine runs it, on host arrays: buffers numbered
// blocks (part k, component c: k * C + c), then send buffers, then receive buffers.
class Simulation {
 public:
  Simulation(const GraphDecomposition& dec, const GraphExchange& ex, std::size_t components)
      : dec_(dec), ex_(ex), c_(components) {
    for (std::size_t k = 0; k < dec.size(); ++k)
      for (std::size_t c = 0; c < c_; ++c) values_.emplace_back(dec.part(k).size(), -1.0);
    for (std::size_t n : ex.program.send_cells) values_.emplace_back(n, -1.0);
    for (std::size_t n : ex.program.recv_cells) values_.emplace_back(n, -1.0);
  }

  // Two rounds of: the user writes the owned values; the exchange (start, a kernel reading the
  // owned values, finish; or exchange()); a kernel reading everything checks every ghost.
  void enqueue(const ExchangeSchedule& s, bool whole) {
    const std::size_t p = dec_.size();
    for (int round = 0; round < 2; ++round) {
      for (std::size_t k = 0; k < p; ++k) user_write(k, round);
      if (whole) {
        instructions(s.whole);
      } else {
        instructions(s.start);
        for (std::size_t k = 0; k < p; ++k) user_read(k, false, round);
        instructions(s.finish);
      }
      for (std::size_t k = 0; k < p; ++k) user_read(k, true, round);
    }
  }

  StreamModel& model() { return model_; }

  // Runs every operation in a random order the model allows; the first wrong ghost, or empty.
  std::string run_in(std::mt19937_64& rng) {
    for (auto& v : values_) std::fill(v.begin(), v.end(), -1.0);
    for (std::size_t op : model_.random_order(rng))
      if (std::string e = actions_[op](); !e.empty()) return e;
    return {};
  }

 private:
  [[nodiscard]] std::size_t id(const BufferRef& b) const {
    const std::size_t blocks = dec_.size() * c_;
    switch (b.kind) {
      case BufferRef::Kind::send: return blocks + b.index;
      case BufferRef::Kind::recv: return blocks + ex_.program.send_cells.size() + b.index;
      case BufferRef::Kind::block: break;
    }
    return b.index * c_ + b.component;
  }
  [[nodiscard]] std::size_t stream_of(const ScheduleStream& s) const {
    return s.kind == ScheduleStream::Kind::block ? s.block : dec_.size() + s.block;
  }

  void user_write(std::size_t k, int round) {
    std::vector<Access> acc;
    for (std::size_t c = 0; c < c_; ++c) acc.push_back(run(k * c_ + c, 0, dec_.part(k).owned().count, true));
    model_.work(k, acc, "user writes part " + std::to_string(k));
    actions_.push_back([this, k, round] {
      const cush::GraphPart& part = dec_.part(k);
      for (std::size_t c = 0; c < c_; ++c)
        for (std::size_t i = 0; i < part.owned().count; ++i) values_[k * c_ + c][i] = value_of(part.global(i), c, round);
      return std::string();
    });
  }

  // A kernel on part k's stream reading its owned values, or everything (then checking ghosts).
  void user_read(std::size_t k, bool everything, int round) {
    const cush::GraphPart& part = dec_.part(k);
    std::vector<Access> acc;
    for (std::size_t c = 0; c < c_; ++c) acc.push_back(run(k * c_ + c, 0, everything ? part.size() : part.owned().count, false));
    model_.work(k, acc, std::string("user reads ") + (everything ? "all of" : "the owned values of") + " part " + std::to_string(k));
    actions_.push_back([this, k, everything, round, &part] {
      if (!everything) return std::string();
      for (std::size_t c = 0; c < c_; ++c)
        for (std::size_t i = part.ghosts().offset; i < part.size(); ++i)
          if (values_[k * c_ + c][i] != value_of(part.global(i), c, round))
            return "round " + std::to_string(round) + ": part " + std::to_string(k) + " component " + std::to_string(c) +
                   " ghost " + std::to_string(i) + " (node " + std::to_string(part.global(i)) + ") holds " +
                   std::to_string(values_[k * c_ + c][i]);
      return std::string();
    });
  }

  void instructions(const std::vector<Instruction>& list) {
    for (const Instruction& in : list) {
      const std::size_t s = stream_of(in.stream);
      switch (in.op) {
        case Instruction::Op::record:
          model_.record(s, in.event, "record " + std::to_string(in.event));
          actions_.push_back([] { return std::string(); });
          break;
        case Instruction::Op::wait:
          model_.wait(s, in.event, "wait " + std::to_string(in.event));
          actions_.push_back([] { return std::string(); });
          break;
        case Instruction::Op::step: step(s, in.step); break;
      }
    }
  }

  void step(std::size_t stream, const ExchangeStep& st) {
    const std::size_t src = id(st.src.buffer);
    const std::size_t dst = id(st.dst.buffer);
    const std::size_t count = st.size[0];
    std::vector<Access> acc{run(dst, st.dst.lo[0], count, true)};
    std::vector<std::size_t> from;  // the source indices
    if (st.index_list == ExchangeStep::no_list) {
      for (std::size_t i = 0; i < count; ++i) from.push_back(st.src.lo[0] + i);
    } else {
      for (std::int32_t i : ex_.index_lists.at(st.index_list)) from.push_back(static_cast<std::size_t>(i));
    }
    for (std::size_t i : from) acc.push_back(run(src, i, 1, false));
    model_.work(stream, acc, std::string(st.index_list == ExchangeStep::no_list ? "copy" : "gather") + " on stream " +
                                 std::to_string(stream) + " into buffer " + std::to_string(dst));
    const std::size_t at = st.dst.lo[0];
    actions_.push_back([this, src, dst, at, from] {
      for (std::size_t i = 0; i < from.size(); ++i) values_[dst].at(at + i) = values_[src].at(from[i]);
      return std::string();
    });
  }

  const GraphDecomposition& dec_;
  const GraphExchange& ex_;
  std::size_t c_;
  StreamModel model_;
  std::vector<std::function<std::string()>> actions_;
  std::vector<std::vector<double>> values_;
};

cush::detail::GraphRouteOf route_for(int kind, std::uint64_t salt) {
  return [kind, salt](std::size_t from, std::size_t to) {
    const int k = kind < 3 ? kind : static_cast<int>((from * 7 + to * 13 + salt) % 3);
    return static_cast<GraphRoute>(k);
  };
}

// Empty, or what went wrong with the exchange of `dec` by `route` kind (3: mixed).
std::string check(const GraphDecomposition& dec, std::size_t components, int kind, std::mt19937_64& rng,
                  bool drop_a_wait = false) {
  const GraphExchange ex = cush::detail::graph_exchange(dec, components, route_for(kind, rng()));
  ExchangeSchedule s = cush::detail::exchange_schedule(ex.program, dec.size(), {8, 0, 1});
  if (drop_a_wait) {
    for (auto* list : {&s.start, &s.whole})
      for (auto it = list->begin(); it != list->end(); ++it)
        if (it->op == Instruction::Op::wait && it->stream.kind == ScheduleStream::Kind::exchange) {
          list->erase(it);
          break;
        }
  }
  for (bool whole : {false, true}) {
    Simulation sim(dec, ex, components);
    sim.enqueue(s, whole);
    const std::string how = whole ? "exchange(): " : "exchange_start()/finish(): ";
    if (std::string c = sim.model().unordered_conflict([](std::size_t b) { return "buffer " + std::to_string(b); });
        !c.empty())
      return how + c;
    for (int order = 0; order < 3; ++order)
      if (std::string r = sim.run_in(rng); !r.empty()) return how + r;
  }
  return {};
}

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
    const std::string failure = check(dec, components, kind, rng);
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
    EXPECT_EQ(check(dec, 1, kind, rng), "") << route_name(kind);
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
    if (!check(dec, 1, trial % 3, rng, true).empty()) ++caught;
  }
  EXPECT_GT(caught, 5U);
}

}  // namespace
