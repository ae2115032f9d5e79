// Host proof of the exchange's ordering: the schedule that Field's engine enqueues
// (grid/exchange_schedule.hpp), with the user's work around two exchanges in a row, under CUDA's
// stream and event rules (support/simulate_streams.hpp). Every two accesses to the same cells, one
// a write, must be ordered, and the exchange run on host arrays in random allowed orders must
// give every reader the values it is owed. Also: the checker fails when a wait is taken out.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "cush/grid.hpp"
#include "exchange_model.hpp"
#include "grid/exchange_program.hpp"
#include "grid/exchange_schedule.hpp"
#include "grid/step_batches.hpp"
#include "support/grids.hpp"
#include "support/simulate_streams.hpp"

namespace {

using cush::Decomposition;
using cush::Extent3;
using cush::GridOptions;
using cush::detail::EventRole;
using cush::detail::ExchangeSchedule;
using cush::detail::Instruction;
using cush::detail::ScheduleOptions;
using cush::detail::ScheduleStream;
using cush_test::ExchangeCall;
using cush_test::ExchangeModel;

enum class Peers { always, never, random };

struct Trial {
  Decomposition grid;
  Peers peers = Peers::never;
  std::uint32_t salt = 0;
  ScheduleOptions options;
};

cush::detail::PeerStores peer_stores(const Trial& t) {
  switch (t.peers) {
    case Peers::always: return [](std::size_t, std::size_t) { return true; };
    case Peers::random: return [salt = t.salt](std::size_t from, std::size_t to) { return ((from * 7 + to * 13 + salt) & 2U) != 0; };
    case Peers::never: break;
  }
  return {};
}

std::string describe(const Trial& t) {
  std::string s = std::to_string(t.grid.dims()) + "D " + cush_test::describe(t.grid);
  s += std::string(", packs into peers ") + (t.peers == Peers::always ? "always" : t.peers == Peers::never ? "never" : "random");
  s += ", element " + std::to_string(t.options.element_size) + " bytes, pipelined from " +
       std::to_string(t.options.pipeline_bytes) + " bytes in up to " + std::to_string(t.options.max_chunks) + " slabs";
  return s;
}

// 1-3 axes, 1-8 blocks (chosen, or a random process grid), depth 1-4, periodic or not per axis,
// rows aligned to 1, 4, 16 or a random count of cells; pipelining thresholds low enough that
// faces are pipelined in 1-8 slabs.
Trial random_trial(std::mt19937_64& rng) {
  const auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
  for (;;) {
    const std::size_t dims = pick(1, 3);
    Extent3 extent{1, 1, 1};
    for (std::size_t a = 0; a < dims; ++a) extent[a] = pick(1, dims == 3 ? 13 : dims == 2 ? 30 : 60);
    GridOptions o;
    o.halo = pick(1, 4);
    for (std::size_t a = 0; a < dims; ++a) o.periodic[a] = pick(0, 1) == 1;
    const std::size_t aligns[] = {1, 4, 16, pick(2, 40)};
    o.row_align = aligns[pick(0, 3)];
    std::size_t count = pick(1, 8);
    if (pick(0, 1) == 1) {
      o.blocks = {1, 1, 1};
      for (std::size_t a = 0; a < dims; ++a) o.blocks[a] = pick(1, 4);
      count = o.blocks[0] * o.blocks[1] * o.blocks[2];
      if (count > 8) continue;
    }
    try {
      Trial t{Decomposition(extent, dims, count, o), static_cast<Peers>(pick(0, 2)), static_cast<std::uint32_t>(rng()), {}};
      t.options.element_size = pick(0, 1) == 1 ? 8 : 4;
      const std::size_t thresholds[] = {0, 0, 64, 512, 4096, std::size_t{1} << 40};
      t.options.pipeline_bytes = thresholds[pick(0, 5)];
      t.options.max_chunks = pick(1, 8);
      return t;
    } catch (const cush::InvalidArgument&) {
      // Too thin for its halo or too many blocks: draw again.
    }
  }
}

// Both ways of running the exchange, each twice in a row: empty, or what went wrong.
std::string check(const Trial& t, std::mt19937_64& rng, const ExchangeSchedule* given = nullptr) {
  const cush::detail::ExchangeProgram program = cush::detail::exchange_program(t.grid, peer_stores(t));
  const ExchangeSchedule schedule = given ? *given : cush::detail::exchange_schedule(program, t.grid, t.options);
  for (ExchangeCall call : {ExchangeCall::start_finish, ExchangeCall::whole})
    for (bool batched : {false, true}) {
      const std::string how = std::string(call == ExchangeCall::whole ? "exchange(): " : "exchange_start()/finish(): ") +
                              (batched ? "box copies launched together: " : "");
      ExchangeModel model(t.grid, program, schedule, call, 2, batched);
      if (!model.problems().empty()) return how + model.problems();
      if (std::string c = model.unordered_conflict(); !c.empty()) return how + c;
      if (std::string r = model.run(rng); !r.empty()) return how + r;
    }
  return {};
}

// How many launches of several box copies the engine makes for the trial's exchange().
std::size_t batches(const Trial& t) {
  const cush::detail::ExchangeProgram program = cush::detail::exchange_program(t.grid, peer_stores(t));
  const ExchangeSchedule schedule = cush::detail::exchange_schedule(program, t.grid, t.options);
  return ExchangeModel(t.grid, program, schedule, ExchangeCall::whole, 1, true).batches();
}

TEST(ExchangeSchedule, RandomGridsAreOrderedAndFillEveryGhost) {
  std::mt19937_64 rng(2026);
  std::size_t pipelined = 0, in_place = 0, split = 0, batched = 0;
  const auto began = std::chrono::steady_clock::now();
  constexpr int trials = 6000;
  for (int i = 0; i < trials; ++i) {
    const Trial t = random_trial(rng);
    const std::string failure = check(t, rng);
    ASSERT_TRUE(failure.empty()) << "trial " << i << ", " << describe(t) << "\n" << failure;
    const cush::detail::ExchangeProgram program = cush::detail::exchange_program(t.grid, peer_stores(t));
    if (!cush::detail::exchange_schedule(program, t.grid, t.options).pipelined_slabs.empty()) ++pipelined;
    if (t.grid.exchanged_in_place(0)) ++in_place;
    if (t.grid.size() > 1) ++split;
    if (batches(t) > 0) ++batched;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::cout << trials << " grids in " << seconds << " s: " << pipelined << " pipelined, " << in_place
            << " with axes exchanged in place, " << split << " with more than one block, " << batched
            << " with box copies launched together\n";
  // The draw covers what the schedule distinguishes.
  EXPECT_GT(pipelined, trials / 20);
  EXPECT_GT(in_place, trials / 10);
  EXPECT_GT(split, trials / 2);
  EXPECT_GT(batched, trials / 10);
}

TEST(ExchangeSchedule, TheIssuesProcessGrids) {
  std::mt19937_64 rng(7);
  for (const Extent3 blocks : {Extent3{2, 1, 1}, Extent3{1, 2, 1}, Extent3{1, 1, 2}, Extent3{1, 1, 1}, Extent3{2, 2, 2}})
    for (std::size_t depth = 1; depth <= 4; ++depth)
      for (bool periodic : {false, true})
        for (Peers peers : {Peers::always, Peers::never}) {
          GridOptions o;
          o.blocks = blocks;
          o.halo = depth;
          o.periodic = {periodic, periodic, periodic};
          o.row_align = depth % 2 == 0 ? 16 : 1;
          Trial t{Decomposition(Extent3{9, 10, 11}, 3, blocks[0] * blocks[1] * blocks[2], o), peers, 0,
                  ScheduleOptions{8, 0, 3}};
          const std::string failure = check(t, rng);
          ASSERT_TRUE(failure.empty()) << describe(t) << "\n" << failure;
        }
}

// How many launches the engine makes for the steps of `list` (box copies run together count once).
std::size_t launches(const std::vector<Instruction>& list) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < list.size(); i = cush::detail::batch_end(list, i))
    if (list[i].op == Instruction::Op::step) ++n;
  return n;
}

