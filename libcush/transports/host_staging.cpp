#include "transports/host_staging.hpp"

#include <algorithm>
#include <string>

#include "core/env.hpp"
#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/host_memory.hpp"
#include "cush/stream.hpp"
#include "ops/combine.hpp"
#include "transports/backend.hpp"
#include "transports/copy_engines.hpp"
#include "transports/resources.hpp"

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

namespace {

// Copies or combines through the destination's pinned slots: the source's stream moves a chunk
// down to the host, the destination's stream moves it up once it has landed.
void staged_transfer(const Operation& op, StagingSlots& staging, const Transfer& t, const ResolvedTransfer& r,
                     OpStreams& streams, cudaStream_t from_stream, cudaStream_t to_stream) {
  StagingSlots::Device& slots = staging.of(streams.device(r.to), capturing(to_stream));
  const std::size_t chunk = staging.chunk();
  const std::size_t es = op.src.element_size;
  if (t.combine && slots.scratch.data() == nullptr) slots.scratch = DeviceBuffer(slots.device, chunk * StagingSlots::slots);
  const std::string what = describe_transfer(t, es, streams.device(r.from), streams.device(r.to));
  // Chunks hold whole elements so that a combine never splits one.
  const std::size_t step = chunk / es * es;
  for (std::size_t done = 0; done < r.bytes; done += step) {
    const std::size_t n = std::min(step, r.bytes - done);
    const std::size_t s = slots.next;
    slots.next = (slots.next + 1) % StagingSlots::slots;
    std::byte* bounce = slots.slot(s, chunk);
    if (slots.recorded[s]) CUSH_CUDA_CHECK(cudaStreamWaitEvent(from_stream, slots.free_events[s].get(), 0));
    CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(bounce, r.src + done, n, cudaMemcpyDeviceToHost, from_stream), what);
    const cudaEvent_t landed = streams.record(r.from, from_stream);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(to_stream, landed, 0));
    if (t.combine) {
      auto* scratch = static_cast<std::byte*>(slots.scratch.data()) + s * chunk;
      CUSH_CUDA_CHECK(cudaMemcpyAsync(scratch, bounce, n, cudaMemcpyHostToDevice, to_stream));
      DeviceGuard guard(slots.device);
      launch_combine(op.type, op.op, r.dst + done, scratch, n / es, to_stream);
    } else {
      CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(r.dst + done, bounce, n, cudaMemcpyHostToDevice, to_stream), what);
    }
    CUSH_CUDA_CHECK(cudaEventRecord(slots.free_events[s].get(), to_stream));
    slots.recorded[s] = true;
  }
}

class HostStaging final : public TransportBackend {
 public:
  std::string refusal(const Operation&) const override { return {}; }  // any two devices
  Transport fallback() const noexcept override { return Transport::host_staging; }
  void enqueue(const Operation& op, OpStreams& streams) const override {
    std::shared_ptr<StagingSlots>& slots = op.dst.resources->staging;
    if (!slots) slots = std::make_shared<StagingSlots>();
    const StagedCopy copy = [&op, &staging = *slots](const Transfer& t, const ResolvedTransfer& r, OpStreams& s,
                                                     cudaStream_t from, cudaStream_t to) {
      staged_transfer(op, staging, t, r, s, from, to);
    };
    execute_copies(op, streams, &copy);
  }
};

}  // namespace

const TransportBackend& host_staging_backend() {
  static const HostStaging instance;
  return instance;
}

}  // namespace cush::detail
