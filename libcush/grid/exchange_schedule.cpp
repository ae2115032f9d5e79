#include "grid/exchange_schedule.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace cush::detail {

namespace {

// The axis a box is split into slabs along: its slowest one with more than one cell.
std::size_t slab_axis(const Extent3& size) { return size[2] > 1 ? 2 : (size[1] > 1 ? 1 : 0); }

// Slab c of `chunks` of a step, split along slab_axis(). The receive buffer is a dense array of
// the whole box, so a slab keeps its place in it.
ExchangeStep slab(const ExchangeStep& s, std::size_t c, std::size_t chunks) {
  const std::size_t a = slab_axis(s.size);
  const std::size_t n = s.size[a];
  const std::size_t lo = n * c / chunks;
  const std::size_t hi = n * (c + 1) / chunks;
  ExchangeStep out = s;
  out.src.lo[a] += lo;
  out.dst.lo[a] += lo;
  out.size[a] = hi - lo;
  return out;
}

constexpr std::size_t no_index = static_cast<std::size_t>(-1);

class Builder {
 public:
  Builder(const ExchangeProgram& program, std::size_t blocks, std::size_t in_place, const ScheduleOptions& options)
      : program_(program), p_(blocks), in_place_(in_place) {
    for (std::size_t k = 0; k < p_; ++k) {
      ready_.push_back(event(EventRole::ready, k));
      start_.push_back(event(EventRole::start, k));
      end_.push_back(event(EventRole::end, k));
    }
    plan_pipelines(options);
    plan_phases();
  }

  ExchangeSchedule build() && {
    using Kind = ScheduleStream::Kind;
    const std::size_t phases = program_.phases.size();
    run(out_.start, Kind::block, 0, in_place_);
    // The rest hops to the exchange streams, after the work already on the blocks' streams.
    for (std::size_t k = 0; k < p_; ++k) {
      record(out_.start, {Kind::block, k}, ready_[k]);
      wait(out_.start, {Kind::exchange, k}, ready_[k]);
    }
    run(out_.start, Kind::exchange, in_place_, phases);
    for (std::size_t k = 0; k < p_; ++k) {
      record(out_.finish, {Kind::exchange, k}, end_[k]);
      wait(out_.finish, {Kind::block, k}, end_[k]);
    }
    run(out_.whole, Kind::block, 0, phases);
    return std::move(out_);
  }

 private:
  // A pipelined message of a phase: its pack (a send step) and unpack (a receive step), split
  // into `chunks` slabs; slab c's arrival is event `arrived[c]` (recorded on the sender).
  struct Pipelined {
    std::size_t send = 0;
    std::size_t receive = 0;
    std::size_t chunks = 0;
    std::vector<std::size_t> arrived;
  };

  // What run() does in a phase: which blocks record a start (those written by another's steps,
  // and pipelined receivers), which start each send step waits for first, which steps are
  // pipelined, and after which send step each link's done is due (the sender's last step into
  // that receiver; recorded before the sender's next wait; links with none, after all sends).
  struct PhasePlan {
    std::vector<std::size_t> starts, unpackers;            // blocks, ascending
    std::vector<std::size_t> wait_before;                  // by send step: a block's start, or no_index
    std::vector<std::size_t> piped_send;                   // by send step: index in pipelined, or no_index
    std::vector<char> piped_receive;                       // by receive step
    std::vector<std::vector<std::size_t>> done_after;      // by send step: indices into phase.links
    std::vector<std::size_t> done_last;                    // links whose done comes after all sends
  };

  std::size_t event(EventRole role, std::size_t block, std::size_t peer = 0) {
    out_.events.push_back(ScheduleEvent{role, block, peer});
    return out_.events.size() - 1;
  }

