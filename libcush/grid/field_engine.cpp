#include "grid/field_engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "grid/box_copy.hpp"
#include "grid/exchange_program.hpp"
#include "grid/halo.hpp"
#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/stream.hpp"

namespace cush::detail {

namespace {

// Whether block `from`'s kernels may store into block `to`'s memory (peer access enabled).
PeerStores peer_stores(const DeviceSet& devices, HaloTransport transport) {
  if (transport == HaloTransport::staged) return {};
  return [&devices](std::size_t from, std::size_t to) { return enable_peer_access_once(devices[from], devices[to]); };
}

// Pipelining of a face packed straight into a peer's receive buffer: the pack is split into
// slabs, and the receiver unpacks slab c on a second stream while slab c + 1 crosses the link.
// Only faces of at least 256 MiB are split, in 8 slabs: below that the packs and unpacks of both
// directions contend for memory and pipelining measured slower (docs/grid.md). Both are read
// from the environment when a field is made: CUSH_HALO_PIPELINE_MIB, CUSH_HALO_CHUNKS (1: off).
std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

std::size_t pipeline_bytes() { return env_size("CUSH_HALO_PIPELINE_MIB", 256) << 20; }

std::size_t max_chunks() { return std::clamp<std::size_t>(env_size("CUSH_HALO_CHUNKS", 8), 1, 64); }

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

}  // namespace

struct FieldEngine::Impl {
  DeviceSet devices;
  Decomposition grid;
  std::size_t element_size = 0;
  ExchangeProgram program;
  std::vector<DeviceBuffer> send, recv;  // staging buffers by message
  std::vector<Stream> streams;           // the exchange's stream per device
  std::vector<cudaStream_t> own;         // their handles
  std::vector<Event> ready, start, done, end;
  bool in_flight = false;

  // A pipelined message of a phase: its pack (a send step) and unpack (a receive step), split
  // into `chunks` slabs; slab c's arrival is `arrived[c]` (recorded on the sender).
  struct Pipelined {
    std::size_t send = 0;
    std::size_t receive = 0;
    std::size_t chunks = 0;
    std::vector<Event> arrived;
  };
  std::vector<std::vector<Pipelined>> pipelined;  // by phase
  std::vector<Stream> unpack_streams;             // per device, for pipelined unpacks
  std::vector<Event> unpacked;                    // per device, end of its pipelined unpacks
  std::vector<unsigned> pack_blocks;              // per device, the pipelined packs' grid

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  struct PhasePlan {
    std::vector<std::size_t> starts, unpackers, senders;  // blocks, ascending
    std::vector<std::size_t> wait_before;                 // by send step: a block's start, or kNone
    std::vector<std::size_t> piped_send;                  // by send step: index in pipelined, or kNone
    std::vector<char> piped_receive;                      // by receive step
  };
  std::vector<PhasePlan> plans;  // by phase
  // Leading phases whose axes are exchanged in place (Decomposition::exchanged_in_place): every
  // message within one block. exchange_start() runs them on the blocks' streams.
  std::size_t in_place = 0;

  Impl(const DeviceSet& d, const Decomposition& g, std::size_t es, HaloTransport transport)
      : devices(d), grid(g), element_size(es), program(exchange_program(g, peer_stores(d, transport))) {
    for (std::size_t m = 0; m < program.ends.size(); ++m) {
      const auto [from, to] = program.ends[m];
      send.emplace_back();
      recv.emplace_back();
      if (program.send_cells[m] > 0) send[m] = DeviceBuffer(devices[from], program.send_cells[m] * element_size);
      if (program.recv_cells[m] > 0) recv[m] = DeviceBuffer(devices[to], program.recv_cells[m] * element_size);
    }
    for (const ExchangePhase& phase : program.phases)
      for (const auto& [from, to] : phase.links) {
        enable_peer_access_once(devices[from], devices[to]);
        enable_peer_access_once(devices[to], devices[from]);
      }
    for (std::size_t k = 0; k < devices.size(); ++k) {
      streams.emplace_back(devices[k]);
      own.push_back(streams.back().get());
      ready.emplace_back(devices[k]);
      start.emplace_back(devices[k]);
      done.emplace_back(devices[k]);
      end.emplace_back(devices[k]);
    }
    plan_pipelines();
    plan_phases();
    const std::vector<HaloPhase> phases = halo_phases(grid);  // the program's phases, in order
    while (in_place < phases.size() && grid.exchanged_in_place(phases[in_place].axis)) ++in_place;
  }

