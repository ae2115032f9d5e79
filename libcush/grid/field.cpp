#include "cush/field.hpp"

#include <cstddef>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "core/stream_set.hpp"
#include "cush/stream.hpp"
#include "grid/field_engine.hpp"

namespace cush {

struct FieldBase::Impl {
  Decomposition grid;
  DeviceSet devices;
  // The blocks' streams, shared by the fields made alike (Field::alike), so a kernel that reads
  // one field and writes another is ordered with both; or the caller's.
  std::shared_ptr<const detail::StreamSet> streams;
  std::vector<cudaStream_t> handles;  // streams->handles()
  std::vector<DeviceBuffer> buffers;
  std::vector<void*> data;  // block k's first ghost cell, lead() cells into buffers[k]
  std::size_t element_size = 0;
  HaloTransport transport = HaloTransport::automatic;
  std::unique_ptr<detail::FieldEngine> engine;

  Impl(Decomposition g, DeviceSet d, std::shared_ptr<const detail::StreamSet> s, std::size_t es, HaloTransport t)
      : grid(std::move(g)),
        devices(std::move(d)),
        streams(std::move(s)),
        handles(streams->handles().begin(), streams->handles().end()),
        element_size(es),
        transport(t) {
    // Everything is checked before the first allocation.
    for (std::size_t k = 0; k < grid.size(); ++k) {
      const std::size_t cells = grid.lead() + grid.allocated_cells(k);
      if (element_size != 0 && cells > std::numeric_limits<std::size_t>::max() / element_size)
        throw InvalidArgument("cush::Field", "grid", "block " + std::to_string(k) + " overflows the address space");
      const std::size_t needed = cells * element_size;
      const std::size_t available = devices.free_memory(k);
      if (needed > available) throw OutOfMemory("cush::Field", devices[k], needed, available);
    }
    for (std::size_t k = 0; k < grid.size(); ++k) {
      // The buffer's start is aligned (to 256 bytes); lead() cells on, the first ghost cell.
      buffers.emplace_back(devices[k], (grid.lead() + grid.allocated_cells(k)) * element_size);
      data.push_back(static_cast<std::byte*>(buffers.back().data()) + grid.lead() * element_size);
    }
    engine = std::make_unique<detail::FieldEngine>(devices, grid, element_size, transport);
  }