// A receiver waits for its own messages only: each link's done is recorded on the sender's
// stream after the sender's last step into that receiver and before the sender's next wait
// (which would be for another block's start), so no receiver waits, through a done, for a block
// other than its senders. And the dones cost no launch: taken out of the schedule, its box copies
// run in as many launches as with them (a done recorded right after the last step into its
// receiver parts copies into two peers that would run as one; this test fails on that rule).
TEST(ExchangeSchedule, EachReceiverWaitsForItsOwnMessagesOnly) {
  std::mt19937_64 rng(11);
  std::size_t dones = 0, behind_other_steps = 0, batched = 0;
  for (int i = 0; i < 500; ++i) {
    const Trial t = random_trial(rng);
    const cush::detail::ExchangeProgram program = cush::detail::exchange_program(t.grid, peer_stores(t));
    const ExchangeSchedule s = cush::detail::exchange_schedule(program, t.grid, t.options);
    for (const auto* list : {&s.start, &s.whole}) {
      std::vector<Instruction> without;
      for (std::size_t k = 0; k < list->size(); ++k) {
        const Instruction& in = (*list)[k];
        if (in.op != Instruction::Op::record || s.events[in.event].role != EventRole::done) {
          without.push_back(in);
          continue;
        }
        ++dones;
        // Back along its stream, past records and steps into other blocks, to a step into the
        // receiver, with no wait on the way.
        bool found = false, first = true;
        for (std::size_t j = k; j-- > 0 && !found;) {
          const Instruction& before = (*list)[j];
          if (!(before.stream == in.stream) || before.op == Instruction::Op::record) continue;
          ASSERT_EQ(before.op, Instruction::Op::step) << describe(t) << ": a wait between a done and its steps";
          found = cush::detail::buffer_block(program, before.step.dst.buffer) == s.events[in.event].peer;
          if (!found && first) ++behind_other_steps;
          first = false;
        }
        ASSERT_TRUE(found) << describe(t) << ": a done with no step into its receiver before it";
      }
      const std::size_t with_dones = launches(*list), without_dones = launches(without);
      ASSERT_EQ(with_dones, without_dones) << describe(t) << ": dones part box copies that would run as one launch";
    }
    if (batches(t) > 0) ++batched;
  }
  EXPECT_GT(dones, 1000U);
  // The draw reaches senders whose dones wait past steps into other blocks, and launches of several copies.
  EXPECT_GT(behind_other_steps, 10U);
  EXPECT_GT(batched, 10U);
}