  // Finds the faces packed into a peer's receive buffer that are big enough to pipeline.
  void plan_pipelines(const ScheduleOptions& options) {
    bool any = false;
    for (const ExchangePhase& phase : program_.phases) {
      std::vector<Pipelined> list;
      for (std::size_t r = 0; r < phase.receives.size(); ++r) {
        const ExchangeStep& unpack = phase.receives[r];
        for (std::size_t i = 0; i < phase.sends.size(); ++i) {
          const ExchangeStep& pack = phase.sends[i];
          if (pack.contiguous || pack.dst.buffer != unpack.src.buffer) continue;
          const std::size_t cells = pack.size[0] * pack.size[1] * pack.size[2];
          if (cells * options.element_size < options.pipeline_bytes) continue;
          const std::size_t chunks = std::min(options.max_chunks, pack.size[slab_axis(pack.size)]);
          if (chunks < 2) continue;
          Pipelined m{i, r, chunks, {}};
          for (std::size_t c = 0; c < chunks; ++c) m.arrived.push_back(event(EventRole::arrived, pack.stream));
          out_.pipelined_slabs.push_back(chunks);
          list.push_back(std::move(m));
          any = true;
        }
      }
      pipelined_.push_back(std::move(list));
    }
    if (!any) return;
    out_.unpack_streams = true;
    for (std::size_t k = 0; k < p_; ++k) unpacked_.push_back(event(EventRole::unpacked, k));
  }

  void plan_phases() {
    for (std::size_t ph = 0; ph < program_.phases.size(); ++ph) {
      const ExchangePhase& phase = program_.phases[ph];
      PhasePlan plan;
      std::vector<char> starts(p_, 0), waited(p_ * p_, 0), unpackers(p_, 0);
      plan.wait_before.assign(phase.sends.size(), no_index);
      plan.piped_send.assign(phase.sends.size(), no_index);
      plan.piped_receive.assign(phase.receives.size(), 0);
      // A sender writes into a receiver's ghosts or receive buffer only after the receiver's
      // earlier exchange work (which read them) is done: it waits for the receiver's start of
      // the phase just before its first step into the receiver (its packs run before).
      for (std::size_t i = 0; i < phase.sends.size(); ++i) {
        const ExchangeStep& s = phase.sends[i];
        const std::size_t target = buffer_block(program_, s.dst.buffer);
        if (target != s.stream && waited[s.stream * p_ + target] == 0) {
          waited[s.stream * p_ + target] = 1;
          starts[target] = 1;
          plan.wait_before[i] = target;
        }
      }
      for (std::size_t j = 0; j < pipelined_[ph].size(); ++j) {
        const Pipelined& m = pipelined_[ph][j];
        plan.piped_send[m.send] = j;
        plan.piped_receive[m.receive] = 1;
        const std::size_t to = phase.receives[m.receive].stream;
        starts[to] = 1;
        unpackers[to] = 1;
      }
      // A done event per link, recorded after the sender's last step into the receiver and before
      // the sender's next wait (run()): a receiver waits for its own messages, never for the
      // sender's waits on other blocks' starts (with one done per sender after all its steps, a
      // part of a chain waited, through its neighbour, for the part beyond). Recorded no earlier,
      // so that a done never parts box copies that would run as one launch (step_batches.hpp).
      plan.done_after.assign(phase.sends.size(), {});
      for (std::size_t l = 0; l < phase.links.size(); ++l) {
        const auto [from, to] = phase.links[l];
        if (link_done_.count(phase.links[l]) == 0) link_done_[phase.links[l]] = event(EventRole::done, from, to);
        std::size_t last = no_index;
        for (std::size_t i = 0; i < phase.sends.size(); ++i)
          if (phase.sends[i].stream == from && buffer_block(program_, phase.sends[i].dst.buffer) == to) last = i;
        if (last == no_index) plan.done_last.push_back(l);
        else plan.done_after[last].push_back(l);
      }
      for (std::size_t k = 0; k < p_; ++k) {
        if (starts[k] != 0) plan.starts.push_back(k);
        if (unpackers[k] != 0) plan.unpackers.push_back(k);
      }
      plans_.push_back(std::move(plan));
    }
  }

