#include "cush/graph_field.hpp"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_devices.hpp"
#include "core/stream_idle.hpp"
#include "core/stream_set.hpp"
#include "cush/device_buffer.hpp"
#include "cush/error.hpp"
#include "cush/host_memory.hpp"
#include "graph/graph_engine.hpp"

namespace cush {

const char* to_string(GraphTransport t) noexcept {
  switch (t) {
    case GraphTransport::automatic: return "automatic";
    case GraphTransport::peer: return "peer";
    case GraphTransport::staged: return "staged";
    case GraphTransport::host_staging: return "host_staging";
    case GraphTransport::nccl: return "nccl";
  }
  return "unknown";
}

namespace {

// Elements from one component to the next: the part's size rounded up to 256 bytes where the
// element size divides 256 (every component starts as aligned as the buffer), else the size.
std::size_t stride_of(std::size_t size, std::size_t element_size) {
  if (256 % element_size != 0) return size;
  const std::size_t per = 256 / element_size;
  return (size + per - 1) / per * per;
}

// What one block's host function moves between the caller's global array(s) and the block's
// pinned staging buffer (its owned values, component after component, in local order). Made per
// call and deleted by the host function, so calls in a row never share one.
struct HostJob {
  std::byte* host = nullptr;
  std::byte* staging = nullptr;
  const std::int64_t* globals = nullptr;  // the owned values' global ids, in local order
  std::size_t owned = 0;
  std::size_t nodes = 0;
  std::size_t components = 0;
  std::size_t element_size = 0;
  bool scatter = true;

  static void CUDART_CB run(void* self) {
    const HostJob* j = static_cast<const HostJob*>(self);
    const std::size_t es = j->element_size;
    for (std::size_t c = 0; c < j->components; ++c) {
      std::byte* host = j->host + c * j->nodes * es;
      std::byte* staging = j->staging + c * j->owned * es;
      for (std::size_t i = 0; i < j->owned; ++i) {
        std::byte* h = host + static_cast<std::size_t>(j->globals[i]) * es;
        if (j->scatter) {
          std::memcpy(staging + i * es, h, es);
        } else {
          std::memcpy(h, staging + i * es, es);
        }
      }
    }
    delete j;
  }
};

}  // namespace

struct GraphFieldBase::Impl {
  std::shared_ptr<const GraphDecomposition> dec;
  DeviceSet devices;
  // The blocks' streams, shared by the fields made alike, or the caller's.
  std::shared_ptr<const detail::StreamSet> streams;
  std::vector<cudaStream_t> handles;
  std::vector<DeviceBuffer> buffers;
  std::vector<void*> data;
  std::vector<std::size_t> strides;  // per part, elements from one component to the next
  std::vector<PinnedBuffer<std::byte>> staging;  // per part, for scatter and gather (made on first use)
  std::size_t element_size = 0;
  std::size_t components = 1;
  GraphTransport transport = GraphTransport::automatic;
  std::unique_ptr<detail::GraphEngine> engine;
  bool in_flight = false;

  Impl(std::shared_ptr<const GraphDecomposition> d, DeviceSet devs, std::shared_ptr<const detail::StreamSet> s,
       std::size_t es, std::size_t count, GraphTransport t)
      : dec(std::move(d)),
        devices(std::move(devs)),
        streams(std::move(s)),
        handles(streams->handles().begin(), streams->handles().end()),
        element_size(es),
        components(count),
        transport(t) {
    // Everything is checked before the first allocation.
    if (components == 0) throw InvalidArgument("cush::GraphField", "components", "a field needs at least one component");
    std::vector<std::size_t> bytes;
    for (std::size_t k = 0; k < dec->size(); ++k) {
      strides.push_back(stride_of(dec->part(k).size(), element_size));
      bytes.push_back(strides[k] * element_size * components);
      const std::size_t available = devices.free_memory(k);
      if (bytes[k] > available) throw OutOfMemory("cush::GraphField", devices[k], bytes[k], available);
    }
    for (std::size_t k = 0; k < dec->size(); ++k) {
      buffers.emplace_back(devices[k], bytes[k]);
      data.push_back(buffers.back().data());
    }
    staging.resize(dec->size());
    engine = make_engine(transport);
  }