  // The blocks' streams may still run kernels on the buffers, and exchange() packs into and
  // unpacks from the engine's buffers on them: wait for them first. The engine waits for its own
  // streams as it is destroyed, before the buffers go.
  ~Impl() {
    detail::synchronize_noexcept(handles);
    engine.reset();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Host array (global extents, no ghosts) <-> block k's owned cells, one 3D copy per block.
  void copy_block(std::size_t k, void* host, bool to_device) const {
    void* device = data[k];
    const cudaStream_t stream = handles[k];
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
    if (o.size[1] * o.size[2] == 1) {
      // One row (1D grids): a plain copy, free of the 3D copy's pitch limits.
      const auto lo = [&](std::size_t a) { return static_cast<std::size_t>(o.lo[a]); };
      auto* h0 = static_cast<std::byte*>(host) + (lo(0) + e[0] * (lo(1) + e[1] * lo(2))) * element_size;
      auto* d0 = static_cast<std::byte*>(device) +
                 (grid.halo(0) + alloc[0] * (grid.halo(1) + alloc[1] * grid.halo(2))) * element_size;
      CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(to_device ? d0 : h0, to_device ? h0 : d0, o.size[0] * element_size,
                                         cudaMemcpyDefault, stream),
                         "block " + std::to_string(k));
      return;
    }
    CUSH_CUDA_CHECK_AT(cudaMemcpy3DAsync(&c, stream), "block " + std::to_string(k));
  }
};

namespace {
void check_blocks(const DeviceSet& devices, const Decomposition& grid) {
  if (devices.size() != grid.size())
    throw InvalidArgument("cush::Field", "devices",
                          std::to_string(devices.size()) + " devices for a decomposition of " +
                              std::to_string(grid.size()) + " blocks");
}
}  // namespace

FieldBase::FieldBase(DeviceSet devices, Decomposition grid, std::size_t element_size) {
  check_blocks(devices, grid);
  auto streams = std::make_shared<const detail::StreamSet>(devices.ids());
  impl_ = std::make_unique<Impl>(std::move(grid), std::move(devices), std::move(streams), element_size,
                                 HaloTransport::automatic);
}

FieldBase::FieldBase(DeviceSet devices, Decomposition grid, std::span<const StreamRef> streams,
                     std::size_t element_size) {
  check_blocks(devices, grid);
  auto set = std::make_shared<const detail::StreamSet>(devices.ids(), streams, "cush::Field");
  impl_ = std::make_unique<Impl>(std::move(grid), std::move(devices), std::move(set), element_size,
                                 HaloTransport::automatic);
}

FieldBase::FieldBase(const FieldBase& like, std::size_t element_size) {
  if (!like.impl_) throw InvalidArgument("cush::Field::alike", "like", "was moved from");
  const Impl& l = *like.impl_;
  impl_ = std::make_unique<Impl>(l.grid, l.devices, l.streams, element_size, l.transport);
}

FieldBase::FieldBase(FieldBase&&) noexcept = default;
FieldBase& FieldBase::operator=(FieldBase&&) noexcept = default;
FieldBase::~FieldBase() = default;

const Decomposition& FieldBase::grid() const noexcept { return impl_->grid; }

const DeviceSet& FieldBase::devices() const noexcept { return impl_->devices; }

cudaStream_t FieldBase::stream(std::size_t pos) const { return impl_->handles.at(pos); }

void* FieldBase::block_data(std::size_t pos) const { return impl_->data.at(pos); }

HaloTransport FieldBase::halo_transport() const noexcept { return impl_->transport; }

void FieldBase::exchange_start() { impl_->engine->exchange_start(impl_->data, impl_->handles); }

void FieldBase::exchange_finish() { impl_->engine->exchange_finish(impl_->handles); }

void FieldBase::exchange() { impl_->engine->exchange(impl_->data, impl_->handles); }

std::vector<std::size_t> FieldBase::pipelined_slabs() const { return impl_->engine->pipelined_slabs(); }

void FieldBase::set_halo_transport(HaloTransport transport) {
  Impl& f = *impl_;
  if (f.engine->in_flight())
    throw InvalidArgument("cush::Field::set_halo_transport", "this", "an exchange is in flight: call exchange_finish() first");
  if (transport == f.transport) return;
  // The new engine first (it may fail to allocate). exchange() runs on the blocks' streams, so
  // they may still pack into or unpack from the old engine's buffers: wait for them before the
  // old engine goes (its own streams synchronize as it is destroyed).
  auto next = std::make_unique<detail::FieldEngine>(f.devices, f.grid, f.element_size, transport);
  wait();
  f.engine = std::move(next);
  f.transport = transport;
}

void FieldBase::wait() const {
  // Synchronize every device even if one failed, then report the first failure (as Plan does).
  std::exception_ptr first;
  for (std::size_t pos = 0; pos < impl_->handles.size(); ++pos) {
    try {
      StreamRef(impl_->devices[pos], impl_->handles[pos]).synchronize();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

bool FieldBase::done() const {
  for (std::size_t pos = 0; pos < impl_->handles.size(); ++pos) {
    const cudaError_t status = cudaStreamQuery(impl_->handles[pos]);
    if (status == cudaErrorNotReady) return false;
    CUSH_CUDA_CHECK_AT(status, "block stream on device " + std::to_string(impl_->devices[pos]));
  }
  return impl_->engine->done();
}

void FieldBase::scatter_bytes(const void* host) {
  if (host == nullptr) throw InvalidArgument("cush::Field::scatter", "host", "is null");
  for (std::size_t k = 0; k < impl_->grid.size(); ++k) impl_->copy_block(k, const_cast<void*>(host), true);
}

void FieldBase::gather_bytes(void* host) {
  if (host == nullptr) throw InvalidArgument("cush::Field::gather", "host", "is null");
  for (std::size_t k = 0; k < impl_->grid.size(); ++k) impl_->copy_block(k, host, false);
}

}  // namespace cush