// Which wait an instruction is, for the tally below: the event's role, and for a start, whether
// a sender waits (before writing into the receiver) or an unpack stream does.
std::string wait_kind(const ExchangeSchedule& s, const Instruction& in) {
  static const char* const names[] = {"ready", "start", "done", "end", "unpacked", "arrived"};
  const EventRole role = s.events[in.event].role;
  std::string kind = names[static_cast<int>(role)];
  if (role == EventRole::start) kind += in.stream.kind == ScheduleStream::Kind::unpack ? " (unpack stream)" : " (sender)";
  return kind;
}

// The suite's own proof that the checker can fail: every wait of the schedule is taken out in
// turn, and each kind of wait must be caught (a conflict) for some grid. The unpack streams'
// waits for their receiver's start are not required to be: the slab's arrival, which the unpack
// also waits for, follows the sender's wait for the same start.
TEST(ExchangeSchedule, TakingOutAWaitIsCaught) {
  std::vector<Trial> trials;
  const auto add = [&](Extent3 extent, std::size_t dims, Extent3 blocks, std::size_t halo, bool periodic, Peers peers,
                       std::size_t threshold) {
    GridOptions o;
    o.blocks = blocks;
    o.halo = halo;
    for (std::size_t a = 0; a < dims; ++a) o.periodic[a] = periodic;
    trials.push_back(Trial{Decomposition(extent, dims, blocks[0] * blocks[1] * blocks[2], o), peers, 0,
                           ScheduleOptions{8, threshold, 3}});
  };
  add({9, 10, 11}, 3, {2, 2, 2}, 2, true, Peers::always, 0);   // pipelined x and y faces
  add({9, 10, 11}, 3, {1, 1, 2}, 1, true, Peers::never, 0);    // x and y in place, z faces copied
  add({30, 20, 1}, 2, {2, 1, 1}, 1, false, Peers::never, 0);   // staged: pack, copy, unpack
  add({40, 1, 1}, 1, {3, 1, 1}, 3, true, Peers::always, 0);    // 1D rows: one copy each
  add({12, 9, 1}, 2, {1, 2, 1}, 2, true, Peers::always, 1 << 20);  // packed into the peer, not pipelined
  std::map<std::string, std::pair<std::size_t, std::size_t>> tally;  // kind: (caught, taken out)
  std::map<std::string, std::string> example;
  std::mt19937_64 rng(3);
  for (const Trial& t : trials) {
    const cush::detail::ExchangeProgram program = cush::detail::exchange_program(t.grid, peer_stores(t));
    const ExchangeSchedule whole = cush::detail::exchange_schedule(program, t.grid, t.options);
    ASSERT_TRUE(check(t, rng, &whole).empty()) << describe(t);
    for (auto list : {&ExchangeSchedule::start, &ExchangeSchedule::finish, &ExchangeSchedule::whole})
      for (std::size_t i = 0; i < (whole.*list).size(); ++i) {
        const Instruction& in = (whole.*list)[i];
        if (in.op != Instruction::Op::wait) continue;
        ExchangeSchedule cut = whole;
        (cut.*list).erase((cut.*list).begin() + static_cast<std::ptrdiff_t>(i));
        const std::string kind = wait_kind(whole, in);
        ++tally[kind].second;
        const std::string failure = check(t, rng, &cut);
        if (failure.empty()) continue;
        ++tally[kind].first;
        if (example.count(kind) == 0) example[kind] = describe(t) + "\n    " + failure;
      }
  }
  for (const auto& [kind, counts] : tally) {
    std::cout << "wait for " << kind << ": " << counts.first << " of " << counts.second << " taken out were caught\n";
    if (example.count(kind) != 0) std::cout << "  e.g. " << example[kind] << "\n";
  }
  for (const char* kind : {"ready", "start (sender)", "done", "end", "unpacked", "arrived"}) {
    ASSERT_EQ(tally.count(kind), 1U) << "no wait for " << kind << " in the grids";
    EXPECT_GT(tally[kind].first, 0U) << "taking out a wait for " << kind << " was never caught";
  }
}

