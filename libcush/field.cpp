#include "cush/field.hpp"

#include <algorithm>
#include <string>

#include "cush/detail/box_copy.hpp"
#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/halo.hpp"
#include "cush/stream.hpp"

namespace cush::detail {

void throw_block_count(std::size_t devices, std::size_t blocks) {
  throw InvalidArgument("cush::Field", "devices",
                        std::to_string(devices) + " devices for a decomposition of " + std::to_string(blocks) + " blocks");
}

Distribution block_distribution(const Decomposition& grid) {
  std::vector<std::size_t> cells;
  for (std::size_t k = 0; k < grid.size(); ++k) cells.push_back(grid.allocated_cells(k));
  return Distribution::custom([cells](std::size_t, std::span<const DeviceInfo>) { return cells; }, "grid blocks");
}

std::size_t total_cells(const Decomposition& grid) {
  std::size_t n = 0;
  for (std::size_t k = 0; k < grid.size(); ++k) n += grid.allocated_cells(k);
  return n;
}

namespace {

Extent3 buffer_lo(const Decomposition& grid, const Box& local) {
  Extent3 lo{};
  for (std::size_t a = 0; a < 3; ++a) lo[a] = static_cast<std::size_t>(local.lo[a] + static_cast<std::ptrdiff_t>(grid.halo(a)));
  return lo;
}

std::size_t linear(const Extent3& alloc, const Extent3& lo) { return lo[0] + alloc[0] * (lo[1] + alloc[1] * lo[2]); }

// One halo message with its staging buffers. Where the cells of a side form one run in memory
// the copy goes straight from or to the block's buffer; otherwise a box copy packs them into
// `send` (on the sender) or unpacks them from `recv` (on the receiver).
struct Message {
  std::size_t from = 0;
  std::size_t to = 0;
  Extent3 size{};
  Extent3 src_alloc{}, src_lo{}, dst_alloc{}, dst_lo{};
  std::size_t bytes = 0;
  DeviceBuffer send;
  DeviceBuffer recv;
};

}  // namespace

struct FieldEngine::Impl {
  DeviceSet devices;
  Decomposition grid;
  std::size_t element_size = 0;
  std::vector<std::vector<Message>> phases;
  std::vector<Stream> streams;  // the exchange's stream per device
  std::vector<Event> ready, start, done, end;
  bool in_flight = false;

  Impl(const DeviceSet& d, const Decomposition& g, std::size_t es) : devices(d), grid(g), element_size(es) {
    for (std::size_t k = 0; k < devices.size(); ++k) {
      streams.emplace_back(devices[k]);
      ready.emplace_back(devices[k]);
      start.emplace_back(devices[k]);
      done.emplace_back(devices[k]);
      end.emplace_back(devices[k]);
    }
    for (const HaloPhase& phase : halo_schedule(grid)) {
      std::vector<Message> list;
      for (const HaloMessage& h : phase.messages) {
        Message m;
        m.from = h.from;
        m.to = h.to;
        m.size = h.src.size;
        m.src_alloc = grid.allocated(h.from);
        m.dst_alloc = grid.allocated(h.to);
        m.src_lo = buffer_lo(grid, h.src);
        m.dst_lo = buffer_lo(grid, h.dst);
        m.bytes = h.src.volume() * element_size;
        if (m.from != m.to) {
          detail::enable_peer_access_once(devices[m.from], devices[m.to]);
          detail::enable_peer_access_once(devices[m.to], devices[m.from]);
          if (!box_is_contiguous(m.src_alloc, m.size)) m.send = DeviceBuffer(devices[m.from], m.bytes);
          if (!box_is_contiguous(m.dst_alloc, m.size)) m.recv = DeviceBuffer(devices[m.to], m.bytes);
        }
        list.push_back(std::move(m));
      }
      phases.push_back(std::move(list));
    }
  }

