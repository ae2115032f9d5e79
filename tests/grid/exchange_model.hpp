#pragma once
// A Field's exchange schedule with the user's work around it, as operations on streams
// (support/simulate_streams.hpp), so the host can prove its ordering and run it.
//
// The user's work is what docs/grid.md allows: before an exchange a kernel on each block's
// stream writes the block's owned cells; between exchange_start() and exchange_finish() one
// reads the interior at the halo depth grown by that radius (which reaches the ghosts of the
// axes exchanged in place); after the exchange one reads the whole block, owned cells and ghosts.
// Two exchanges in a row, so the second is checked against the first's readers too.

#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "cush/grid.hpp"
#include "grid/exchange_program.hpp"
#include "grid/exchange_schedule.hpp"
#include "support/simulate_streams.hpp"

namespace cush_test {

enum class ExchangeCall { start_finish, whole };

class ExchangeModel {
 public:
  /// `batched`: the box copies that the engine launches together (grid/step_batches.hpp) run as
  /// one launch does, side by side in any order, instead of one after another on their stream.
  ExchangeModel(const cush::Decomposition& grid, const cush::detail::ExchangeProgram& program,
                const cush::detail::ExchangeSchedule& schedule, ExchangeCall call, std::size_t exchanges = 2,
                bool batched = false);

  /// Empty, or the first instruction that breaks a rule of CUDA or of the engine: a step on
  /// another block's stream, an event recorded on another device's stream, an unpack stream the
  /// schedule does not create, an exchange stream in exchange().
  [[nodiscard]] const std::string& problems() const noexcept { return problems_; }
  /// Empty, or the first pair of conflicting accesses that the schedule leaves unordered.
  [[nodiscard]] std::string unordered_conflict();
  /// Runs everything on host arrays in a random order that the streams and events allow. Empty,
  /// or the first cell a user kernel reads that does not hold the value of the cell it stands
  /// for (as written by the latest user kernel), or that a step reads or writes outside its buffer.
  [[nodiscard]] std::string run(std::mt19937_64& rng);
  [[nodiscard]] std::size_t operations() const noexcept { return actions_.size(); }
  /// With `batched`: the launches of several box copies the schedule's lists make.
  [[nodiscard]] std::size_t batches() const noexcept { return batches_; }

 private:
  struct Action {
    enum class Kind { none, step, write_owned, read };
    Kind kind = Kind::none;
    cush::detail::ExchangeStep step;
    std::size_t block = 0;
    Cells3 lo{}, size{};  // read: buffer coordinates
    std::size_t exchange = 0;
  };

  void enqueue(const std::vector<cush::detail::Instruction>& list, std::size_t exchange, bool whole);
  void step(const cush::detail::Instruction& in, std::size_t stream, std::size_t exchange, const std::string& tag);
  void user(std::size_t block, Action action, bool write, std::string label);
  [[nodiscard]] std::size_t buffer_id(const cush::detail::BufferRef& b) const;
  [[nodiscard]] std::string buffer_name(std::size_t id) const;
  [[nodiscard]] std::string stream_name(const cush::detail::ScheduleStream& s) const;
  [[nodiscard]] std::size_t stream_id(const cush::detail::ScheduleStream& s) const;
  [[nodiscard]] std::vector<Access> accesses(const cush::detail::ExchangeStep& s) const;
  [[nodiscard]] double expected(std::size_t block, const Cells3& buffer_cell, std::size_t exchange) const;

  const cush::Decomposition& grid_;
  const cush::detail::ExchangeProgram& program_;
  const cush::detail::ExchangeSchedule& schedule_;
  std::size_t blocks_ = 0;
  bool batched_ = false;
  std::size_t batches_ = 0;  // launches of several box copies
  std::size_t messages_ = 0;
  StreamModel model_;
  std::vector<Action> actions_;  // by operation of model_
  std::string problems_;
};

}  // namespace cush_test