// The run on host arrays checks values, not just order: without any one step some reader gets
// a wrong value, though the order of what is left may be fine.
TEST(ExchangeSchedule, TakingOutAStepIsCaught) {
  GridOptions o;
  o.blocks = {2, 1, 2};
  o.halo = 2;
  o.periodic = {true, false, true};
  const Trial t{Decomposition(Extent3{9, 10, 11}, 3, 4, o), Peers::always, 0, ScheduleOptions{8, 0, 2}};
  const cush::detail::ExchangeProgram program = cush::detail::exchange_program(t.grid, peer_stores(t));
  const ExchangeSchedule whole = cush::detail::exchange_schedule(program, t.grid, t.options);
  std::mt19937_64 rng(5);
  std::size_t steps = 0;
  for (auto list : {&ExchangeSchedule::start, &ExchangeSchedule::whole})
    for (std::size_t i = 0; i < (whole.*list).size(); ++i) {
      if ((whole.*list)[i].op != Instruction::Op::step) continue;
      ++steps;
      ExchangeSchedule cut = whole;
      (cut.*list).erase((cut.*list).begin() + static_cast<std::ptrdiff_t>(i));
      EXPECT_FALSE(check(t, rng, &cut).empty()) << "step " << i << " taken out unnoticed";
    }
  EXPECT_GT(steps, 20U);
}

// Slabs of a pipelined face: the pack on the sender's stream, throttled, then its arrival, the
// unpack stream's wait and the unpack of the same slab; the slabs tile the face along its
// slowest axis.
TEST(ExchangeSchedule, PipelinedFacesAreCutIntoSlabs) {
  GridOptions o;
  o.blocks = {2, 1, 1};
  o.periodic = {false, true, true};
  const Decomposition g(Extent3{12, 7, 9}, 3, 2, o);  // x faces of 1 x 7 x 9 cells, one each way
  const auto schedule = [&](Peers peers, std::size_t threshold, std::size_t chunks) {
    const Trial t{g, peers, 0, ScheduleOptions{8, threshold, chunks}};
    return cush::detail::exchange_schedule(cush::detail::exchange_program(g, peer_stores(t)), g, t.options);
  };
  const ExchangeSchedule s = schedule(Peers::always, 63 * 8, 5);
  EXPECT_EQ(s.pipelined_slabs, (std::vector<std::size_t>{5, 5}));  // one x face each way
  EXPECT_TRUE(s.unpack_streams);
  for (const std::vector<Instruction>* list : {&s.start, &s.whole}) {
    std::vector<std::size_t> covered(2, 0);  // z layers of each face, slab after slab
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Instruction& in = (*list)[i];
      if (!in.throttled) continue;
      ASSERT_LE(i + 3, list->size() - 1);
      const Instruction& arrived = (*list)[i + 1];
      const Instruction& wait = (*list)[i + 2];
      const Instruction& unpack = (*list)[i + 3];
      EXPECT_EQ(arrived.op, Instruction::Op::record);
      EXPECT_EQ(s.events[arrived.event].role, EventRole::arrived);
      EXPECT_EQ(arrived.stream, in.stream);
      EXPECT_EQ(wait.op, Instruction::Op::wait);
      EXPECT_EQ(wait.event, arrived.event);
      EXPECT_EQ(wait.stream, (ScheduleStream{ScheduleStream::Kind::unpack, 1 - in.stream.block}));
      EXPECT_EQ(unpack.stream, wait.stream);
      EXPECT_EQ(unpack.step.src.buffer, in.step.dst.buffer);
      EXPECT_EQ(unpack.step.src.lo, in.step.dst.lo);
      EXPECT_EQ(in.step.size, unpack.step.size);
      EXPECT_EQ(in.step.src.lo[2], 1 + covered[in.stream.block]);  // from the first owned layer on
      covered[in.stream.block] += in.step.size[2];
    }
    EXPECT_EQ(covered, (std::vector<std::size_t>{9, 9}));
  }
  // Below the threshold, with one slab, or with nothing packed into the peer: nothing pipelined.
  for (const ExchangeSchedule& none :
       {schedule(Peers::always, 63 * 8 + 1, 5), schedule(Peers::always, 0, 1), schedule(Peers::never, 0, 5)}) {
    EXPECT_TRUE(none.pipelined_slabs.empty());
    EXPECT_FALSE(none.unpack_streams);
    for (const Instruction& in : none.whole) EXPECT_FALSE(in.throttled);
  }
  // No more slabs than the face has layers along its slowest axis.
  EXPECT_EQ(schedule(Peers::always, 0, 64).pipelined_slabs, (std::vector<std::size_t>{9, 9}));
}

