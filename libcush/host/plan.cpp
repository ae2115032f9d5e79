#include "cush/plan.hpp"
#include "host/slice_check.hpp"

#include <limits>
#include <string>
#include <vector>

#include "core/cuda_devices.hpp"
#include "core/stream_idle.hpp"
#include "core/stream_set.hpp"
#include "host/plan_impl.hpp"
#include "transports/backend.hpp"
#include "cush/device_buffer.hpp"
#include "cush/error.hpp"
#include "cush/host_memory.hpp"
#include "cush/stream.hpp"
#include "host/transfer.hpp"

namespace cush {

namespace {
// A split broadcast pays one extra peer hop; below this size the direct one is as fast.
constexpr std::size_t host_split_broadcast_min_bytes = std::size_t{4} << 20;
// Pipeline step of a split broadcast from pinned memory.
constexpr std::size_t host_split_broadcast_chunk_bytes = std::size_t{32} << 20;
}  // namespace

namespace detail {
void throw_size_mismatch(std::size_t got, std::size_t expected, const char* where) {
  throw InvalidArgument(where, "host",
                        "holds " + std::to_string(got) + " elements, the plan has " + std::to_string(expected));
}
}  // namespace detail


namespace {
Layout checked_layout(const DeviceSet& devices, std::size_t n, std::size_t element_size,
                      const Distribution& distribution, const char* where) {
  if (n == 0) throw InvalidArgument(where, "n", "a plan needs at least one element");
  if (element_size == 0 || n > std::numeric_limits<std::size_t>::max() / element_size)
    throw InvalidArgument(where, "n", std::to_string(n) + " elements of " + std::to_string(element_size) +
                                          " bytes overflow the address space");
  return Layout::make(n, distribution, devices.topology().devices());
}
}  // namespace

PlanBase::PlanBase(DeviceSet devices, std::size_t n, std::size_t element_size, const Distribution& distribution,
                   const char* where) {
  Layout layout = checked_layout(devices, n, element_size, distribution, where);
  auto streams = std::make_shared<const detail::StreamSet>(devices.ids());
  allocate(std::move(devices), distribution, std::move(layout), element_size, std::move(streams), where);
}

PlanBase::PlanBase(DeviceSet devices, std::size_t n, std::size_t element_size, const Distribution& distribution,
                   std::span<const StreamRef> streams, const char* where) {
  Layout layout = checked_layout(devices, n, element_size, distribution, where);
  auto set = std::make_shared<const detail::StreamSet>(devices.ids(), streams, where);
  allocate(std::move(devices), distribution, std::move(layout), element_size, std::move(set), where);
}

PlanBase::PlanBase(const PlanBase& like, std::size_t n, std::size_t element_size, const Distribution& distribution,
                   const char* where) {
  if (!like.impl_) throw InvalidArgument(where, "like", "was moved from");
  Layout layout = checked_layout(like.impl_->devices, n, element_size, distribution, where);
  allocate(like.impl_->devices, distribution, std::move(layout), element_size, like.impl_->streams, where);
}

void PlanBase::allocate(DeviceSet devices, const Distribution& distribution, Layout layout, std::size_t element_size,
                        std::shared_ptr<const detail::StreamSet> streams, const char* where) {
  // Every argument is checked before the first allocation. Free memory is not asked first
  // (cudaMemGetInfo costs ~5 us per device, a fifth of making a small plan): a failed
  // allocation frees what was allocated and reports the device, the need and what is free.
  auto impl = std::make_unique<Impl>(std::move(devices), distribution, std::move(layout), element_size, std::move(streams));
  const std::size_t p = impl->devices.size();
  // Peer access is enabled when an operation first copies between devices, not here: once
  // enabled, every cudaMalloc and cudaFree on those devices also maps the memory into the peer,
  // which slows allocation-heavy code in proportion to the size.
  impl->buffers.reserve(p);
  for (std::size_t pos = 0; pos < p; ++pos) {
    const std::size_t needed = impl->layout.capacity(pos) * element_size;
    try {
      impl->buffers.emplace_back(impl->devices[pos], needed);
    } catch (const OutOfMemory& e) {
      // Named as the plan's, and the call that failed.
      throw OutOfMemory(std::string(where) + ": cudaMalloc", e.device(), e.needed(), e.available());
    }
    impl->data.push_back(impl->buffers.back().data());
    detail::prepare_transports(impl->devices[pos]);
  }
  impl_ = std::move(impl);
}

PlanBase::PlanBase(PlanBase&&) noexcept = default;
PlanBase& PlanBase::operator=(PlanBase&&) noexcept = default;
PlanBase::~PlanBase() = default;

namespace {
// A moved-from plan may be destroyed, assigned to, asked size() (0), done() (true) and wait()ed
// for (nothing to wait for); anything else is an InvalidArgument.
template <class Impl>
Impl& live(const std::unique_ptr<Impl>& impl, const char* where) {
  if (!impl) throw InvalidArgument(where, "this", "the plan was moved from");
  return *impl;
}
}  // namespace

const DeviceSet& PlanBase::devices() const { return live(impl_, "cush::Plan::devices").devices; }
const Distribution& PlanBase::distribution() const { return live(impl_, "cush::Plan::distribution").distribution; }
const Layout& PlanBase::layout() const { return live(impl_, "cush::Plan::layout").layout; }
std::size_t PlanBase::size() const noexcept { return impl_ ? impl_->layout.size() : 0; }
cudaStream_t PlanBase::stream(std::size_t pos) const { return live(impl_, "cush::Plan::stream").stream_handles.at(pos); }
void* PlanBase::device_data(std::size_t pos) const { return live(impl_, "cush::Plan::segment").data.at(pos); }

void PlanBase::wait() const {
  // Every device even if one failed, then the first failure, after finishing the devices.
  if (impl_) detail::synchronize_all(impl_->devices.ids(), impl_->stream_handles);
}

bool PlanBase::done() const {
  if (!impl_) return true;
  // A failed query throws as a failed wait() does: after the devices have finished (promise 2).
  return detail::finishing_on_error(impl_->devices.ids(), [&] {
    for (std::size_t pos = 0; pos < impl_->stream_handles.size(); ++pos)
      if (!detail::stream_idle(impl_->stream_handles[pos], "plan stream", impl_->devices[pos])) return false;
    return true;
  });
}

void PlanBase::after(const PlanBase& other) {
  Impl& mine = live(impl_, "cush::Plan::after");
  Impl& theirs = live(other.impl_, "cush::Plan::after");
  for (std::size_t pos = 0; pos < mine.devices.size(); ++pos) {
    const int id = mine.devices[pos];
    for (std::size_t q = 0; q < theirs.devices.size(); ++q) {
      if (theirs.devices[q] != id || theirs.stream_handles[q] == mine.stream_handles[pos]) continue;
      // Event 0 of `other`'s lane: a wait binds to the record made just before it, so reuse by
      // a later operation is safe.
      const cudaEvent_t e = theirs.lanes.event(q, 0);
      CUSH_CUDA_CHECK(cudaEventRecord(e, theirs.stream_handles[q]));
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(mine.stream_handles[pos], e, 0));
    }
  }
}