  void run(std::span<void* const> data) {
    const std::size_t p = devices.size();
    const auto at = [&](std::size_t k, const Extent3& alloc, const Extent3& lo) {
      return static_cast<std::byte*>(data[k]) + linear(alloc, lo) * element_size;
    };
    for (const std::vector<Message>& phase : phases) {
      // A sender writes into the receiver's ghosts or receive buffer only after the receiver's
      // earlier exchange work (which read them) is done.
      for (std::size_t k = 0; k < p; ++k) start[k].record(streams[k].get());
      std::vector<char> waited(p * p, 0);
      for (const Message& m : phase) {
        if (m.from == m.to || waited[m.from * p + m.to] != 0) continue;
        waited[m.from * p + m.to] = 1;
        start[m.to].wait_in(streams[m.from].get());
      }
      for (const Message& m : phase) {
        const DeviceGuard guard(devices[m.from]);
        const cudaStream_t s = streams[m.from].get();
        const BoxSide src{data[m.from], m.src_alloc, m.src_lo};
        const BoxSide dst{data[m.to], m.dst_alloc, m.dst_lo};
        if (m.from == m.to) {
          launch_box_copy(src, dst, m.size, element_size, s);
          continue;
        }
        const void* from = at(m.from, m.src_alloc, m.src_lo);
        if (m.send.data() != nullptr) {
          launch_box_copy(src, BoxSide{m.send.data(), m.size, {}}, m.size, element_size, s);
          from = m.send.data();
        }
        void* to = m.recv.data() != nullptr ? m.recv.data() : at(m.to, m.dst_alloc, m.dst_lo);
        CUSH_CUDA_CHECK(cudaMemcpyAsync(to, from, m.bytes, cudaMemcpyDefault, s));
      }
      // Receivers continue once their senders' copies are done.
      std::vector<char> recorded(p, 0);
      std::fill(waited.begin(), waited.end(), 0);
      for (const Message& m : phase) {
        if (m.from == m.to) continue;
        if (recorded[m.from] == 0) {
          done[m.from].record(streams[m.from].get());
          recorded[m.from] = 1;
        }
        if (waited[m.from * p + m.to] == 0) {
          waited[m.from * p + m.to] = 1;
          done[m.from].wait_in(streams[m.to].get());
        }
      }
      for (const Message& m : phase) {
        if (m.from == m.to || m.recv.data() == nullptr) continue;
        const DeviceGuard guard(devices[m.to]);
        launch_box_copy(BoxSide{m.recv.data(), m.size, {}}, BoxSide{data[m.to], m.dst_alloc, m.dst_lo}, m.size,
                        element_size, streams[m.to].get());
      }
    }
  }

  // Host array (global extents, no ghosts) <-> block k's owned cells, one 3D copy per block.
  void copy_block(std::size_t k, void* host, void* device, cudaStream_t stream, bool to_device) const {
    const Box o = grid.owned(k);
    const Extent3 alloc = grid.allocated(k);
    const Extent3& e = grid.extent();
    cudaMemcpy3DParms c{};
    const cudaPitchedPtr h{host, e[0] * element_size, e[0], e[1]};
    const cudaPitchedPtr d{device, alloc[0] * element_size, alloc[0], alloc[1]};
    const cudaPos hp{static_cast<std::size_t>(o.lo[0]) * element_size, static_cast<std::size_t>(o.lo[1]),
                     static_cast<std::size_t>(o.lo[2])};
    const cudaPos dp{grid.halo(0) * element_size, grid.halo(1), grid.halo(2)};
    c.srcPtr = to_device ? h : d;
    c.srcPos = to_device ? hp : dp;
    c.dstPtr = to_device ? d : h;
    c.dstPos = to_device ? dp : hp;
    c.extent = cudaExtent{o.size[0] * element_size, o.size[1], o.size[2]};
    c.kind = cudaMemcpyDefault;
    const DeviceGuard guard(devices[k]);
    CUSH_CUDA_CHECK_AT(cudaMemcpy3DAsync(&c, stream), "block " + std::to_string(k));
  }
};

FieldEngine::FieldEngine(const DeviceSet& devices, const Decomposition& grid, std::size_t element_size)
    : impl_(std::make_unique<Impl>(devices, grid, element_size)) {}

// The exchange streams synchronize as they are destroyed, so no copy outlives its buffers.
FieldEngine::~FieldEngine() = default;

bool FieldEngine::exchanging() const noexcept { return impl_->in_flight; }

void FieldEngine::exchange_start(std::span<void* const> data, std::span<const cudaStream_t> streams) {
  if (impl_->in_flight)
    throw InvalidArgument("cush::Field::exchange_start", "this", "an exchange is in flight: call exchange_finish() first");
  for (std::size_t k = 0; k < streams.size(); ++k) {
    impl_->ready[k].record(streams[k]);
    impl_->ready[k].wait_in(impl_->streams[k].get());
  }
  impl_->run(data);
  impl_->in_flight = true;
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

void FieldEngine::scatter(const void* host, std::span<void* const> data, std::span<const cudaStream_t> streams) const {
  if (host == nullptr) throw InvalidArgument("cush::Field::scatter", "host", "is null");
  for (std::size_t k = 0; k < data.size(); ++k) impl_->copy_block(k, const_cast<void*>(host), data[k], streams[k], true);
}

void FieldEngine::gather(void* host, std::span<void* const> data, std::span<const cudaStream_t> streams) const {
  if (host == nullptr) throw InvalidArgument("cush::Field::gather", "host", "is null");
  for (std::size_t k = 0; k < data.size(); ++k) impl_->copy_block(k, host, data[k], streams[k], false);
}

}  // namespace cush::detail
