#include "ops/op_streams.hpp"

#include <algorithm>
#include <string>

#include "cush/error.hpp"

namespace cush::detail {

// Event records and waits need no current device (an event records on its own device's
// stream), so nothing here switches devices.
OpStreams::OpStreams(const Endpoint& src, const Endpoint& dst) {
  auto add = [&](const Endpoint& e, std::size_t pos) {
    const int id = e.ids[pos];
    for (std::size_t k = 0; k < parts_.size(); ++k) {
      if (parts_[k].device != id) continue;
      Part& part = parts_[k];
      const cudaStream_t s = e.streams[pos];
      if (s != part.work && std::find(part.others.begin(), part.others.end(), s) == part.others.end())
        part.others.push_back(s);
      return k;
    }
    parts_.push_back(Part{id, e.streams[pos], {}, e.lanes, pos, 0, {}, nullptr});
    return parts_.size() - 1;
  };
  for (std::size_t pos = 0; pos < dst.ids.size(); ++pos) dst_part_.push_back(add(dst, pos));
  for (std::size_t pos = 0; pos < src.ids.size(); ++pos) src_part_.push_back(add(src, pos));
  for (std::size_t k = 0; k < parts_.size(); ++k) {
    for (cudaStream_t other : parts_[k].others) {
      const cudaEvent_t e = record(k, other);
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(parts_[k].work, e, 0));
    }
  }
}

std::size_t OpStreams::index_of(int device) const {
  for (std::size_t k = 0; k < parts_.size(); ++k)
    if (parts_[k].device == device) return k;
  throw Error("cush: device " + std::to_string(device) + " takes no part in this operation");
}

std::vector<int> OpStreams::devices() const {
  std::vector<int> ids;
  for (const Part& p : parts_) ids.push_back(p.device);
  return ids;
}

cudaEvent_t OpStreams::event(std::size_t part) {
  Part& p = parts_.at(part);
  return p.lanes->event(p.pos, p.next_event++);
}

cudaEvent_t OpStreams::record(std::size_t part, cudaStream_t stream) {
  const cudaEvent_t e = event(part);
  CUSH_CUDA_CHECK(cudaEventRecord(e, stream));
  return e;
}

cudaStream_t OpStreams::aux(std::size_t part, std::size_t k) {
  Part& p = parts_.at(part);
  const cudaStream_t a = p.lanes->aux(p.pos, k);
  if (!p.aux_used.at(k)) {
    p.aux_used[k] = true;
    const cudaEvent_t e = record(part, p.work);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(a, e, 0));
  }
  return a;
}

void OpStreams::order(std::size_t waiter, std::size_t on) {
  if (waiter == on) return;
  const std::pair<std::size_t, std::size_t> o{waiter, on};
  if (std::find(ordered_.begin(), ordered_.end(), o) != ordered_.end()) return;
  ordered_.push_back(o);
  Part& p = parts_.at(on);
  if (p.start == nullptr) p.start = record(on, p.work);
  CUSH_CUDA_CHECK(cudaStreamWaitEvent(parts_.at(waiter).work, p.start, 0));
}

void OpStreams::after_done(std::size_t waiter, std::size_t on) {
  if (waiter == on) return;
  const std::pair<std::size_t, std::size_t> j{waiter, on};
  if (std::find(joins_.begin(), joins_.end(), j) == joins_.end()) joins_.push_back(j);
}

void OpStreams::finish() {
  for (std::size_t k = 0; k < parts_.size(); ++k) {
    Part& p = parts_[k];
    for (std::size_t a = 0; a < p.aux_used.size(); ++a) {
      if (!p.aux_used[a]) continue;
      const cudaEvent_t e = record(k, p.lanes->aux(p.pos, a));
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(p.work, e, 0));
      p.aux_used[a] = false;
    }
  }
  // Every end is recorded before any of the waits below, which therefore never wait for each
  // other.
  std::vector<cudaEvent_t> end(parts_.size(), nullptr);
  for (const auto& [waiter, on] : joins_)
    if (end[on] == nullptr) end[on] = record(on, parts_[on].work);
  for (const auto& [waiter, on] : joins_) {
    // Named copies: CUSH_CUDA_CHECK's lambda cannot capture structured bindings before C++20's
    // rules, which clang implements from version 16 only.
    const cudaStream_t stream = parts_[waiter].work;
    const cudaEvent_t event = end[on];
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(stream, event, 0));
  }
  joins_.clear();
  for (std::size_t k = 0; k < parts_.size(); ++k) {
    if (parts_[k].others.empty()) continue;
    const cudaEvent_t e = record(k, parts_[k].work);
    for (cudaStream_t other : parts_[k].others) CUSH_CUDA_CHECK(cudaStreamWaitEvent(other, e, 0));
  }
}

}  // namespace cush::detail
