#pragma once
// CUDA's ordering rules for streams and events, on the host. Operations are enqueued in one
// host thread's order: each stream runs its operations in order; a record marks everything
// enqueued on its stream so far; a wait makes its stream wait for the most recent record of the
// event enqueued before the wait (none: the wait does nothing), as cudaStreamWaitEvent binds.
// From that, the happens-before relation between operations; the first pair of accesses to the
// same cells, at least one a write, that it leaves unordered (a race on the GPU); and random
// execution orders it allows (to run the operations on host arrays in one of them).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace cush_test {

using Cells3 = std::array<std::size_t, 3>;

/// The cells [lo, lo + size) of buffer `buffer`, a 3D array x fastest, read or written.
struct Access {
  std::size_t buffer = 0;
  Cells3 lo{};
  Cells3 size{};
  bool write = false;
};

/// The boxes [lo, lo + size) that make up the run of `count` cells from linear position `first`
/// of a 3D array of `dims` cells: a partial row, whole rows, whole planes, whole rows, a partial
/// row (those that are not empty).
inline std::vector<std::pair<Cells3, Cells3>> run_boxes(const Cells3& dims, std::size_t first, std::size_t count) {
  std::vector<std::pair<Cells3, Cells3>> out;
  const std::size_t row = dims[0];
  const std::size_t plane = dims[0] * dims[1];
  std::size_t at = first;
  std::size_t left = count;
  const auto pos = [&](std::size_t i) { return Cells3{i % row, (i / row) % dims[1], i / plane}; };
  const auto take = [&](const Cells3& size, std::size_t cells) {
    out.emplace_back(pos(at), size);
    at += cells;
    left -= cells;
  };
  if (left > 0 && at % row != 0) {  // to the end of the row
    const std::size_t n = std::min(left, row - at % row);
    take(Cells3{n, 1, 1}, n);
  }
  if (left >= row && (at / row) % dims[1] != 0) {  // whole rows to the end of the plane
    const std::size_t rows = std::min(left / row, dims[1] - (at / row) % dims[1]);
    take(Cells3{row, rows, 1}, rows * row);
  }
  if (left >= plane) take(Cells3{row, dims[1], left / plane}, left / plane * plane);
  if (left >= row) take(Cells3{row, left / row, 1}, left / row * row);
  if (left > 0) take(Cells3{left, 1, 1}, left);
  return out;
}

/// Operations on streams, enqueued in order, and what their order guarantees.
class StreamModel {
 public:
  struct Op {
    enum class Kind { work, record, wait };
    Kind kind = Kind::work;
    std::size_t stream = 0;
    std::size_t event = 0;  // record, wait
    std::vector<Access> accesses;
    std::string label;
  };

  std::size_t work(std::size_t stream, std::vector<Access> accesses, std::string label) {
    return add(Op{Op::Kind::work, stream, 0, std::move(accesses), std::move(label)});
  }
  std::size_t record(std::size_t stream, std::size_t event, std::string label) {
    return add(Op{Op::Kind::record, stream, event, {}, std::move(label)});
  }
  std::size_t wait(std::size_t stream, std::size_t event, std::string label) {
    return add(Op{Op::Kind::wait, stream, event, {}, std::move(label)});
  }

  [[nodiscard]] const std::vector<Op>& ops() const noexcept { return ops_; }

  /// True if operation a happens before operation b.
  [[nodiscard]] bool before(std::size_t a, std::size_t b) {
    close();
    return a < b && ((reach_[b][a / 64] >> (a % 64)) & 1U) != 0;
  }

