#pragma once
// The state of a plan, shared by plan.cpp and device_ops.cpp (not an installed header).

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "host/executor.hpp"
#include "core/peer_access.hpp"
#include "core/stream_set.hpp"
#include "ops/op_streams.hpp"
#include "transports/resources.hpp"
#include "cush/device_buffer.hpp"
#include "cush/error.hpp"
#include "cush/host_memory.hpp"
#include "cush/plan.hpp"
#include "cush/stream.hpp"

namespace cush {

struct PlanBase::Impl {
  Impl(DeviceSet d, const Distribution& dist, Layout l, std::size_t es, std::shared_ptr<const detail::StreamSet> s)
      : devices(std::move(d)),
        distribution(dist),
        layout(std::move(l)),
        element_size(es),
        lanes(devices.ids()),
        streams(std::move(s)),
        stream_handles(streams->handles().begin(), streams->handles().end()) {
    detail::hold_shared_pools();
  }
  // The streams may be shared or the caller's: wait for them before anything is freed. Then, if
  // this was the last plan, the staging memory that cush's pools keep goes back to the system.
  ~Impl() {
    detail::synchronize_noexcept(stream_handles);
    detail::drop_shared_pools();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  DeviceSet devices;
  Distribution distribution;
  Layout layout;
  std::size_t element_size;
  // Destroyed in reverse order, after the destructor waited for the streams: the plan's own
  // auxiliary streams finish, then buffers are freed, then host registrations released.
  std::vector<HostRegistration> pinned_hosts;
  // What the transports keep for this plan (communicators, peer_kernel groups, staging slots).
  detail::TransportResources transport_resources;
  // The device pairs a reduction moves data between, by (all-reduce?, root): computed once,
  // since the layout never changes (the transport choice needs them on every call).
  std::map<std::pair<bool, std::size_t>, std::vector<std::pair<int, int>>> reduce_links;
  std::vector<DeviceBuffer> buffers;
  detail::Lanes lanes;
  std::shared_ptr<const detail::StreamSet> streams;  // shared by plans made alike
  std::vector<cudaStream_t> stream_handles;          // streams->handles()
  std::vector<void*> data;

  detail::Endpoint endpoint() {
    return detail::Endpoint{devices.ids(), data, stream_handles, &lanes, &layout, element_size, &transport_resources};
  }

  detail::ExecutionContext context(const void* src, void* dst) {
    detail::ExecutionContext c;
    c.element_size = element_size;
    c.host_src = src;
    c.host_dst = dst;
    c.device_ids = devices.ids();
    c.device_data = data;
    c.streams = stream_handles;
    c.lanes = &lanes;
    return c;
  }
};

namespace detail {
/// The way in for the GPU<->GPU operations.
struct PlanAccess {
  using Impl = PlanBase::Impl;
  static PlanBase::Impl& impl(const PlanBase& plan) {
    if (!plan.impl_) throw InvalidArgument("cush", "plan", "was moved from");
    return *plan.impl_;
  }
};
}  // namespace detail

}  // namespace cush
