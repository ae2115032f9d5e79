#include "transports/copy_engines.hpp"

#include <string>
#include <vector>

#include "core/env.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "ops/combine.hpp"
#include "transports/backend.hpp"
#include "transports/issue_order.hpp"

namespace cush::detail {

namespace {

// Local copies at least this large (CUSH_LOCAL_AUX_MIN_KIB, default 1 MiB) get a stream of
// their own beside the link traffic. Forking and joining that stream costs four event calls per
// device on the host; a trace of the 4-GPU all-to-all at 16 MiB (docs/results/records/profiles_2026-11-27.md)
// found the operation host-bound (the GPUs idle between operations), so the threshold is a knob
// until a measurement sets it.
std::size_t local_aux_min_bytes() {
  static const std::size_t bytes = env::size("CUSH_LOCAL_AUX_MIN_KIB");
  return bytes;
}

ResolvedTransfer resolve(const Transfer& t, const Operation& op, const OpStreams& streams) {
  const auto s = static_cast<std::size_t>(t.src.pos);
  const auto d = static_cast<std::size_t>(t.dst.pos);
  const std::size_t es = op.src.element_size;
  return ResolvedTransfer{streams.of_src(s), streams.of_dst(d),
                          static_cast<const std::byte*>(op.src.data[s]) + t.src.offset * es,
                          static_cast<std::byte*>(op.dst.data[d]) + t.dst.offset * es, t.count * es};
}

}  // namespace

std::string describe_transfer(const Transfer& t, std::size_t element_size, int from, int to) {
  return std::string(t.combine ? "combining " : "copying ") + std::to_string(t.count * element_size) +
         " bytes from device " + std::to_string(from) + " to device " + std::to_string(to);
}

void execute_copies(const Operation& op, OpStreams& streams, const StagedCopy* staged) {
  const TransferList& list = op.list();
  const std::size_t es = op.src.element_size;
  // Where each transfer runs. A peer copy is pushed by the source's stream: copy engines that
  // write across the link finish a small copy several times sooner than engines that read
  // across it (bench/probes/probe_device_sync, docs/device_ops.md). A combine is a kernel that
  // reads the other device's replica, so it runs on the destination. A staged copy uses both
  // streams: down on the source's, up on the destination's.
  struct Placed {
    ResolvedTransfer r;
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
    p.r = resolve(t, op, streams);
    p.remote = p.r.from != p.r.to;
    p.issuer = t.combine || staged != nullptr ? p.r.to : p.r.from;
    if (!p.remote) continue;
    busy[p.issuer] = true;
    if (staged != nullptr) {
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
    return list[i].count != 0 && !p.remote && busy[p.issuer] && p.r.bytes >= local_aux_min_bytes();
  };
  for (std::size_t i = 0; i < list.size(); ++i)
    if (on_aux(i)) (void)streams.aux(placed[i].issuer);

  // The transfers across links first (transports/issue_order.hpp): the host takes microseconds
  // per call, and the links are what the operation waits for.
  std::vector<bool> remote(list.size(), false);
  for (std::size_t i = 0; i < list.size(); ++i) remote[i] = list[i].count != 0 && placed[i].remote;
  std::vector<cudaEvent_t> finished(list.size(), nullptr);
  for (const std::size_t i : issue_order(list, remote)) {
    const Transfer& t = list[i];
    if (t.count == 0) continue;
    const ResolvedTransfer& r = placed[i].r;
    const std::size_t part = placed[i].issuer;
    const bool staged_here = staged != nullptr && placed[i].remote;
    const cudaStream_t stream = on_aux(i) ? streams.aux(part) : streams.work(part);
    // A staged copy starts on the source's stream: that is the one that waits for `after`.
    const cudaStream_t first = staged_here ? streams.work(r.from) : stream;
    if (t.after >= 0) {
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(first, finished.at(static_cast<std::size_t>(t.after)), 0));
    }
    if (staged_here) {
      (*staged)(t, r, streams, first, stream);
    } else if (t.combine) {
      DeviceGuard guard(streams.device(part));  // kernels launch on the current device
      launch_combine(op.type, op.op, r.dst, r.src, t.count, stream);
    } else {
      // With peer access and unified addressing a plain copy between devices runs on the copy
      // engines over the link, like cudaMemcpyPeerAsync, and unlike it may be graph-captured.
      CUSH_CUDA_CHECK_AT(
          cudaMemcpyAsync(r.dst, r.src, r.bytes, placed[i].remote ? cudaMemcpyDefault : cudaMemcpyDeviceToDevice, stream),
          describe_transfer(t, es, streams.device(r.from), streams.device(r.to)));
    }
    if (awaited[i]) finished[i] = streams.record(part, stream);
  }
}

}  // namespace cush::detail