  /// Empty if every two accesses to overlapping cells of one buffer, at least one a write, by
  /// two operations are ordered; else the first such pair in words. `buffer_name` names buffers.
  [[nodiscard]] std::string unordered_conflict(const std::function<std::string(std::size_t)>& buffer_name) {
    close();
    struct Use {
      std::size_t op;
      const Access* access;
    };
    std::vector<std::vector<Use>> by_buffer;
    for (std::size_t i = 0; i < ops_.size(); ++i)
      for (const Access& a : ops_[i].accesses) {
        if (a.size[0] * a.size[1] * a.size[2] == 0) continue;
        if (by_buffer.size() <= a.buffer) by_buffer.resize(a.buffer + 1);
        by_buffer[a.buffer].push_back(Use{i, &a});
      }
    for (std::size_t buf = 0; buf < by_buffer.size(); ++buf) {
      const std::vector<Use>& uses = by_buffer[buf];  // in enqueue order
      for (std::size_t j = 0; j < uses.size(); ++j)
        for (std::size_t i = 0; i < j; ++i) {
          const Use& x = uses[i];
          const Use& y = uses[j];
          if (x.op == y.op || !(x.access->write || y.access->write) || before(x.op, y.op)) continue;
          Cells3 lo{};
          Cells3 hi{};
          bool overlap = true;
          for (std::size_t d = 0; d < 3; ++d) {
            lo[d] = std::max(x.access->lo[d], y.access->lo[d]);
            hi[d] = std::min(x.access->lo[d] + x.access->size[d], y.access->lo[d] + y.access->size[d]);
            overlap = overlap && lo[d] < hi[d];
          }
          if (!overlap) continue;
          const auto verb = [](const Access& a) { return a.write ? "writes" : "reads"; };
          std::string cells;
          for (std::size_t d = 0; d < 3; ++d)
            cells += std::string(d == 0 ? "" : " x ") + "[" + std::to_string(lo[d]) + ", " + std::to_string(hi[d]) + ")";
          return "unordered: #" + std::to_string(x.op) + " (" + ops_[x.op].label + ") " + verb(*x.access) + " and #" +
                 std::to_string(y.op) + " (" + ops_[y.op].label + ") " + verb(*y.access) + " cells " + cells + " of " +
                 buffer_name(buf);
        }
    }
    return {};
  }

  /// A random order of all operations in which each comes after everything that happens
  /// before it.
  [[nodiscard]] std::vector<std::size_t> random_order(std::mt19937_64& rng) {
    close();
    std::vector<std::vector<std::size_t>> next(ops_.size());
    std::vector<std::size_t> waiting(ops_.size(), 0);
    for (std::size_t b = 0; b < ops_.size(); ++b)
      for (std::size_t a : preds_[b]) {
        next[a].push_back(b);
        ++waiting[b];
      }
    std::vector<std::size_t> ready;
    for (std::size_t b = 0; b < ops_.size(); ++b)
      if (waiting[b] == 0) ready.push_back(b);
    std::vector<std::size_t> order;
    while (!ready.empty()) {
      const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng);
      const std::size_t op = ready[pick];
      ready[pick] = ready.back();
      ready.pop_back();
      order.push_back(op);
      for (std::size_t b : next[op])
        if (--waiting[b] == 0) ready.push_back(b);
    }
    return order;
  }

 private:
  std::size_t add(Op op) {
    const std::size_t i = ops_.size();
    std::vector<std::size_t> preds;
    if (last_on_stream_.size() <= op.stream) last_on_stream_.resize(op.stream + 1, kNone);
    if (last_on_stream_[op.stream] != kNone) preds.push_back(last_on_stream_[op.stream]);
    last_on_stream_[op.stream] = i;
    if (last_record_.size() <= op.event) last_record_.resize(op.event + 1, kNone);
    if (op.kind == Op::Kind::wait && last_record_[op.event] != kNone) preds.push_back(last_record_[op.event]);
    if (op.kind == Op::Kind::record) last_record_[op.event] = i;
    ops_.push_back(std::move(op));
    preds_.push_back(std::move(preds));
    reach_.clear();
    return i;
  }

  // Every edge goes from an earlier operation to a later one, so one pass in enqueue order
  // gives each operation the set of those that happen before it.
  void close() {
    if (reach_.size() == ops_.size()) return;
    const std::size_t words = (ops_.size() + 63) / 64;
    reach_.assign(ops_.size(), std::vector<std::uint64_t>(words, 0));
    for (std::size_t b = 0; b < ops_.size(); ++b)
      for (std::size_t a : preds_[b]) {
        for (std::size_t w = 0; w < words; ++w) reach_[b][w] |= reach_[a][w];
        reach_[b][a / 64] |= std::uint64_t{1} << (a % 64);
      }
  }

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<Op> ops_;
  std::vector<std::vector<std::size_t>> preds_;  // the stream's previous op; a wait's bound record
  std::vector<std::size_t> last_on_stream_;      // by stream
  std::vector<std::size_t> last_record_;         // by event
  std::vector<std::vector<std::uint64_t>> reach_;  // by op: bit a set if a happens before it
};

}  // namespace cush_test