  // Phases [first, last) of the program, on the streams of kind `on` (one per block).
  void run(std::vector<Instruction>& list, ScheduleStream::Kind on, std::size_t first, std::size_t last) const {
    const auto at = [on](std::size_t k) { return ScheduleStream{on, k}; };
    const auto unpack = [](std::size_t k) { return ScheduleStream{ScheduleStream::Kind::unpack, k}; };
    for (std::size_t ph = first; ph < last; ++ph) {
      const ExchangePhase& phase = program_.phases[ph];
      const PhasePlan& plan = plans_[ph];
      const std::vector<Pipelined>& piped = pipelined_[ph];
      // Every start is recorded before any sender waits, so each wait binds to this phase's.
      for (std::size_t k : plan.starts) record(list, at(k), start_[k]);
      // The unpack streams of pipelined receivers start after their receiver's earlier work.
      for (std::size_t k : plan.unpackers) wait(list, unpack(k), start_[k]);
      // Dones whose sender's last step into the receiver is enqueued, by sender: recorded before
      // the sender's next wait, its next pipelined pack, or at the end of the phase's sends.
      std::vector<std::vector<std::size_t>> pending(p_);
      const auto flush = [&](std::size_t k) {
        for (std::size_t l : pending[k]) record(list, at(k), done_of(phase.links[l]));
        pending[k].clear();
      };
      for (std::size_t i = 0; i < phase.sends.size(); ++i) {
        const ExchangeStep& s = phase.sends[i];
        if (plan.wait_before[i] != no_index || plan.piped_send[i] != no_index) flush(s.stream);
        if (plan.wait_before[i] != no_index) wait(list, at(s.stream), start_[plan.wait_before[i]]);
        const auto dones = [&] {
          for (std::size_t l : plan.done_after[i]) pending[s.stream].push_back(l);
        };
        if (plan.piped_send[i] == no_index) {
          step(list, at(s.stream), s, false);
          dones();
          continue;
        }
        // Slab by slab: the pack on the sender, then the unpack on the receiver's unpack stream
        // once the slab has arrived.
        const Pipelined& m = piped[plan.piped_send[i]];
        const ExchangeStep& u = phase.receives[m.receive];
        for (std::size_t c = 0; c < m.chunks; ++c) {
          step(list, at(s.stream), slab(s, c, m.chunks), true);
          record(list, at(s.stream), m.arrived[c]);
          wait(list, unpack(u.stream), m.arrived[c]);
          step(list, unpack(u.stream), slab(u, c, m.chunks), false);
        }
        dones();
      }
      // Receivers continue once their messages are done. Every done is recorded before any
      // receiver waits, so each wait binds to this phase's record.
      for (std::size_t k = 0; k < p_; ++k) flush(k);
      for (std::size_t l : plan.done_last) record(list, at(phase.links[l].first), done_of(phase.links[l]));
      for (const auto& link : phase.links) wait(list, at(link.second), done_of(link));
      for (std::size_t r = 0; r < phase.receives.size(); ++r)
        if (plan.piped_receive[r] == 0) step(list, at(phase.receives[r].stream), phase.receives[r], false);
      for (std::size_t k : plan.unpackers) {
        record(list, unpack(k), unpacked_[k]);
        wait(list, at(k), unpacked_[k]);
      }
    }
  }

  static void step(std::vector<Instruction>& list, ScheduleStream on, const ExchangeStep& s, bool throttled) {
    list.push_back(Instruction{Instruction::Op::step, on, s, throttled, 0});
  }
  static void record(std::vector<Instruction>& list, ScheduleStream on, std::size_t e) {
    list.push_back(Instruction{Instruction::Op::record, on, {}, false, e});
  }
  static void wait(std::vector<Instruction>& list, ScheduleStream on, std::size_t e) {
    list.push_back(Instruction{Instruction::Op::wait, on, {}, false, e});
  }

  [[nodiscard]] std::size_t done_of(const std::pair<std::size_t, std::size_t>& link) const { return link_done_.at(link); }

  const ExchangeProgram& program_;
  std::size_t p_;
  ExchangeSchedule out_;
  std::vector<std::size_t> ready_, start_, end_, unpacked_;  // events by block
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> link_done_;  // (sender, receiver) -> its done event
  std::vector<std::vector<Pipelined>> pipelined_;                  // by phase
  std::vector<PhasePlan> plans_;                                   // by phase
  std::size_t in_place_ = 0;
};

}  // namespace

ExchangeSchedule exchange_schedule(const ExchangeProgram& program, const Decomposition& grid,
                                   const ScheduleOptions& options) {
  // Leading phases whose axes are exchanged in place (Decomposition::exchanged_in_place): every
  // message within one block. exchange_start() runs them on the blocks' streams, so kernels
  // enqueued after it may read those ghosts.
  std::size_t in_place = 0;
  while (in_place < program.phases.size() && grid.exchanged_in_place(program.phases[in_place].axis)) ++in_place;
  return Builder(program, grid.size(), in_place, options).build();
}

ExchangeSchedule exchange_schedule(const ExchangeProgram& program, std::size_t blocks, const ScheduleOptions& options) {
  return Builder(program, blocks, 0, options).build();
}

}  // namespace cush::detail
