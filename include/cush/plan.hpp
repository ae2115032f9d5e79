#pragma once
/// @file plan.hpp
/// @brief A plan: a host extent mapped onto a set of GPUs, with the device buffers it owns.
///
/// Every operation is asynchronous: it enqueues work on the plan's stream of each device and
/// returns. Work that the caller enqueues on those streams later (Segment::stream(), for_each)
/// sees the operation's result; the host sees it after wait(). Until then the caller must not
/// modify a host buffer being read, nor read one being written.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>

#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/distribution.hpp"
#include "cush/layout.hpp"
#include "cush/segment.hpp"
#include "cush/stream.hpp"

namespace cush {

namespace detail {
struct PlanAccess;
class StreamSet;
[[noreturn]] void throw_size_mismatch(std::size_t got, std::size_t expected, const char* where);
}

/// @brief The type-independent part of a plan (see Plan<T>).
class PlanBase {
 public:
  PlanBase(PlanBase&&) noexcept;
  PlanBase& operator=(PlanBase&&) noexcept;
  PlanBase(const PlanBase&) = delete;
  PlanBase& operator=(const PlanBase&) = delete;
  /// Waits for the plan's work, then frees its device buffers and streams.
  ~PlanBase();

  /// A moved-from plan may be destroyed, assigned to, asked size() (0), done() (true) and
  /// waited for (it returns at once); anything else throws InvalidArgument ("this").
  [[nodiscard]] const DeviceSet& devices() const;
  [[nodiscard]] const Distribution& distribution() const;
  [[nodiscard]] const Layout& layout() const;
  /// Elements in the host extent (0 for a moved-from plan).
  [[nodiscard]] std::size_t size() const noexcept;
  /// The plan's stream on the device at position `pos` of the set.
  [[nodiscard]] cudaStream_t stream(std::size_t pos) const;
  /// Blocks until every operation and every kernel enqueued on the plan's streams is done.
  /// Throws CudaError if any of that work failed, after every device of the plan has finished
  /// all its work (other plans' too), so that unwinding may free host buffers.
  void wait() const;
  /// True if all work on the plan's streams is done (does not block). Throws CudaError if any of
  /// it failed, after every device of the plan has finished all its work (as wait() does).
  [[nodiscard]] bool done() const;
  /// Orders this plan's stream on every device it shares with `other` after the work enqueued so
  /// far on `other`'s stream there. Does not block the host. Use it before enqueuing work on this
  /// plan's streams that reads `other`'s segments (a kernel that combines several plans); the
  /// caller keeps `other` alive and unmodified until that work is done, or orders `other` after
  /// this plan in turn. Devices of `other` that this plan lacks are ignored.
  void after(const PlanBase& other);

 protected:
  PlanBase(DeviceSet devices, std::size_t n, std::size_t element_size, const Distribution& distribution,
           const char* where);
  PlanBase(DeviceSet devices, std::size_t n, std::size_t element_size, const Distribution& distribution,
           std::span<const StreamRef> streams, const char* where);
  PlanBase(const PlanBase& like, std::size_t n, std::size_t element_size, const Distribution& distribution,
           const char* where);
  [[nodiscard]] void* device_data(std::size_t pos) const;
  void scatter_bytes(const void* host, Range part, const char* where);
  void scatter_slice_bytes(const void* host, Slice s, const char* where);
  void gather_slice_bytes(void* host, Slice s, const char* where);
  [[nodiscard]] Range slice_range(std::size_t pos, Slice s) const;
  void gather_bytes(void* host, Range part, const char* where);
  void broadcast_bytes(const void* host, Range part, const char* where);
  void pin_host_bytes(const void* host, std::size_t bytes);
  void check_part(std::size_t first, std::size_t count, const char* where) const;

 private:
  friend struct detail::PlanAccess;
  struct Impl;
  void allocate(DeviceSet devices, const Distribution& distribution, Layout layout, std::size_t element_size,
                std::shared_ptr<const detail::StreamSet> streams, const char* where);
  std::unique_ptr<Impl> impl_;
};

/// @brief n elements of T spread over a device set by a distribution.
///
/// @code
/// cush::Plan<float> plan(cush::DeviceSet::all(), n);   // uniform over every GPU
/// plan.scatter(host_in);
/// plan.for_each([](cush::Segment<float> s) {
///   scale<<<blocks(s.size()), 256, 0, s.stream()>>>(s.data(), s.size());
/// });
/// plan.gather(host_out);
/// plan.wait();
/// @endcode
///
/// Construction checks every argument before allocating anything. If a device lacks the memory,
/// whatever was allocated is freed and OutOfMemory names the device, the bytes needed and free.
/// Host buffers may be pinned (fastest), registered (HostRegistration, pin_host) or ordinary
/// pageable memory (staged; see host_memory.hpp).
template <class T>
class Plan : public PlanBase {
  static_assert(std::is_trivially_copyable_v<T>, "a plan moves its elements as bytes");

 public:
  /// @param devices      the GPUs, in segment order
  /// @param n            elements in the host extent (> 0)
  /// @param distribution how to divide them (default: uniform)
  Plan(DeviceSet devices, std::size_t n, const Distribution& distribution = Distribution::uniform())
      : PlanBase(std::move(devices), n, sizeof(T), distribution, "cush::Plan") {}