  // Finds the faces packed into a peer's receive buffer that are big enough to pipeline.
  void plan_pipelines() {
    const std::size_t most = max_chunks();
    const std::size_t threshold = pipeline_bytes();
    bool any = false;
    for (const ExchangePhase& phase : program.phases) {
      std::vector<Pipelined> list;
      for (std::size_t r = 0; r < phase.receives.size(); ++r) {
        const ExchangeStep& unpack = phase.receives[r];
        for (std::size_t i = 0; i < phase.sends.size(); ++i) {
          const ExchangeStep& pack = phase.sends[i];
          if (pack.contiguous || pack.dst.buffer != unpack.src.buffer) continue;
          const std::size_t cells = pack.size[0] * pack.size[1] * pack.size[2];
          if (cells * element_size < threshold) continue;
          const std::size_t chunks = std::min(most, pack.size[slab_axis(pack.size)]);
          if (chunks < 2) continue;
          Pipelined p{i, r, chunks, {}};
          for (std::size_t c = 0; c < chunks; ++c) p.arrived.emplace_back(devices[pack.stream]);
          list.push_back(std::move(p));
          any = true;
        }
      }
      pipelined.push_back(std::move(list));
    }
    if (!any) return;
    for (std::size_t k = 0; k < devices.size(); ++k) {
      unpack_streams.emplace_back(devices[k]);
      unpacked.emplace_back(devices[k]);
      int sms = 0;
      CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, devices[k]));
      // Half the device's threads (8 blocks of 256 fill an SM): room for the unpacks beside it.
      pack_blocks.push_back(static_cast<unsigned>(std::max(sms, 1) * 4));
    }
  }

  void* buffer(const BufferRef& b, std::span<void* const> data) const {
    switch (b.kind) {
      case BufferRef::Kind::send: return send.at(b.index).data();
      case BufferRef::Kind::recv: return recv.at(b.index).data();
      case BufferRef::Kind::block: break;
    }
    return data[b.index];
  }

  void step(const ExchangeStep& s, std::span<void* const> data, std::span<const cudaStream_t> on) const {
    step_on(s, data, on[s.stream], 4096);
  }

  void step_on(const ExchangeStep& s, std::span<void* const> data, cudaStream_t stream, unsigned max_blocks) const {
    const DeviceGuard guard(devices[s.stream]);
    void* src = buffer(s.src.buffer, data);
    void* dst = buffer(s.dst.buffer, data);
    if (s.contiguous) {
      const auto at = [&](void* base, const StepSide& side) {
        return static_cast<std::byte*>(base) +
               (side.lo[0] + side.alloc[0] * (side.lo[1] + side.alloc[1] * side.lo[2])) * element_size;
      };
      const std::size_t bytes = box_span(s.src.alloc, s.size) * element_size;  // padding between rows too
      // cudaMemcpyAsync, not cudaMemcpyPeerAsync, which CUDA 13.0 does not capture into graphs.
      CUSH_CUDA_CHECK(cudaMemcpyAsync(at(dst, s.dst), at(src, s.src), bytes, cudaMemcpyDefault, stream));
    } else {
      launch_box_copy(BoxSide{src, s.src.alloc, s.src.lo}, BoxSide{dst, s.dst.alloc, s.dst.lo}, s.size, element_size,
                      stream, max_blocks);
    }
  }

  // The block whose device holds a buffer (staging buffers live on their message's ends).
  std::size_t owner_of(const BufferRef& b) const {
    switch (b.kind) {
      case BufferRef::Kind::send: return program.ends.at(b.index).first;
      case BufferRef::Kind::recv: return program.ends.at(b.index).second;
      case BufferRef::Kind::block: break;
    }
    return b.index;
  }

  // The program on the streams `on` (one per block).
  void run(std::span<void* const> data, std::span<const cudaStream_t> on) { run(data, on, 0, program.phases.size()); }

  // Phases [first, last) of the program.
  void run(std::span<void* const> data, std::span<const cudaStream_t> on, std::size_t first, std::size_t last) {
    for (std::size_t ph = first; ph < last; ++ph) {
      const ExchangePhase& phase = program.phases[ph];
      const PhasePlan& plan = plans[ph];
      std::vector<Pipelined>& piped = pipelined[ph];
      // A sender writes into a receiver's ghosts or receive buffer only after the receiver's
      // earlier exchange work (which read them) is done: it waits for the receiver's start of
      // the phase just before its first step into the receiver (its packs run before).
      for (std::size_t k : plan.starts) start[k].record(on[k]);
      // The unpack streams of pipelined receivers start after their receiver's earlier work.
      for (std::size_t k : plan.unpackers) start[k].wait_in(unpack_streams[k].get());
      for (std::size_t i = 0; i < phase.sends.size(); ++i) {
        const ExchangeStep& s = phase.sends[i];
        if (plan.wait_before[i] != kNone) start[plan.wait_before[i]].wait_in(on[s.stream]);
        if (plan.piped_send[i] == kNone) {
          step(s, data, on);
          continue;
        }
        // Slab by slab: the pack on the sender, then the unpack on the receiver's unpack stream
        // once the slab has arrived.
        Pipelined& m = piped[plan.piped_send[i]];
        const ExchangeStep& u = phase.receives[m.receive];
        for (std::size_t c = 0; c < m.chunks; ++c) {
          step_on(slab(s, c, m.chunks), data, on[s.stream], pack_blocks[s.stream]);
          m.arrived[c].record(on[s.stream]);
          m.arrived[c].wait_in(unpack_streams[u.stream].get());
          step_on(slab(u, c, m.chunks), data, unpack_streams[u.stream].get(), 4096);
        }
      }
      // Receivers continue once their senders' copies are done. Every sender's end is recorded
      // before any receiver waits, so no wait adds a dependency on a third device.
      for (std::size_t k : plan.senders) done[k].record(on[k]);
      for (const auto& [from, to] : phase.links) done[from].wait_in(on[to]);
      for (std::size_t r = 0; r < phase.receives.size(); ++r)
        if (plan.piped_receive[r] == 0) step(phase.receives[r], data, on);
      for (std::size_t k : plan.unpackers) {
        unpacked[k].record(unpack_streams[k].get());
        unpacked[k].wait_in(on[k]);
      }
    }
  }

  // What run() does in each phase, worked out once: which blocks record a start (those written
  // by another's steps, and pipelined receivers), which start each send step waits for first,
  // which steps are pipelined, which blocks record a done.
  void plan_phases() {
    const std::size_t p = devices.size();
    for (std::size_t ph = 0; ph < program.phases.size(); ++ph) {
      const ExchangePhase& phase = program.phases[ph];
      PhasePlan plan;
      std::vector<char> starts(p, 0), waited(p * p, 0), senders(p, 0), unpackers(p, 0);
      plan.wait_before.assign(phase.sends.size(), kNone);
      plan.piped_send.assign(phase.sends.size(), kNone);
      plan.piped_receive.assign(phase.receives.size(), 0);
      for (std::size_t i = 0; i < phase.sends.size(); ++i) {
        const ExchangeStep& s = phase.sends[i];
        const std::size_t target = owner_of(s.dst.buffer);
        if (target != s.stream && waited[s.stream * p + target] == 0) {
          waited[s.stream * p + target] = 1;
          starts[target] = 1;
          plan.wait_before[i] = target;
        }
      }
      for (std::size_t j = 0; j < pipelined[ph].size(); ++j) {
        const Pipelined& m = pipelined[ph][j];
        plan.piped_send[m.send] = j;
        plan.piped_receive[m.receive] = 1;
        const std::size_t to = phase.receives[m.receive].stream;
        starts[to] = 1;
        unpackers[to] = 1;
      }
      for (const auto& [from, to] : phase.links) senders[from] = 1;
      for (std::size_t k = 0; k < p; ++k) {
        if (starts[k] != 0) plan.starts.push_back(k);
        if (unpackers[k] != 0) plan.unpackers.push_back(k);
        if (senders[k] != 0) plan.senders.push_back(k);
      }
      plans.push_back(std::move(plan));
    }
  }

  // After a failed enqueue: let whatever was enqueued on `on` finish, so no copy outlives the
  // call's consequences unseen.
  void drain(std::span<const cudaStream_t> on) const noexcept {
    for (cudaStream_t s : on) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(s));
    for (const Stream& s : unpack_streams) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(s.get()));
  }
};

