#include "exchange_model.hpp"

#include "grid/step_batches.hpp"

#include <algorithm>
#include <utility>

namespace cush_test {

namespace {

using cush::detail::BufferRef;
using cush::detail::EventRole;
using cush::detail::ExchangeStep;
using cush::detail::Instruction;
using cush::detail::ScheduleStream;

constexpr double unset = -1.0;

// What the user's kernel of `exchange` writes into the cell at global position `g`.
double cell_value(const cush::Extent3& e, const Cells3& g, std::size_t exchange) {
  return 1.0 + static_cast<double>(g[0] + e[0] * (g[1] + e[1] * g[2]) + 100000 * exchange);
}

std::size_t offset(const cush::Extent3& alloc, const cush::Extent3& p) { return p[0] + alloc[0] * (p[1] + alloc[1] * p[2]); }

std::string role_name(EventRole r) {
  switch (r) {
    case EventRole::ready: return "ready";
    case EventRole::start: return "start";
    case EventRole::done: return "done";
    case EventRole::end: return "end";
    case EventRole::unpacked: return "unpacked";
    case EventRole::arrived: return "arrived";
  }
  return "?";
}

std::string box_text(const cush::Extent3& lo, const cush::Extent3& size) {
  std::string s;
  for (std::size_t a = 0; a < 3; ++a)
    s += std::string(a == 0 ? "[" : " x [") + std::to_string(lo[a]) + ", " + std::to_string(lo[a] + size[a]) + ")";
  return s;
}

}  // namespace

ExchangeModel::ExchangeModel(const cush::Decomposition& grid, const cush::detail::ExchangeProgram& program,
                             const cush::detail::ExchangeSchedule& schedule, ExchangeCall call, std::size_t exchanges,
                             bool batched)
    : grid_(grid),
      program_(program),
      schedule_(schedule),
      blocks_(grid.size()),
      batched_(batched),
      messages_(program.ends.size()) {
  for (std::size_t x = 0; x < exchanges; ++x) {
    const std::string tag = " (exchange " + std::to_string(x) + ")";
    for (std::size_t k = 0; k < blocks_; ++k) {
      Action a{Action::Kind::write_owned, {}, k, {}, {}, x};
      user(k, a, true, "user kernel writes the owned cells of block " + std::to_string(k) + tag);
    }
    if (call == ExchangeCall::whole) {
      enqueue(schedule.whole, x, true);
    } else {
      enqueue(schedule.start, x, false);
      for (std::size_t k = 0; k < blocks_; ++k) {
        // The stencil's radius is the halo depth (axis 0 may have no ghosts at all).
        const cush::Box in = grid.interior(k, grid.depth());
        if (in.empty()) continue;
        Action a{Action::Kind::read, {}, k, {}, {}, x};
        for (std::size_t d = 0; d < 3; ++d) {
          // Local in.lo - radius is buffer position in.lo.
          a.lo[d] = static_cast<std::size_t>(in.lo[d]);
          a.size[d] = in.size[d] + 2 * grid.halo(d);
        }
        user(k, a, false, "user kernel reads the interior of block " + std::to_string(k) + " grown by the radius" + tag);
      }
      enqueue(schedule.finish, x, false);
    }
    for (std::size_t k = 0; k < blocks_; ++k) {
      const cush::Extent3 alloc = grid.allocated(k);
      Action a{Action::Kind::read, {}, k, {0, 0, 0}, {grid.row_cells(k), alloc[1], alloc[2]}, x};
      user(k, a, false, "user kernel reads the whole block " + std::to_string(k) + tag);
    }
  }
}

void ExchangeModel::user(std::size_t block, Action action, bool write, std::string label) {
  Access access{block, action.lo, action.size, write};
  if (write) {
    const cush::Box o = grid_.owned(block);
    access.lo = {grid_.halo(0), grid_.halo(1), grid_.halo(2)};
    access.size = o.size;
  }
  model_.work(stream_id(ScheduleStream{ScheduleStream::Kind::block, block}), {access}, std::move(label));
  actions_.push_back(action);
}

void ExchangeModel::step(const Instruction& in, std::size_t stream, std::size_t exchange, const std::string& tag) {
  const ExchangeStep& s = in.step;
  const std::string label = stream_name(in.stream) + (in.throttled ? " packs slab " : " copies ") +
                            buffer_name(buffer_id(s.src.buffer)) + " " + box_text(s.src.lo, s.size) + " to " +
                            buffer_name(buffer_id(s.dst.buffer)) + " " + box_text(s.dst.lo, s.size) +
                            (s.contiguous ? " as one run" : "") + tag;
  model_.work(stream, accesses(s), label);
  actions_.push_back(Action{Action::Kind::step, s, s.stream, {}, {}, exchange});
}

void ExchangeModel::enqueue(const std::vector<Instruction>& list, std::size_t exchange, bool whole) {
  const std::string tag = " (exchange " + std::to_string(exchange) + ")";
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Instruction& in = list[i];
    const std::string on = stream_name(in.stream);
    // A batch of box copies is one launch: its copies run side by side. Modelled as streams of
    // their own (ids after the schedule's) forked from the stream and joined back to it.
    const std::size_t end = batched_ ? cush::detail::batch_end(list, i) : i + 1;
    if (end - i > 1) {
      ++batches_;
      const std::size_t fork = schedule_.events.size(), first_lane = 3 * blocks_;
      model_.record(stream_id(in.stream), fork, on + " starts a launch of " + std::to_string(end - i) + " box copies" + tag);
      actions_.push_back(Action{});
      for (std::size_t k = 0; k < end - i; ++k) {
        if (list[i + k].step.stream != in.stream.block && problems_.empty())
          problems_ = on + ": a step of block " + std::to_string(list[i + k].step.stream);
        model_.wait(first_lane + k, fork, "box copy " + std::to_string(k) + " of the launch starts" + tag);
        actions_.push_back(Action{});
        step(list[i + k], first_lane + k, exchange, tag);
        model_.record(first_lane + k, fork + 1 + k, "box copy " + std::to_string(k) + " of the launch ends" + tag);
        actions_.push_back(Action{});
      }
      for (std::size_t k = 0; k < end - i; ++k) {
        model_.wait(stream_id(in.stream), fork + 1 + k, on + " ends the launch" + tag);
        actions_.push_back(Action{});
      }
      i = end - 1;
      continue;
    }
    const auto problem = [&](const std::string& what) {
      if (problems_.empty()) problems_ = on + ": " + what;
    };
    if (in.stream.block >= blocks_) problem("no such block");
    if (in.stream.kind == ScheduleStream::Kind::unpack && !schedule_.unpack_streams) problem("no unpack streams");
    if (whole && in.stream.kind == ScheduleStream::Kind::exchange) problem("exchange() uses an exchange stream");
    if (in.op == Instruction::Op::step) {
      if (in.step.stream != in.stream.block) problem("a step of block " + std::to_string(in.step.stream));
      step(in, stream_id(in.stream), exchange, tag);
      continue;
    }
    if (in.event >= schedule_.events.size()) {
      problem("no such event");
      continue;
    }
    const cush::detail::ScheduleEvent& e = schedule_.events[in.event];
    const std::string event = role_name(e.role) + "[" + std::to_string(e.block) + "] (event " + std::to_string(in.event) + ")";
    if (in.op == Instruction::Op::record) {
      // cudaEventRecord takes only a stream of the event's device.
      if (e.block != in.stream.block) problem("records " + event + " of another device");
      model_.record(stream_id(in.stream), in.event, on + " records " + event + tag);
    } else {
      model_.wait(stream_id(in.stream), in.event, on + " waits for " + event + tag);
    }
    actions_.push_back(Action{});
  }
}

