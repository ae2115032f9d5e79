#include "cush/field.hpp"

#include <cstddef>
#include <string>
#include <utility>

#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "core/cuda_devices.hpp"
#include "core/stream_idle.hpp"
#include "core/stream_set.hpp"
#include "cush/stream.hpp"
#include "grid/block_memory.hpp"
#include "grid/exchange_program.hpp"
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
  std::size_t components = 1;
  std::vector<std::size_t> strides;  // per block, elements from one component to the next
  HaloTransport transport = HaloTransport::automatic;
  HaloComponents everything;                    // every component filled everywhere
  std::unique_ptr<detail::FieldEngine> engine;  // its exchange
  // The engines of exchanges of some components (exchange(which)), built on first use.
  std::vector<std::pair<HaloComponents, std::unique_ptr<detail::FieldEngine>>> selective;
  detail::FieldEngine* in_flight = nullptr;  // the engine of the exchange started and not finished

  Impl(Decomposition g, DeviceSet d, std::shared_ptr<const detail::StreamSet> s, std::size_t es, std::size_t count,
       HaloTransport t)
      : grid(std::move(g)),
        devices(std::move(d)),
        streams(std::move(s)),
        handles(streams->handles().begin(), streams->handles().end()),
        element_size(es),
        components(count),
        transport(t) {
    // Everything is checked before the first allocation.
    if (components == 0) throw InvalidArgument("cush::Field", "components", "a field needs at least one component");
    std::vector<std::size_t> bytes;
    for (std::size_t k = 0; k < grid.size(); ++k) {
      strides.push_back(detail::component_stride(grid, k, element_size, "cush::Field"));
      bytes.push_back(detail::block_bytes(grid, k, element_size, components, strides[k], "cush::Field"));
      const std::size_t available = devices.free_memory(k);
      if (bytes[k] > available) throw OutOfMemory("cush::Field", devices[k], bytes[k], available);
    }
    for (std::size_t k = 0; k < grid.size(); ++k) {
      // The buffer's start is aligned (to 256 bytes); lead() cells on, the first ghost cell.
      buffers.emplace_back(devices[k], bytes[k]);
      data.push_back(static_cast<std::byte*>(buffers.back().data()) + grid.lead() * element_size);
    }
    everything = HaloComponents::all(components);
    engine = make_engine(everything);
  }

  [[nodiscard]] std::unique_ptr<detail::FieldEngine> make_engine(const HaloComponents& which) const {
    return std::make_unique<detail::FieldEngine>(devices, grid, element_size, transport, which, strides);
  }

  void check_idle(const char* where) const {
    if (in_flight != nullptr) throw InvalidArgument(where, "this", "an exchange is in flight: call exchange_finish() first");
  }

  void start(detail::FieldEngine& e) {
    check_idle("cush::Field::exchange_start");
    e.exchange_start(data, handles);
    in_flight = &e;
  }

  // The engine of `which` (built and kept on first use).
  detail::FieldEngine& engine_for(const HaloComponents& which) {
    if (which == everything) return *engine;
    for (auto& [w, e] : selective)
      if (w == which) return *e;
    detail::check_components(grid, which, components);
    selective.emplace_back(which, make_engine(which));
    return *selective.back().second;
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

  // Component `component` of the host array(s) (global extents, no ghosts) <-> block k's owned cells.
  void copy_block(std::size_t k, void* host, bool to_device, std::size_t component) const {
    const Extent3& e = grid.extent();
    const Box o = grid.owned(k);
    const detail::HostBox h{static_cast<std::byte*>(host) + component * e[0] * e[1] * e[2] * element_size, e,
                            Extent3{static_cast<std::size_t>(o.lo[0]), static_cast<std::size_t>(o.lo[1]),
                                    static_cast<std::size_t>(o.lo[2])}};
    const DeviceGuard guard(devices[k]);
    detail::copy_owned(grid, k, static_cast<std::byte*>(data[k]) + component * strides[k] * element_size, h,
                       element_size, handles[k], to_device);
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

FieldBase::FieldBase(DeviceSet devices, Decomposition grid, std::size_t element_size, std::size_t components) {
  check_blocks(devices, grid);
  auto streams = std::make_shared<const detail::StreamSet>(devices.ids());
  impl_ = std::make_unique<Impl>(std::move(grid), std::move(devices), std::move(streams), element_size, components,
                                 HaloTransport::automatic);
}

FieldBase::FieldBase(DeviceSet devices, Decomposition grid, std::span<const StreamRef> streams,
                     std::size_t element_size, std::size_t components) {
  check_blocks(devices, grid);
  auto set = std::make_shared<const detail::StreamSet>(devices.ids(), streams, "cush::Field");
  impl_ = std::make_unique<Impl>(std::move(grid), std::move(devices), std::move(set), element_size, components,
                                 HaloTransport::automatic);
}

FieldBase::FieldBase(const FieldBase& like, std::size_t element_size, std::size_t components) {
  if (!like.impl_) throw InvalidArgument("cush::Field::alike", "like", "was moved from");
  const Impl& l = *like.impl_;
  impl_ = std::make_unique<Impl>(l.grid, l.devices, l.streams, element_size, components, l.transport);
}

FieldBase::FieldBase(FieldBase&&) noexcept = default;
FieldBase& FieldBase::operator=(FieldBase&&) noexcept = default;
FieldBase::~FieldBase() = default;

namespace {
// A moved-from field may be destroyed, assigned to, asked components() (0), done() (true) and
// waited for (it returns at once); anything else is an InvalidArgument.
template <class Impl>
Impl* live(const std::unique_ptr<Impl>& impl) {
  if (!impl) throw InvalidArgument("cush::Field", "this", "the field was moved from");
  return impl.get();
}
}  // namespace

const Decomposition& FieldBase::grid() const { return live(impl_)->grid; }

const DeviceSet& FieldBase::devices() const { return live(impl_)->devices; }

cudaStream_t FieldBase::stream(std::size_t pos) const { return live(impl_)->handles.at(pos); }

std::vector<StreamRef> FieldBase::streams() const {
  std::vector<StreamRef> out;
  const auto& impl = *live(impl_);
  for (std::size_t pos = 0; pos < impl.handles.size(); ++pos) out.emplace_back(impl.devices[pos], impl.handles[pos]);
  return out;
}

void* FieldBase::block_data(std::size_t pos) const { return live(impl_)->data.at(pos); }

HaloTransport FieldBase::halo_transport() const { return live(impl_)->transport; }

std::size_t FieldBase::components() const noexcept { return impl_ ? impl_->components : 0; }

std::size_t FieldBase::component_stride(std::size_t pos) const { return live(impl_)->strides.at(pos); }

void FieldBase::exchange_start() {
  Impl& f = *live(impl_);
  f.start(*f.engine);
}

void FieldBase::exchange_start(const HaloComponents& which) {
  Impl& f = *live(impl_);
  f.start(f.engine_for(which));
}

void FieldBase::exchange_finish() {
  Impl& f = *live(impl_);
  if (f.in_flight == nullptr)
    throw InvalidArgument("cush::Field::exchange_finish", "this", "no exchange is in flight: call exchange_start() first");
  f.in_flight->exchange_finish(f.handles);
  f.in_flight = nullptr;
}

void FieldBase::exchange() {
  Impl& f = *live(impl_);
  f.check_idle("cush::Field::exchange");
  f.engine->exchange(f.data, f.handles);
}

void FieldBase::exchange(const HaloComponents& which) {
  Impl& f = *live(impl_);
  f.check_idle("cush::Field::exchange");
  f.engine_for(which).exchange(f.data, f.handles);
}

std::vector<std::size_t> FieldBase::pipelined_slabs() const { return live(impl_)->engine->pipelined_slabs(); }

void FieldBase::set_halo_transport(HaloTransport transport) {
  Impl& f = *live(impl_);
  f.check_idle("cush::Field::set_halo_transport");
  if (transport == f.transport) return;
  // The new engine first (it may fail to allocate). exchange() runs on the blocks' streams, so
  // they may still pack into or unpack from the old engine's buffers: wait for them before the
  // old engine goes (its own streams synchronize as it is destroyed).
  const HaloTransport old = f.transport;
  f.transport = transport;
  std::unique_ptr<detail::FieldEngine> next;
  try {
    next = f.make_engine(f.everything);
  } catch (...) {
    f.transport = old;
    throw;
  }
  wait();
  f.engine = std::move(next);
  f.selective.clear();  // rebuilt with the new transport on their next use
}

void FieldBase::wait() const {
  // Every device even if one failed, then the first failure (as Plan does).
  if (impl_) detail::synchronize_all(impl_->devices.ids(), impl_->handles);
}

bool FieldBase::done() const {
  if (!impl_) return true;
  // A failed query throws as a failed wait() does: after the devices have finished (promise 2).
  return detail::finishing_on_error(impl_->devices.ids(), [&] {
    for (std::size_t pos = 0; pos < impl_->handles.size(); ++pos)
      if (!detail::stream_idle(impl_->handles[pos], "block stream", impl_->devices[pos])) return false;
    for (const auto& [which, engine] : impl_->selective)
      if (!engine->done()) return false;
    return impl_->engine->done();
  });
}

void FieldBase::scatter_bytes(const void* host) {
  Impl& f = *live(impl_);
  if (host == nullptr) throw InvalidArgument("cush::Field::scatter", "host", "is null");
  // A failed block copy leaves none of the others still reading the caller's buffer.
  detail::finishing_on_error(f.devices.ids(), [&] {
    for (std::size_t k = 0; k < f.grid.size(); ++k)
      for (std::size_t c = 0; c < f.components; ++c) f.copy_block(k, const_cast<void*>(host), true, c);
  });
}

void FieldBase::gather_bytes(void* host) {
  Impl& f = *live(impl_);
  if (host == nullptr) throw InvalidArgument("cush::Field::gather", "host", "is null");
  detail::finishing_on_error(f.devices.ids(), [&] {
    for (std::size_t k = 0; k < f.grid.size(); ++k)
      for (std::size_t c = 0; c < f.components; ++c) f.copy_block(k, host, false, c);
  });
}

}  // namespace cush
