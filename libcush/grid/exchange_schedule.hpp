#pragma once
// The order in which a Field's exchange runs its program (grid/exchange_program.hpp) on the GPUs:
// which stream runs each step, and which event records and waits order the steps with each
// other and with the user's work on the blocks' streams. Pure host code, decided once per
// engine, so the ordering is checked on the host (tests/grid/test_exchange_schedule.cpp models
// CUDA's stream and event rules and proves every conflicting pair of accesses ordered); the GPU
// engine (field_engine.cpp) creates the streams and events named here and enqueues the
// instructions as they stand.

#include <cstddef>
#include <vector>

#include "cush/grid.hpp"
#include "grid/exchange_program.hpp"

namespace cush::detail {

/// A stream of the exchange, by role and block: the block's stream (the user's, shared by the
/// fields made alike), the exchange's second stream of the block's device (exchange_start() to
/// exchange_finish()), or the stream on which the block unpacks pipelined faces.
struct ScheduleStream {
  enum class Kind { block, exchange, unpack };
  Kind kind = Kind::block;
  std::size_t block = 0;
  friend bool operator==(const ScheduleStream&, const ScheduleStream&) = default;
};

/// What an event marks, for diagnostics: the block's stream reached exchange_start() (ready);
/// a receiver reached a phase, so its ghosts and receive buffers are free (start); a sender's
/// steps into one receiver in a phase are done (done); the exchange stream is done (end); a
/// receiver's pipelined unpacks of a phase are done (unpacked); a slab of a pipelined face has
/// arrived (arrived).
enum class EventRole { ready, start, done, end, unpacked, arrived };

/// One CUDA event of the schedule, created on the device of `block`. An event is recorded again
/// by later phases and exchanges: a wait binds to its most recent record enqueued before it.
struct ScheduleEvent {
  EventRole role = EventRole::ready;
  std::size_t block = 0;
  std::size_t peer = 0;  ///< done: the receiver whose messages it marks
};

/// One thing to enqueue: run a step, record an event, or make a stream wait for an event.
struct Instruction {
  enum class Op { step, record, wait };
  Op op = Op::step;
  ScheduleStream stream;
  /// The step (Op::step), a slab of the program's step where a face is pipelined; its `stream`
  /// is `stream.block`.
  ExchangeStep step;
  /// A pipelined pack: launched on part of the device, leaving room for the unpacks beside it.
  bool throttled = false;
  std::size_t event = 0;  ///< Op::record and Op::wait: an index into ExchangeSchedule::events
};

struct ScheduleOptions {
  std::size_t element_size = 0;
  /// Faces packed straight into a peer's receive buffer of at least this many bytes are
  /// pipelined: packed and unpacked in slabs, slab c unpacked while slab c + 1 crosses the link.
  std::size_t pipeline_bytes = 0;
  /// Slabs of a pipelined face (fewer if it is thinner); 1: no pipelining.
  std::size_t max_chunks = 1;
};

struct ExchangeSchedule {
  std::vector<Instruction> start;   ///< exchange_start()
  std::vector<Instruction> finish;  ///< exchange_finish()
  std::vector<Instruction> whole;   ///< exchange(): everything on the blocks' streams
  std::vector<ScheduleEvent> events;
  /// The slab count of each pipelined message, in phase order (Field::pipelined_slabs()).
  std::vector<std::size_t> pipelined_slabs;
  /// True if some instruction runs on an unpack stream (then every block has one).
  bool unpack_streams = false;
};

/// The schedule of `program`, the exchange program of `grid`.
[[nodiscard]] ExchangeSchedule exchange_schedule(const ExchangeProgram& program, const Decomposition& grid,
                                                 const ScheduleOptions& options);
/// The schedule of a program over `blocks` blocks with no phase exchanged in place: every step
/// of exchange_start() runs on the exchange streams (a graph field's, graph/graph_engine.hpp).
[[nodiscard]] ExchangeSchedule exchange_schedule(const ExchangeProgram& program, std::size_t blocks,
                                                 const ScheduleOptions& options);

}  // namespace cush::detail