std::size_t ExchangeModel::buffer_id(const BufferRef& b) const {
  switch (b.kind) {
    case BufferRef::Kind::send: return blocks_ + b.index;
    case BufferRef::Kind::recv: return blocks_ + messages_ + b.index;
    case BufferRef::Kind::block: break;
  }
  return b.index;
}

std::string ExchangeModel::buffer_name(std::size_t id) const {
  if (id < blocks_) return "block " + std::to_string(id);
  if (id < blocks_ + messages_) return "send buffer " + std::to_string(id - blocks_);
  return "receive buffer " + std::to_string(id - blocks_ - messages_);
}

std::size_t ExchangeModel::stream_id(const ScheduleStream& s) const {
  switch (s.kind) {
    case ScheduleStream::Kind::exchange: return blocks_ + s.block;
    case ScheduleStream::Kind::unpack: return 2 * blocks_ + s.block;
    case ScheduleStream::Kind::block: break;
  }
  return s.block;
}

std::string ExchangeModel::stream_name(const ScheduleStream& s) const {
  switch (s.kind) {
    case ScheduleStream::Kind::exchange: return "exchange stream " + std::to_string(s.block);
    case ScheduleStream::Kind::unpack: return "unpack stream " + std::to_string(s.block);
    case ScheduleStream::Kind::block: break;
  }
  return "block stream " + std::to_string(s.block);
}

// A box copy touches its boxes; a contiguous step, one linear copy, the whole run from the
// box's first cell to its last, row padding included.
std::vector<Access> ExchangeModel::accesses(const ExchangeStep& s) const {
  std::vector<Access> out;
  const auto side = [&](const cush::detail::StepSide& side, bool write) {
    if (!s.contiguous) {
      out.push_back(Access{buffer_id(side.buffer), side.lo, s.size, write});
      return;
    }
    for (const auto& [lo, size] : run_boxes(side.alloc, offset(side.alloc, side.lo), cush::detail::box_span(side.alloc, s.size)))
      out.push_back(Access{buffer_id(side.buffer), lo, size, write});
  };
  side(s.src, false);
  side(s.dst, true);
  return out;
}

std::string ExchangeModel::unordered_conflict() {
  return model_.unordered_conflict([this](std::size_t id) { return buffer_name(id); });
}

