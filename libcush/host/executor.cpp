#include "host/executor.hpp"
#include "host/host_pieces.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/cuda_devices.hpp"
#include "core/stream_idle.hpp"
#include "host/staging.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/host_memory.hpp"

namespace cush::detail {

Lanes::Lanes(std::span<const int> device_ids)
    : ids_(device_ids.begin(), device_ids.end()), aux_(device_ids.size()), events_(device_ids.size()) {}

cudaStream_t Lanes::aux(std::size_t pos, std::size_t k) {
  Stream& s = aux_.at(pos).at(k);
  if (!s) s = Stream(ids_[pos]);
  return s.get();
}

cudaEvent_t Lanes::event(std::size_t pos, std::size_t k) {
  std::vector<Event>& pool = events_.at(pos);
  while (pool.size() <= k) pool.emplace_back(ids_[pos]);
  return pool[k].get();
}

namespace {

// Where a transfer runs: the plan stream of a device, or that device's auxiliary stream.
struct Lane {
  std::size_t pos = 0;
  bool aux = false;
};

Lane lane_of(const Transfer& t) {
  if (t.src.is_host()) return {static_cast<std::size_t>(t.dst.pos), false};
  if (t.dst.is_host() || t.src.pos == t.dst.pos) return {static_cast<std::size_t>(t.src.pos), false};
  // Peer copies into a device run beside its host traffic, so both links stay busy.
  return {static_cast<std::size_t>(t.dst.pos), true};
}

// Host range pieces (pinned or pageable), relative to the host buffer's start.
class HostPieces {
 public:
  HostPieces(const void* base, std::size_t begin, std::size_t end)
      : begin_(begin),
        pieces_(base == nullptr || end <= begin ? std::vector<HostPiece>{}
                                                : classify_host(static_cast<const std::byte*>(base) + begin, end - begin)) {}
  // Calls f(offset, bytes, pinned) for the parts of [offset, offset + bytes).
  template <class F>
  void split(std::size_t offset, std::size_t bytes, F&& f) const {
    for (const HostPiece& p : pieces_) {
      const std::size_t lo = std::max(offset, begin_ + p.offset);
      const std::size_t hi = std::min(offset + bytes, begin_ + p.offset + p.bytes);
      if (hi > lo) f(lo, hi - lo, p.pinned);
    }
  }

 private:
  std::size_t begin_;
  std::vector<HostPiece> pieces_;
};

// The byte span of the host buffer that `list` touches on one side.
std::pair<std::size_t, std::size_t> host_extent(const TransferList& list, bool source, std::size_t es) {
  std::size_t lo = SIZE_MAX;
  std::size_t hi = 0;
  for (const Transfer& t : list) {
    const Location& l = source ? t.src : t.dst;
    if (!l.is_host() || t.count == 0) continue;
    lo = std::min(lo, l.offset * es);
    hi = std::max(hi, (l.offset + t.count) * es);
  }
  return lo < hi ? std::pair{lo, hi} : std::pair{std::size_t{0}, std::size_t{0}};
}

// cudaMemcpyAsync with pageable memory first waits for the work already in its stream. A small
// pageable piece is copied that way only when the stream is idle, so that no operation ever
// blocks the caller on earlier work; otherwise it is staged.
bool idle(cudaStream_t stream) { return stream_idle(stream, "executor stream", -1); }

std::string describe(const Transfer& t, std::size_t es) {
  auto end = [](const Location& l) {
    return l.is_host() ? std::string("host") : "device position " + std::to_string(l.pos);
  };
  return std::to_string(t.count * es) + " bytes from " + end(t.src) + " to " + end(t.dst);
}

}  // namespace

namespace {

void enqueue(const TransferList& list, const ExecutionContext& ctx) {
  const std::size_t p = ctx.device_ids.size();
  const std::size_t es = ctx.element_size;
  const HostTransferOptions options = host_transfer_options();

  // Which transfers others wait for; which auxiliary lanes run and whose buffers they touch.
  std::vector<bool> awaited(list.size(), false);
  std::vector<std::vector<bool>> aux_touches(p, std::vector<bool>(p, false));
  std::vector<bool> aux_used(p, false);
  for (const Transfer& t : list) {
    if (t.after >= 0) awaited.at(static_cast<std::size_t>(t.after)) = true;
    const Lane lane = lane_of(t);
    if (!lane.aux) continue;
    aux_used[lane.pos] = true;
    aux_touches[lane.pos][static_cast<std::size_t>(t.src.pos)] = true;
    aux_touches[lane.pos][static_cast<std::size_t>(t.dst.pos)] = true;
  }
  std::vector<std::size_t> next_event(p, 0);
  auto new_event = [&](std::size_t pos) { return ctx.lanes->event(pos, next_event[pos]++); };
  auto stream_of = [&](Lane lane) { return lane.aux ? ctx.lanes->aux(lane.pos) : ctx.streams[lane.pos]; };

  // An auxiliary lane starts after the earlier work on every buffer it touches.
  std::vector<cudaEvent_t> start(p, nullptr);
  for (std::size_t a = 0; a < p; ++a) {
    if (!aux_used[a]) continue;
    for (std::size_t k = 0; k < p; ++k) {
      if (!aux_touches[a][k]) continue;
      if (start[k] == nullptr) {
        DeviceGuard guard(ctx.device_ids[k]);
        start[k] = new_event(k);
        CUSH_CUDA_CHECK(cudaEventRecord(start[k], ctx.streams[k]));
      }
      DeviceGuard guard(ctx.device_ids[a]);
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(ctx.lanes->aux(a), start[k], 0));
    }
  }