  [[nodiscard]] std::unique_ptr<detail::GraphEngine> make_engine(GraphTransport t) const {
    return std::make_unique<detail::GraphEngine>(devices, *dec, element_size, components, strides, t);
  }

  void check_idle(const char* where) const {
    if (in_flight) throw InvalidArgument(where, "this", "an exchange is in flight: call exchange_finish() first");
  }

  // The blocks' streams may still run kernels on the buffers or host functions on the staging:
  // wait for them first. The engine waits for its own streams as it is destroyed.
  ~Impl() {
    detail::synchronize_noexcept(handles);
    engine.reset();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Block k's owned values <-> the global array(s) `host`, through the block's staging buffer.
  void move_owned(std::size_t k, std::byte* host, bool scatter) {
    const GraphPart& part = dec->part(k);
    const std::size_t owned = part.owned().count;
    const std::size_t bytes = owned * components * element_size;
    if (staging[k].size() < bytes) staging[k] = PinnedBuffer<std::byte>(bytes);
    const DeviceGuard guard(devices[k]);
    const cudaStream_t s = handles[k];
    auto job = std::make_unique<HostJob>(HostJob{host, staging[k].data(), part.globals().data(), owned, dec->nodes(),
                                                 components, element_size, scatter});
    // Each component's owned values are one run at the start of its array.
    const auto copies = [&] {
      for (std::size_t c = 0; c < components; ++c) {
        std::byte* dev = static_cast<std::byte*>(data[k]) + c * strides[k] * element_size;
        std::byte* stage = staging[k].data() + c * owned * element_size;
        CUSH_CUDA_CHECK(scatter ? cudaMemcpyAsync(dev, stage, owned * element_size, cudaMemcpyHostToDevice, s)
                                : cudaMemcpyAsync(stage, dev, owned * element_size, cudaMemcpyDeviceToHost, s));
      }
    };
    if (!scatter) copies();
    CUSH_CUDA_CHECK(cudaLaunchHostFunc(s, &HostJob::run, job.get()));
    job.release();  // the host function deletes it
    if (scatter) copies();
  }

  void move_all(void* host, std::size_t host_bytes, bool scatter) {
    const char* where = scatter ? "cush::GraphField::scatter" : "cush::GraphField::gather";
    if (host == nullptr) throw InvalidArgument(where, "host", "is null");
    const std::size_t want = dec->nodes() * components * element_size;
    if (host_bytes != want)
      throw InvalidArgument(where, "host",
                            std::to_string(host_bytes / element_size) + " values, the field has " +
                                std::to_string(dec->nodes()) + " nodes x " + std::to_string(components) + " components");
    check_idle(where);
    detail::finishing_on_error(devices.ids(), [&] {
      for (std::size_t k = 0; k < dec->size(); ++k) move_owned(k, static_cast<std::byte*>(host), scatter);
    });
  }
};

namespace {
void check_parts(const DeviceSet& devices, const GraphDecomposition& dec) {
  if (devices.size() != dec.size())
    throw InvalidArgument("cush::GraphField", "devices",
                          std::to_string(devices.size()) + " devices for a decomposition of " +
                              std::to_string(dec.size()) + " parts");
}

template <class Impl>
Impl* live(const std::unique_ptr<Impl>& impl) {
  if (!impl) throw InvalidArgument("cush::GraphField", "this", "the field was moved from");
  return impl.get();
}
}  // namespace

GraphFieldBase::GraphFieldBase(DeviceSet devices, GraphDecomposition dec, std::size_t element_size,
                               std::size_t components) {
  check_parts(devices, dec);
  auto streams = std::make_shared<const detail::StreamSet>(devices.ids());
  impl_ = std::make_unique<Impl>(std::make_shared<const GraphDecomposition>(std::move(dec)), std::move(devices),
                                 std::move(streams), element_size, components, GraphTransport::automatic);
}

GraphFieldBase::GraphFieldBase(DeviceSet devices, GraphDecomposition dec, std::span<const StreamRef> streams,
                               std::size_t element_size, std::size_t components) {
  check_parts(devices, dec);
  auto set = std::make_shared<const detail::StreamSet>(devices.ids(), streams, "cush::GraphField");
  impl_ = std::make_unique<Impl>(std::make_shared<const GraphDecomposition>(std::move(dec)), std::move(devices),
                                 std::move(set), element_size, components, GraphTransport::automatic);
}

GraphFieldBase::GraphFieldBase(const GraphFieldBase& like, std::size_t element_size, std::size_t components) {
  if (!like.impl_) throw InvalidArgument("cush::GraphField::alike", "like", "was moved from");
  const Impl& l = *like.impl_;
  impl_ = std::make_unique<Impl>(l.dec, l.devices, l.streams, element_size, components, l.transport);
}

GraphFieldBase::GraphFieldBase(GraphFieldBase&&) noexcept = default;
GraphFieldBase& GraphFieldBase::operator=(GraphFieldBase&&) noexcept = default;
GraphFieldBase::~GraphFieldBase() = default;

const GraphDecomposition& GraphFieldBase::decomposition() const { return *live(impl_)->dec; }

const DeviceSet& GraphFieldBase::devices() const { return live(impl_)->devices; }

std::size_t GraphFieldBase::components() const noexcept { return impl_ ? impl_->components : 0; }

std::size_t GraphFieldBase::component_stride(std::size_t pos) const { return live(impl_)->strides.at(pos); }

cudaStream_t GraphFieldBase::stream(std::size_t pos) const { return live(impl_)->handles.at(pos); }

std::vector<StreamRef> GraphFieldBase::streams() const {
  std::vector<StreamRef> out;
  const auto& impl = *live(impl_);
  for (std::size_t pos = 0; pos < impl.handles.size(); ++pos) out.emplace_back(impl.devices[pos], impl.handles[pos]);
  return out;
}

void* GraphFieldBase::block_data(std::size_t pos) const { return live(impl_)->data.at(pos); }

GraphTransport GraphFieldBase::transport() const { return live(impl_)->transport; }

void GraphFieldBase::exchange_start() {
  Impl& f = *live(impl_);
  f.check_idle("cush::GraphField::exchange_start");
  f.engine->exchange_start(f.data, f.handles);
  f.in_flight = true;
}

void GraphFieldBase::exchange_finish() {
  Impl& f = *live(impl_);
  if (!f.in_flight)
    throw InvalidArgument("cush::GraphField::exchange_finish", "this", "no exchange is in flight: call exchange_start() first");
  f.in_flight = false;
  f.engine->exchange_finish(f.handles);
}

void GraphFieldBase::exchange() {
  Impl& f = *live(impl_);
  f.check_idle("cush::GraphField::exchange");
  f.engine->exchange(f.data, f.handles);
}

void GraphFieldBase::set_transport(GraphTransport transport) {
  Impl& f = *live(impl_);
  f.check_idle("cush::GraphField::set_transport");
  if (transport == f.transport) return;
  std::unique_ptr<detail::GraphEngine> next = f.make_engine(transport);  // may refuse or fail to allocate
  // exchange() runs on the blocks' streams, which may still use the old engine's buffers.
  wait();
  f.engine = std::move(next);
  f.transport = transport;
}

void GraphFieldBase::wait() const {
  if (impl_) detail::synchronize_all(impl_->devices.ids(), impl_->handles);
}

bool GraphFieldBase::done() const {
  if (!impl_) return true;
  return detail::finishing_on_error(impl_->devices.ids(), [&] {
    for (std::size_t pos = 0; pos < impl_->handles.size(); ++pos)
      if (!detail::stream_idle(impl_->handles[pos], "block stream", impl_->devices[pos])) return false;
    return impl_->engine->done();
  });
}

void GraphFieldBase::scatter_bytes(const void* host, std::size_t host_bytes) {
  live(impl_)->move_all(const_cast<void*>(host), host_bytes, true);
}

void GraphFieldBase::gather_bytes(void* host, std::size_t host_bytes) { live(impl_)->move_all(host, host_bytes, false); }

}  // namespace cush