FieldEngine::FieldEngine(const DeviceSet& devices, const Decomposition& grid, std::size_t element_size,
                         HaloTransport transport)
    : impl_(std::make_unique<Impl>(devices, grid, element_size, transport)) {}

// The exchange streams synchronize as they are destroyed, so no copy outlives its buffers.
FieldEngine::~FieldEngine() = default;

bool FieldEngine::in_flight() const noexcept { return impl_->in_flight; }

bool FieldEngine::done() const {
  const auto idle = [](const Stream& s) {
    const cudaError_t status = cudaStreamQuery(s.get());
    if (status == cudaErrorNotReady) return false;
    CUSH_CUDA_CHECK_AT(status, "exchange stream on device " + std::to_string(s.device()));
    return true;
  };
  for (const Stream& s : impl_->streams)
    if (!idle(s)) return false;
  for (const Stream& s : impl_->unpack_streams)
    if (!idle(s)) return false;
  return true;
}

std::vector<std::size_t> FieldEngine::pipelined_slabs() const {
  std::vector<std::size_t> slabs;
  for (const auto& phase : impl_->pipelined)
    for (const auto& m : phase) slabs.push_back(m.chunks);
  return slabs;
}

void FieldEngine::exchange_start(std::span<void* const> data, std::span<const cudaStream_t> streams) {
  if (impl_->in_flight)
    throw InvalidArgument("cush::Field::exchange_start", "this", "an exchange is in flight: call exchange_finish() first");
  // The phases exchanged in place first, on the blocks' streams: kernels enqueued after this call
  // may read those ghosts (Decomposition::interior counts them in).
  try {
    impl_->run(data, streams, 0, impl_->in_place);
  } catch (...) {
    impl_->drain(streams);
    throw;
  }
  for (std::size_t k = 0; k < streams.size(); ++k) {
    impl_->ready[k].record(streams[k]);
    impl_->ready[k].wait_in(impl_->streams[k].get());
  }
  try {
    impl_->run(data, impl_->own, impl_->in_place, impl_->program.phases.size());
  } catch (...) {
    impl_->drain(impl_->own);
    throw;
  }
  impl_->in_flight = true;
}

void FieldEngine::exchange(std::span<void* const> data, std::span<const cudaStream_t> streams) {
  if (impl_->in_flight)
    throw InvalidArgument("cush::Field::exchange", "this", "an exchange is in flight: call exchange_finish() first");
  try {
    impl_->run(data, streams);
  } catch (...) {
    impl_->drain(streams);
    throw;
  }
}

void FieldEngine::exchange_finish(std::span<const cudaStream_t> streams) {
  if (!impl_->in_flight)
    throw InvalidArgument("cush::Field::exchange_finish", "this", "no exchange is in flight: call exchange_start() first");
  for (std::size_t k = 0; k < streams.size(); ++k) {
    impl_->end[k].record(impl_->streams[k].get());
    impl_->end[k].wait_in(streams[k]);
  }
  impl_->in_flight = false;
}

}  // namespace cush::detail