  const auto [src_lo, src_hi] = host_extent(list, true, es);
  const auto [dst_lo, dst_hi] = host_extent(list, false, es);
  const HostPieces src_pieces(ctx.host_src, src_lo, src_hi);
  const HostPieces dst_pieces(ctx.host_dst, dst_lo, dst_hi);

  std::vector<cudaEvent_t> finished(list.size(), nullptr);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    if (t.count == 0) continue;
    const Lane lane = lane_of(t);
    const cudaStream_t stream = stream_of(lane);
    DeviceGuard guard(ctx.device_ids[lane.pos]);
    if (t.after >= 0) CUSH_CUDA_CHECK(cudaStreamWaitEvent(stream, finished.at(static_cast<std::size_t>(t.after)), 0));
    const std::size_t bytes = t.count * es;
    if (t.src.is_host()) {
      auto* dev = static_cast<std::byte*>(ctx.device_data[static_cast<std::size_t>(t.dst.pos)]) + t.dst.offset * es;
      const auto* host = static_cast<const std::byte*>(ctx.host_src);
      const std::size_t base = t.src.offset * es;
      src_pieces.split(base, bytes, [&](std::size_t off, std::size_t n, bool pinned) {
        if (pinned || (n < options.direct_to_device_below && idle(stream))) {
          CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(dev + (off - base), host + off, n, cudaMemcpyHostToDevice, stream),
                             describe(t, es));
        } else {
          StagingEngine::of(ctx.device_ids[lane.pos]).to_device(dev + (off - base), host + off, n, stream);
        }
      });
    } else if (t.dst.is_host()) {
      const auto* dev = static_cast<const std::byte*>(ctx.device_data[static_cast<std::size_t>(t.src.pos)]) + t.src.offset * es;
      auto* host = static_cast<std::byte*>(ctx.host_dst);
      const std::size_t base = t.dst.offset * es;
      dst_pieces.split(base, bytes, [&](std::size_t off, std::size_t n, bool pinned) {
        if (pinned || (n < options.direct_to_host_below && idle(stream))) {
          CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(host + off, dev + (off - base), n, cudaMemcpyDeviceToHost, stream),
                             describe(t, es));
        } else {
          StagingEngine::of(ctx.device_ids[lane.pos]).to_host(host + off, dev + (off - base), n, stream);
        }
      });
    } else {
      const auto s = static_cast<std::size_t>(t.src.pos);
      const auto d = static_cast<std::size_t>(t.dst.pos);
      const auto* from = static_cast<const std::byte*>(ctx.device_data[s]) + t.src.offset * es;
      auto* to = static_cast<std::byte*>(ctx.device_data[d]) + t.dst.offset * es;
      // Unified addressing: the copy engines find both devices from the pointers.
      CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream), describe(t, es));
    }
    if (awaited[i]) {
      finished[i] = new_event(lane.pos);
      CUSH_CUDA_CHECK(cudaEventRecord(finished[i], stream));
    }
  }

  // Join: each plan stream waits for the auxiliary lanes that read or wrote its buffer.
  for (std::size_t a = 0; a < p; ++a) {
    if (!aux_used[a]) continue;
    cudaEvent_t end = nullptr;
    {
      DeviceGuard guard(ctx.device_ids[a]);
      end = new_event(a);
      CUSH_CUDA_CHECK(cudaEventRecord(end, ctx.lanes->aux(a)));
    }
    for (std::size_t k = 0; k < p; ++k) {
      if (!aux_touches[a][k]) continue;
      DeviceGuard guard(ctx.device_ids[k]);
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(ctx.streams[k], end, 0));
    }
  }
}

}  // namespace

void execute(const TransferList& list, const ExecutionContext& ctx) {
  // Half enqueued: the copies and the staging lanes' host functions that did start would still
  // read or write the caller's host buffer after the exception reached it.
  finishing_on_error(ctx.device_ids, [&] { enqueue(list, ctx); });
}

}  // namespace cush::detail