// exchange_start() runs the phases of the axes exchanged in place on the blocks' streams, before
// the hop to the exchange streams; exchange_finish() only hops back; exchange() never leaves the
// blocks' streams. Moving the in-place steps onto the exchange streams is a race with the
// interior kernel, which reads those ghosts.
TEST(ExchangeSchedule, AxesExchangedInPlaceRunOnTheBlockStreams) {
  GridOptions o;
  o.blocks = {1, 1, 2};
  o.halo = 2;
  o.periodic = {true, true, true};
  const Trial t{Decomposition(Extent3{9, 10, 11}, 3, 2, o), Peers::always, 0, ScheduleOptions{8, 0, 8}};
  const cush::detail::ExchangeProgram program = cush::detail::exchange_program(t.grid, peer_stores(t));
  const ExchangeSchedule s = cush::detail::exchange_schedule(program, t.grid, t.options);
  bool hopped = false;
  std::size_t in_place = 0, later = 0;
  for (const Instruction& in : s.start) {
    if (in.op == Instruction::Op::record && s.events[in.event].role == EventRole::ready) hopped = true;
    if (in.op != Instruction::Op::step) continue;
    const bool within = in.step.src.buffer == in.step.dst.buffer;
    EXPECT_EQ(in.stream.kind, hopped ? ScheduleStream::Kind::exchange : ScheduleStream::Kind::block);
    EXPECT_EQ(within, !hopped);  // the x and y phases copy within each block, the z phase between
    ++(hopped ? later : in_place);
  }
  EXPECT_EQ(in_place, 8U);  // x and y, two faces each, in each block
  EXPECT_EQ(later, 4U);     // both z faces of each block to the other, one copy each
  for (const Instruction& in : s.finish) EXPECT_NE(in.op, Instruction::Op::step);
  for (const Instruction& in : s.whole) EXPECT_EQ(in.stream.kind, ScheduleStream::Kind::block);
  std::mt19937_64 rng(9);
  ASSERT_TRUE(check(t, rng, &s).empty());
  // The in-place steps after the hop, on the exchange streams: still after the owned cells are
  // written, but no longer before the interior kernel.
  ExchangeSchedule moved = s;
  moved.start.clear();
  std::vector<Instruction> steps;
  for (const Instruction& in : s.start) {
    if (in.op == Instruction::Op::step && in.stream.kind == ScheduleStream::Kind::block) {
      steps.push_back(in);
      steps.back().stream.kind = ScheduleStream::Kind::exchange;
      continue;
    }
    moved.start.push_back(in);
    if (in.op == Instruction::Op::wait && s.events[in.event].role == EventRole::ready &&
        in.stream.block + 1 == t.grid.size()) {
      moved.start.insert(moved.start.end(), steps.begin(), steps.end());
    }
  }
  ASSERT_EQ(moved.start.size(), s.start.size());
  const std::string failure = check(t, rng, &moved);
  EXPECT_NE(failure.find("user kernel reads the interior"), std::string::npos) << failure;
}

}  // namespace
