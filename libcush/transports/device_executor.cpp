#include "transports/device_executor.hpp"

#include <algorithm>
#include <string>

#include "core/env.hpp"
#include "ops/combine.hpp"
#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/host_memory.hpp"
#include "cush/stream.hpp"

namespace cush::detail {

struct StagingSlots::Device {
  Device(int id, std::size_t chunk, bool for_capture)
      : device(id), captured(for_capture), host(chunk * slots), recorded(slots, false) {
    for (std::size_t s = 0; s < slots; ++s) free_events.emplace_back(id);
  }
  int device;
  bool captured;  // belongs to one captured graph
  PinnedBuffer<std::byte> host;
  std::vector<Event> free_events;  // recorded when a slot has been read
  std::vector<bool> recorded;      // free_events[s] has been recorded
  DeviceBuffer scratch;            // slots x chunk on `device`, for combine transfers
  std::size_t next = 0;            // the slot to fill next

  std::byte* slot(std::size_t s, std::size_t chunk) { return host.data() + s * chunk; }
};

StagingSlots::StagingSlots() : chunk_(env::size("CUSH_STAGING_PEER_CHUNK_MIB")) {}

StagingSlots::~StagingSlots() = default;

StagingSlots::Device& StagingSlots::of(int device, bool capturing) {
  // A graph's waits and records must stay within the graph: each captured operation gets slots
  // of its own, kept until the plan is destroyed.
  if (!capturing)
    for (auto& d : devices_)
      if (d->device == device && !d->captured) return *d;
  devices_.push_back(std::make_unique<Device>(device, chunk_, capturing));
  return *devices_.back();
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUSH_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

namespace {

// Local copies at least this large get a stream of their own beside the link traffic.
constexpr std::size_t local_aux_min_bytes = std::size_t{1} << 20;

std::string describe(const Transfer& t, std::size_t es, int from, int to) {
  return std::string(t.combine ? "combining " : "copying ") + std::to_string(t.count * es) + " bytes from device " +
         std::to_string(from) + " to device " + std::to_string(to);
}

struct Resolved {
  std::size_t from = 0;  // participants
  std::size_t to = 0;
  const std::byte* src = nullptr;
  std::byte* dst = nullptr;
  std::size_t bytes = 0;
};

Resolved resolve(const Transfer& t, const DeviceOpContext& ctx, const OpStreams& streams) {
  const auto s = static_cast<std::size_t>(t.src.device);
  const auto d = static_cast<std::size_t>(t.dst.device);
  const std::size_t es = ctx.element_size;
  return Resolved{streams.of_src(s), streams.of_dst(d),
                  static_cast<const std::byte*>(ctx.src.data[s]) + t.src.offset * es,
                  static_cast<std::byte*>(ctx.dst.data[d]) + t.dst.offset * es, t.count * es};
}

// Copies or combines through the destination's pinned slots: the source's stream moves a chunk
// down to the host, the destination's stream moves it up once it has landed.
void staged_transfer(const Transfer& t, const Resolved& r, const DeviceOpContext& ctx, OpStreams& streams,
            cudaStream_t from_stream, cudaStream_t to_stream) {
  StagingSlots::Device& slots = ctx.staging->of(streams.device(r.to), capturing(to_stream));
  const std::size_t chunk = ctx.staging->chunk();
  const std::size_t es = ctx.element_size;
  if (t.combine && slots.scratch.data() == nullptr) slots.scratch = DeviceBuffer(slots.device, chunk * StagingSlots::slots);
  // Chunks hold whole elements so that a combine never splits one.
  const std::size_t step = chunk / es * es;
  for (std::size_t done = 0; done < r.bytes; done += step) {
    const std::size_t n = std::min(step, r.bytes - done);
    const std::size_t s = slots.next;
    slots.next = (slots.next + 1) % StagingSlots::slots;
    std::byte* bounce = slots.slot(s, chunk);
    if (slots.recorded[s]) CUSH_CUDA_CHECK(cudaStreamWaitEvent(from_stream, slots.free_events[s].get(), 0));
    CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(bounce, r.src + done, n, cudaMemcpyDeviceToHost, from_stream),
                       describe(t, es, streams.device(r.from), streams.device(r.to)));
    const cudaEvent_t landed = streams.record(r.from, from_stream);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(to_stream, landed, 0));
    if (t.combine) {
      auto* scratch = static_cast<std::byte*>(slots.scratch.data()) + s * chunk;
      CUSH_CUDA_CHECK(cudaMemcpyAsync(scratch, bounce, n, cudaMemcpyHostToDevice, to_stream));
      DeviceGuard guard(slots.device);
      launch_combine(ctx.type, ctx.op, r.dst + done, scratch, n / es, to_stream);
    } else {
      CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(r.dst + done, bounce, n, cudaMemcpyHostToDevice, to_stream),
                         describe(t, es, streams.device(r.from), streams.device(r.to)));
    }
    CUSH_CUDA_CHECK(cudaEventRecord(slots.free_events[s].get(), to_stream));
    slots.recorded[s] = true;
  }
}

}  // namespace