  /// A plan whose operations run on the caller's streams: streams[i] is a created stream (not
  /// the default stream) of devices[i]. cush never destroys them; they must outlive the plan,
  /// whose destruction waits for them. Work the caller enqueues on them is ordered with the
  /// plan's operations, as on stream(pos). InvalidArgument, before anything is allocated, for a
  /// wrong count, a default stream or a stream of another device.
  Plan(DeviceSet devices, std::size_t n, const Distribution& distribution, std::span<const StreamRef> streams)
      : PlanBase(std::move(devices), n, sizeof(T), distribution, streams, "cush::Plan") {}

  /// A new plan of n elements (of any distribution) on the devices and streams of `like`, a plan
  /// of any element type: their operations and kernels on a device are ordered as enqueued,
  /// without after(). The streams live as long as either plan.
  /// `auto out = cush::Plan<float>::alike(in, n);`
  [[nodiscard]] static Plan alike(const PlanBase& like, std::size_t n,
                                  const Distribution& distribution = Distribution::uniform()) {
    return Plan(like, n, distribution, Alike{});
  }

  /// The segment of the device at position `pos` of the set.
  [[nodiscard]] Segment<T> segment(std::size_t pos) const {
    const Range& r = layout().segment(pos);
    return Segment<T>(static_cast<T*>(device_data(pos)), r.count, r.offset, devices()[pos], pos, stream(pos));
  }

  /// Slice `s` of the segment at position `pos`: a view of that part of the segment's memory,
  /// on the same device and stream (see Slice; parts keep the distribution's granules whole).
  [[nodiscard]] Segment<T> segment(std::size_t pos, Slice s) const {
    const Range r = slice_range(pos, s);
    const std::size_t skip = r.offset - layout().segment(pos).offset;
    T* base = static_cast<T*>(device_data(pos));
    return Segment<T>(r.count > 0 ? base + skip : nullptr, r.count, r.offset, devices()[pos], pos, stream(pos));
  }

  /// Calls f(Segment<T>) for every non-empty segment, with that segment's device current.
  template <class F>
  void for_each(F&& f) {
    for (std::size_t pos = 0; pos < devices().size(); ++pos) {
      const Segment<T> s = segment(pos);
      if (s.empty()) continue;
      DeviceGuard guard(s.device());
      f(s);
    }
  }

  /// Host -> devices, all n elements from `host` (which must hold size() elements).
  /// Like every move it returns at once and reads `host` afterwards, pageable memory included:
  /// keep `host` allocated and unchanged until the move is done (wait(), or work ordered after it).
  void scatter(const T* host) { scatter_bytes(host, Range{0, size()}, "cush::Plan::scatter"); }
  void scatter(std::span<const T> host) { scatter_bytes(whole(host, "cush::Plan::scatter"), Range{0, size()}, "cush::Plan::scatter"); }
  /// Host -> devices for global elements [first, first + part.size()) only; part[0] is element `first`.
  void scatter(std::span<const T> part, std::size_t first) {
    check_part(first, part.size(), "cush::Plan::scatter");
    scatter_bytes(part.data(), Range{first, part.size()}, "cush::Plan::scatter");
  }

  /// Host -> devices for slice `s` of every segment only. `host` is the whole host extent
  /// (size() elements); only the slice's elements are read. Successive slices on the plan's
  /// streams run one after the other, so a kernel on another plan's streams ordered after()
  /// this plan can start on slice i while slice i + 1 is still moving (a pipeline).
  void scatter(const T* host, Slice s) { scatter_slice_bytes(host, s, "cush::Plan::scatter"); }

  /// Devices -> host, all n elements into `host` (which must hold size() elements).
  void gather(T* host) { gather_bytes(host, Range{0, size()}, "cush::Plan::gather"); }
  void gather(std::span<T> host) { gather_bytes(whole(host, "cush::Plan::gather"), Range{0, size()}, "cush::Plan::gather"); }
  /// Devices -> host for global elements [first, first + part.size()) only.
  void gather(std::span<T> part, std::size_t first) {
    check_part(first, part.size(), "cush::Plan::gather");
    gather_bytes(part.data(), Range{first, part.size()}, "cush::Plan::gather");
  }

  /// Devices -> host for slice `s` of every segment only; `host` is the whole host extent.
  void gather(T* host, Slice s) { gather_slice_bytes(host, s, "cush::Plan::gather"); }

  /// Host -> every device: the whole host buffer to each replica. Needs a replicated plan
  /// (Distribution::replicated()). With peer access, each device reads a share over its own
  /// host link and the devices exchange shares over their peer links.
  void broadcast(const T* host) { broadcast_bytes(host, Range{0, size()}, "cush::Plan::broadcast"); }
  void broadcast(std::span<const T> host) {
    broadcast_bytes(whole(host, "cush::Plan::broadcast"), Range{0, size()}, "cush::Plan::broadcast");
  }
  /// Host -> every replica, for global elements [first, first + part.size()) only.
  void broadcast(std::span<const T> part, std::size_t first) {
    check_part(first, part.size(), "cush::Plan::broadcast");
    broadcast_bytes(part.data(), Range{first, part.size()}, "cush::Plan::broadcast");
  }

  /// Page-locks `host` for the plan's lifetime, so that every later move from or to it is a
  /// direct copy. `host` must stay allocated until the plan is destroyed.
  void pin_host(std::span<const T> host) { pin_host_bytes(host.data(), host.size_bytes()); }

 private:
  struct Alike {};
  Plan(const PlanBase& like, std::size_t n, const Distribution& distribution, Alike)
      : PlanBase(like, n, sizeof(T), distribution, "cush::Plan::alike") {}
  template <class U>
  U* whole(std::span<U> host, const char* where) const {
    if (host.size() != size()) detail::throw_size_mismatch(host.size(), size(), where);
    return host.data();
  }
};

}  // namespace cush
