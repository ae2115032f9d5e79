#pragma once
// Runs one rank's steps of a transfer list over ranks (host/rank_transfers.hpp) on host arrays,
// with the order rules that header states, over any message layer `Comm`:
//   handle = comm.send(peer, tag, const T* data, count)   (the data must stay until wait_send)
//   comm.wait_send(handle)
//   handle = comm.receive(peer, tag, count)
//   std::vector<T> comm.wait_receive(handle)
// Shared by the tests that simulate every rank in one process (threads and a mailbox) and the
// tests under mpiexec (MPI messages). Combine transfers add.

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "host/rank_transfers.hpp"

namespace cush_test {

/// One rank's memory: the source plan's buffers, the destination plan's (the same vector for
/// lists within one plan) and the host buffer (the root's; empty elsewhere). Buffers of
/// positions on other ranks are empty.
template <class T>
struct RankMemory {
  std::vector<std::vector<T>>* src = nullptr;
  std::vector<std::vector<T>>* dst = nullptr;
  std::vector<T>* host = nullptr;
  std::vector<T>& at(const cush::Location& l, bool source) const {
    if (l.is_host()) return *host;
    return (source ? *src : *dst).at(static_cast<std::size_t>(l.pos));
  }
};

template <class T, class Comm>
void run_rank_steps(const std::vector<cush::detail::RankStep>& steps, const RankMemory<T>& mem, Comm& comm) {
  using Kind = cush::detail::RankStep::Kind;
  struct Sent {
    const std::vector<T>* from;
    typename Comm::Handle handle;
    bool done = false;
  };
  struct Arriving {
    const cush::detail::RankStep* step;
    std::vector<T>* into;
    typename Comm::Handle handle;
    bool applied = false;
  };
  std::vector<Sent> sent;
  std::vector<Arriving> arriving;
  const auto put = [](const cush::Transfer& t, const T* from, std::vector<T>& into) {
    ASSERT_LE(t.dst.offset + t.count, into.size());
    for (std::size_t k = 0; k < t.count; ++k) {
      T& d = into[t.dst.offset + k];
      d = t.combine ? d + from[k] : from[k];
    }
  };
  // Before writing `buf`: the sends reading it have left.
  const auto settle_reads_of = [&](const std::vector<T>* buf) {
    for (Sent& s : sent)
      if (!s.done && s.from == buf) {
        comm.wait_send(s.handle);
        s.done = true;
      }
  };
  const auto apply = [&](Arriving& a) {
    settle_reads_of(a.into);
    const std::vector<T> data = comm.wait_receive(a.handle);
    ASSERT_EQ(data.size(), a.step->transfer.count);
    put(a.step->transfer, data.data(), *a.into);
    a.applied = true;
  };
  // Before reading or writing `buf`: the earlier receives into it have landed, in list order.
  const auto settle_writes_to = [&](const std::vector<T>* buf) {
    for (Arriving& a : arriving)
      if (!a.applied && a.into == buf) apply(a);
  };
  for (const cush::detail::RankStep& step : steps) {
    const cush::Transfer& t = step.transfer;
    if (step.kind == Kind::receive) {
      arriving.push_back(Arriving{&step, &mem.at(t.dst, false), comm.receive(step.peer, step.index, t.count)});
      continue;
    }
    std::vector<T>& src = mem.at(t.src, true);
    settle_writes_to(&src);
    ASSERT_LE(t.src.offset + t.count, src.size());
    if (step.kind == Kind::send) {
      sent.push_back(Sent{&src, comm.send(step.peer, step.index, src.data() + t.src.offset, t.count)});
      continue;
    }
    std::vector<T>& dst = mem.at(t.dst, false);
    settle_reads_of(&dst);
    settle_writes_to(&dst);
    const std::vector<T> from(src.begin() + static_cast<std::ptrdiff_t>(t.src.offset),
                              src.begin() + static_cast<std::ptrdiff_t>(t.src.offset + t.count));
    put(t, from.data(), dst);
  }
  for (Arriving& a : arriving)
    if (!a.applied) apply(a);
  for (Sent& s : sent)
    if (!s.done) comm.wait_send(s.handle);
}

/// The whole list run in order on every position's memory (one process holding all of it): the
/// reference a run over ranks must equal.
template <class T>
void run_in_order(const cush::TransferList& list, const RankMemory<T>& mem) {
  for (const cush::Transfer& t : list) {
    const std::vector<T>& src = mem.at(t.src, true);
    std::vector<T>& dst = mem.at(t.dst, false);
    ASSERT_LE(t.src.offset + t.count, src.size());
    ASSERT_LE(t.dst.offset + t.count, dst.size());
    const std::vector<T> from(src.begin() + static_cast<std::ptrdiff_t>(t.src.offset),
                              src.begin() + static_cast<std::ptrdiff_t>(t.src.offset + t.count));
    for (std::size_t k = 0; k < t.count; ++k) dst[t.dst.offset + k] = t.combine ? dst[t.dst.offset + k] + from[k] : from[k];
  }
}

}  // namespace cush_test