void execute_device(const TransferList& list, const DeviceOpContext& ctx, OpStreams& streams) {
  const std::size_t es = ctx.element_size;
  // Where each transfer runs. A peer copy is pushed by the source's stream: copy engines that
  // write across the link finish a small copy several times sooner than engines that read
  // across it (bench/probe_device_sync, docs/device_ops.md). A combine is a kernel that reads
  // the other device's replica, so it runs on the destination. A staged copy uses both
  // streams: down on the source's, up on the destination's.
  struct Placed {
    Resolved r;
    std::size_t issuer = 0;  // participant whose stream issues the transfer
    bool remote = false;
  };
  std::vector<Placed> placed(list.size());
  std::vector<bool> busy(streams.size(), false);  // issues a transfer that crosses devices
  std::vector<bool> awaited(list.size(), false);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    if (t.after >= 0) awaited.at(static_cast<std::size_t>(t.after)) = true;
    if (t.count == 0) continue;
    Placed& p = placed[i];
    p.r = resolve(t, ctx, streams);
    p.remote = p.r.from != p.r.to;
    p.issuer = t.combine || ctx.staged ? p.r.to : p.r.from;
    if (!p.remote) continue;
    busy[p.issuer] = true;
    if (ctx.staged) {
      busy[p.r.from] = true;
    } else {
      // The issuing stream starts after the other device's earlier work (which may still use
      // the buffer being written or read there), and the other device's later work waits for
      // the transfer.
      const std::size_t other = p.issuer == p.r.to ? p.r.from : p.r.to;
      streams.order(p.issuer, other);
      streams.after_done(other, p.issuer);
    }
  }
  // Large local copies of a device that also moves data across a link run on its second
  // stream, forked before anything is enqueued so that they do not wait for the link. Small
  // ones stay on the working stream: forking and joining would cost more than they take.
  const auto on_aux = [&](std::size_t i) {
    const Placed& p = placed[i];
    return list[i].count != 0 && !p.remote && busy[p.issuer] && p.r.bytes >= local_aux_min_bytes;
  };
  for (std::size_t i = 0; i < list.size(); ++i)
    if (on_aux(i)) (void)streams.aux(placed[i].issuer);

  std::vector<cudaEvent_t> finished(list.size(), nullptr);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    if (t.count == 0) continue;
    const Resolved& r = placed[i].r;
    const std::size_t part = placed[i].issuer;
    const bool staged = ctx.staged && placed[i].remote;
    const cudaStream_t stream = on_aux(i) ? streams.aux(part) : streams.work(part);
    // A staged copy starts on the source's stream: that is the one that waits for `after`.
    const cudaStream_t first = staged ? streams.work(r.from) : stream;
    if (t.after >= 0) {
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(first, finished.at(static_cast<std::size_t>(t.after)), 0));
    }
    if (staged) {
      staged_transfer(t, r, ctx, streams, first, stream);
    } else if (t.combine) {
      DeviceGuard guard(streams.device(part));  // kernels launch on the current device
      launch_combine(ctx.type, ctx.op, r.dst, r.src, t.count, stream);
    } else {
      // With peer access and unified addressing a plain copy between devices runs on the copy
      // engines over the link, like cudaMemcpyPeerAsync, and unlike it may be graph-captured.
      CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(r.dst, r.src, r.bytes, placed[i].remote ? cudaMemcpyDefault : cudaMemcpyDeviceToDevice,
                                         stream),
                         describe(t, es, streams.device(r.from), streams.device(r.to)));
    }
    if (awaited[i]) finished[i] = streams.record(part, stream);
  }
}

}  // namespace cush::detail