void PlanBase::check_part(std::size_t first, std::size_t count, const char* where) const {
  if (count == 0) throw InvalidArgument(where, "part", "is empty");
  if (first >= size() || count > size() - first)
    throw InvalidArgument(where, "first",
                          "elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                              ") do not fit in the plan's " + std::to_string(size()) + " elements");
}

namespace {
template <class Impl>
void check_host(const std::unique_ptr<Impl>& impl, const void* host, const char* where) {
  (void)live(impl, where);
  if (host == nullptr) throw InvalidArgument(where, "host", "null pointer");
}
}  // namespace

void PlanBase::scatter_bytes(const void* host, Range part, const char* where) {
  check_host(impl_, host, where);
  if (impl_->layout.is_replicated()) {
    broadcast_bytes(host, part, where);
    return;
  }
  detail::execute(scatter_transfers(impl_->layout, part), impl_->context(host, nullptr));
}

void PlanBase::gather_bytes(void* host, Range part, const char* where) {
  check_host(impl_, host, where);
  detail::execute(gather_transfers(impl_->layout, part), impl_->context(nullptr, host));
}

Range PlanBase::slice_range(std::size_t pos, Slice s) const {
  return live(impl_, "cush::Plan::segment").layout.slice(pos, s, impl_->distribution.granularity());
}

void PlanBase::scatter_slice_bytes(const void* host, Slice s, const char* where) {
  check_host(impl_, host, where);
  detail::check_slice(s, where);
  const std::size_t granularity = impl_->distribution.granularity();
  if (impl_->layout.is_replicated()) {
    const Range r = impl_->layout.slice(0, s, granularity);
    if (!r.empty()) broadcast_bytes(static_cast<const char*>(host) + r.offset * impl_->element_size, r, where);
    return;
  }
  detail::execute(scatter_transfers(impl_->layout, s, granularity), impl_->context(host, nullptr));
}

void PlanBase::gather_slice_bytes(void* host, Slice s, const char* where) {
  check_host(impl_, host, where);
  detail::check_slice(s, where);
  detail::execute(gather_transfers(impl_->layout, s, impl_->distribution.granularity()),
                  impl_->context(nullptr, host));
}

void PlanBase::broadcast_bytes(const void* host, Range part, const char* where) {
  check_host(impl_, host, where);
  if (!impl_->layout.is_replicated())
    throw InvalidArgument(where, "plan",
                          "a broadcast needs every device to hold the whole extent: create the plan with "
                          "Distribution::replicated() (this one is " + impl_->distribution.name() + ")");
  const std::size_t es = impl_->element_size;
  BroadcastOptions options;
  options.use_peers = impl_->devices.size() > 1 && impl_->devices.topology().all_peer_access() &&
                      part.count * es >= host_split_broadcast_min_bytes;
  // From pageable memory the staging pipeline is the bottleneck; one share per device keeps it
  // running without restarts, and the peer copies after it are short.
  const bool pinned = is_pinned(host, part.count * es);
  options.chunk = pinned ? std::max<std::size_t>(1, host_split_broadcast_chunk_bytes / es) : 0;
  if (options.use_peers) impl_->devices.enable_peer_access();
  detail::execute(broadcast_transfers(impl_->layout, part, options), impl_->context(host, nullptr));
}

void PlanBase::pin_host_bytes(const void* host, std::size_t bytes) {
  check_host(impl_, host, "cush::Plan::pin_host");
  impl_->pinned_hosts.emplace_back(host, bytes);
}

}  // namespace cush