// The value of the cell at `buffer_cell` of block `block` once exchange `exchange` is done: the
// value of the cell it stands for (wrapping around periodic axes); unset beyond a non-periodic
// edge (the user's boundary values, which this user never writes).
double ExchangeModel::expected(std::size_t block, const Cells3& buffer_cell, std::size_t exchange) const {
  const cush::Box o = grid_.owned(block);
  const cush::Extent3& e = grid_.extent();
  Cells3 g{};
  for (std::size_t a = 0; a < 3; ++a) {
    auto c = o.lo[a] + static_cast<std::ptrdiff_t>(buffer_cell[a]) - static_cast<std::ptrdiff_t>(grid_.halo(a));
    const auto n = static_cast<std::ptrdiff_t>(e[a]);
    if (c < 0 || c >= n) {
      if (!grid_.periodic(a)) return unset;
      c = (c % n + n) % n;
    }
    g[a] = static_cast<std::size_t>(c);
  }
  return cell_value(e, g, exchange);
}

std::string ExchangeModel::run(std::mt19937_64& rng) {
  std::vector<std::vector<double>> memory(blocks_ + 2 * messages_);
  std::vector<cush::Extent3> dims(memory.size());
  for (std::size_t k = 0; k < blocks_; ++k) {
    memory[k].assign(grid_.allocated_cells(k), unset);
    dims[k] = grid_.allocated(k);
  }
  for (std::size_t m = 0; m < messages_; ++m) {
    memory[blocks_ + m].assign(program_.send_cells[m], unset);
    memory[blocks_ + messages_ + m].assign(program_.recv_cells[m], unset);
  }
  const std::vector<StreamModel::Op>& ops = model_.ops();
  for (std::size_t op : model_.random_order(rng)) {
    const Action& a = actions_[op];
    if (a.kind == Action::Kind::write_owned) {
      const cush::Box o = grid_.owned(a.block);
      for (std::size_t z = 0; z < o.size[2]; ++z)
        for (std::size_t y = 0; y < o.size[1]; ++y)
          for (std::size_t x = 0; x < o.size[0]; ++x) {
            const Cells3 c{x + grid_.halo(0), y + grid_.halo(1), z + grid_.halo(2)};
            memory[a.block][offset(dims[a.block], c)] = expected(a.block, c, a.exchange);
          }
    } else if (a.kind == Action::Kind::read) {
      for (std::size_t z = a.lo[2]; z < a.lo[2] + a.size[2]; ++z)
        for (std::size_t y = a.lo[1]; y < a.lo[1] + a.size[1]; ++y)
          for (std::size_t x = a.lo[0]; x < a.lo[0] + a.size[0]; ++x) {
            const Cells3 c{x, y, z};
            const double got = memory[a.block][offset(dims[a.block], c)];
            const double want = expected(a.block, c, a.exchange);
            if (got != want)
              return "#" + std::to_string(op) + " (" + ops[op].label + ") reads " + std::to_string(got) + " at buffer cell " +
                     box_text(c, {1, 1, 1}) + ", not " + std::to_string(want);
          }
    } else if (a.kind == Action::Kind::step) {
      const ExchangeStep& s = a.step;
      std::vector<double>& src = memory[buffer_id(s.src.buffer)];
      std::vector<double>& dst = memory[buffer_id(s.dst.buffer)];
      const std::size_t cells = s.src.alloc[0] * s.src.alloc[1] * s.src.alloc[2];
      if (src.size() != cells || dst.size() != s.dst.alloc[0] * s.dst.alloc[1] * s.dst.alloc[2])
        return "#" + std::to_string(op) + " (" + ops[op].label + ") has the wrong buffer sizes";
      if (s.contiguous) {
        const std::size_t n = cush::detail::box_span(s.src.alloc, s.size);
        const std::size_t from = offset(s.src.alloc, s.src.lo);
        const std::size_t to = offset(s.dst.alloc, s.dst.lo);
        if (from + n > src.size() || to + n > dst.size()) return "#" + std::to_string(op) + " leaves its buffers";
        const std::vector<double> run(src.begin() + static_cast<std::ptrdiff_t>(from),
                                      src.begin() + static_cast<std::ptrdiff_t>(from + n));
        std::copy(run.begin(), run.end(), dst.begin() + static_cast<std::ptrdiff_t>(to));
        continue;
      }
      for (std::size_t z = 0; z < s.size[2]; ++z)
        for (std::size_t y = 0; y < s.size[1]; ++y)
          for (std::size_t x = 0; x < s.size[0]; ++x) {
            const cush::Extent3 from{s.src.lo[0] + x, s.src.lo[1] + y, s.src.lo[2] + z};
            const cush::Extent3 to{s.dst.lo[0] + x, s.dst.lo[1] + y, s.dst.lo[2] + z};
            dst.at(offset(s.dst.alloc, to)) = src.at(offset(s.src.alloc, from));
          }
    }
  }
  return {};
}

}  // namespace cush_test
