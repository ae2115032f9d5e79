#pragma once
// A graph field's exchange (libcush/graph/graph_exchange.hpp, ordered by
// libcush/grid/exchange_schedule.hpp) as the engine enqueues it, with the user's work around two
// exchanges in a row, on CUDA's stream and event rules (support/simulate_streams.hpp) and on host
// arrays: for the host test (tests/graph/test_graph_exchange.cpp) and the fuzz harness
// (tests/fuzz/fuzz_graph.cpp). check_graph_exchange() says what went wrong, or nothing.

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cush/graph.hpp"
#include "graph/graph_exchange.hpp"
#include "grid/exchange_schedule.hpp"
#include "support/simulate_streams.hpp"

namespace cush_test {

using cush::GraphDecomposition;
using cush::detail::BufferRef;
using cush::detail::ExchangeSchedule;
using cush::detail::ExchangeStep;
using cush::detail::GraphExchange;
using cush::detail::GraphRoute;
using cush::detail::Instruction;
using cush::detail::ScheduleStream;

inline double value_of(std::int64_t global, std::size_t c, int round) {
  return static_cast<double>(global) * 8 + static_cast<double>(c) + 1000.0 * round;
}

inline Access run(std::size_t buffer, std::size_t first, std::size_t count, bool write) {
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

/// Route kind 0-2: every message peer, staged or host; 3: mixed by the pair and `salt`.
inline cush::detail::GraphRouteOf route_for(int kind, std::uint64_t salt) {
  return [kind, salt](std::size_t from, std::size_t to) {
    const int k = kind < 3 ? kind : static_cast<int>((from * 7 + to * 13 + salt) % 3);
    return static_cast<GraphRoute>(k);
  };
}

/// Empty, or what went wrong with the exchange of `dec` by `route` kind (3: mixed): both calls
/// (start/finish, exchange()), every conflicting access ordered, three random orders run.
/// `drop_a_wait` takes the first wait on an exchange stream out (the check must then fail).
inline std::string check_graph_exchange(const GraphDecomposition& dec, std::size_t components, int kind, std::mt19937_64& rng,
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

}  // namespace cush_test
