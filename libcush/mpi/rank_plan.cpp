#include "cush/rank_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cush/device_guard.hpp"
#include "cush/stream.hpp"
#include "cush/error.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/rank_layout.hpp"
#include "mpi/rank_nccl.hpp"
#include "mpi/together.hpp"
#include "transports/nccl_communicator.hpp"

namespace cush {

namespace {

// Messages of a plan's scatter or gather on the group's own communicator.
constexpr int tag = 0x6375;

}  // namespace

struct RankPlanBase::Impl {
  const ProcessGroup* group = nullptr;
  std::size_t n = 0;
  detail::RankLayout rank_layout;
  std::vector<Range> ranges;  // by rank
};

RankPlanBase::RankPlanBase(const ProcessGroup& group, std::size_t n, const Distribution& distribution, const char* where)
    : impl_(std::make_unique<Impl>()) {
  impl_->group = &group;
  impl_->n = n;
  // This rank's devices as its plan will use them: the group's list for this rank.
  std::vector<DeviceInfo> mine;
  const std::vector<int> ids = group.devices_of(group.rank());
  if (!ids.empty()) {
    const DeviceSet set(ids);
    mine.assign(set.topology().devices().begin(), set.topology().devices().end());
  }
  impl_->rank_layout = detail::rank_layout(group, n, distribution, mine);
  const Layout& layout = impl_->rank_layout.layout;
  for (int r = 0; r < group.size(); ++r) {
    std::size_t first = 0, count = 0;
    bool any = false;
    for (std::size_t pos = 0; pos < layout.devices(); ++pos) {
      if (impl_->rank_layout.pos_rank[pos] != r) continue;
      const Range& s = layout.segment(pos);
      if (layout.is_replicated()) {
        first = 0;
        count = n;
        break;
      }
      if (!any) first = s.offset;
      any = true;
      count += s.count;
    }
    impl_->ranges.push_back(Range{first, count});
  }
  (void)where;
}

RankPlanBase::RankPlanBase(RankPlanBase&&) noexcept = default;
RankPlanBase& RankPlanBase::operator=(RankPlanBase&&) noexcept = default;
RankPlanBase::~RankPlanBase() = default;

const RankPlanBase::Impl& RankPlanBase::impl() const {
  if (!impl_) throw InvalidArgument("cush::RankPlan", "this", "a moved-from plan over ranks");
  return *impl_;
}

const ProcessGroup& RankPlanBase::group() const { return *impl().group; }
std::size_t RankPlanBase::size() const noexcept { return impl_ ? impl_->n : 0; }
const Layout& RankPlanBase::layout() const { return impl().rank_layout.layout; }
std::span<const int> RankPlanBase::position_ranks() const { return impl().rank_layout.pos_rank; }
Range RankPlanBase::local_range() const { return impl().ranges[static_cast<std::size_t>(impl().group->rank())]; }

Range RankPlanBase::range_of(int rank) const {
  if (rank < 0 || rank >= impl().group->size())
    throw InvalidArgument("cush::RankPlan::range_of", "rank", std::to_string(rank) + " is not a rank of the group");
  return impl().ranges[static_cast<std::size_t>(rank)];
}

Distribution RankPlanBase::local_distribution() const {
  if (layout().is_replicated()) return Distribution::replicated();
  std::vector<std::size_t> counts;
  for (std::size_t pos : impl().rank_layout.local) counts.push_back(layout().segment(pos).count);
  return Distribution::custom([counts](std::size_t, std::span<const DeviceInfo>) { return counts; },
                              "this rank's part of a plan over ranks");
}

void RankPlanBase::check_root(const void* host, int root, const char* where) const {
  detail::check_root(*impl().group, host, impl().n > 0, root, where);
}

void RankPlanBase::distribute(const void* host, void* into, std::size_t element_size, int root) const {
  const ProcessGroup& g = *impl().group;
  std::vector<MPI_Request> requests;
  if (g.rank() == root) {
    for (int r = 0; r < g.size(); ++r) {
      const Range part = impl().ranges[static_cast<std::size_t>(r)];
      if (r == root || part.count == 0) continue;
      detail::send_bytes(static_cast<const std::byte*>(host) + part.offset * element_size, part.count * element_size, r, tag, g.comm(), requests);
    }
  } else if (local_range().count > 0) {
    detail::receive_bytes(into, local_range().count * element_size, root, tag, g.comm(), requests);
  }
  detail::wait_for_ranks(requests, g.comm(), "cush::RankPlan::scatter");
}

void RankPlanBase::collect(const void* from, void* host, std::size_t element_size, int root) const {
  const ProcessGroup& g = *impl().group;
  // Who sends to the root: every other rank its part; replicated, one rank the whole extent
  // (none if the root holds it).
  std::vector<int> senders;
  if (layout().is_replicated()) {
    if (impl().ranges[static_cast<std::size_t>(root)].count == 0)
      for (int r = 0; r < g.size(); ++r)
        if (impl().ranges[static_cast<std::size_t>(r)].count > 0) {
          senders.push_back(r);
          break;
        }
  } else {
    for (int r = 0; r < g.size(); ++r)
      if (r != root && impl().ranges[static_cast<std::size_t>(r)].count > 0) senders.push_back(r);
  }
  std::vector<MPI_Request> requests;
  if (g.rank() == root) {
    for (int r : senders) {
      const Range part = impl().ranges[static_cast<std::size_t>(r)];
      detail::receive_bytes(static_cast<std::byte*>(host) + part.offset * element_size, part.count * element_size, r, tag, g.comm(), requests);
    }
  } else if (std::find(senders.begin(), senders.end(), g.rank()) != senders.end()) {
    detail::send_bytes(from, local_range().count * element_size, root, tag, g.comm(), requests);
  }
  detail::wait_for_ranks(requests, g.comm(), "cush::RankPlan::gather");
}

namespace {

// The NCCL calls of one operation, one per device of this rank, in one group; `call(k)` makes
// the k-th. A failure aborts nothing here: the communicator is the group's, and a rank whose
// group failed cannot tell the others (they wait in NCCL); the error says so.
template <class Call>
void nccl_group(const detail::RankNccl& nccl, std::span<void* const> data, Call&& call, const char* where) {
  if (data.size() != nccl.devices().size())
    throw Error(std::string(where) + ": this rank has " + std::to_string(data.size()) + " replicas for " +
                std::to_string(nccl.devices().size()) + " devices");
  ncclResult_t status = ncclGroupStart();
  if (status != ncclSuccess) detail::throw_nccl(status, "ncclGroupStart", __FILE__, __LINE__);
  for (std::size_t k = 0; k < data.size() && status == ncclSuccess; ++k) {
    const DeviceGuard guard(nccl.devices()[k]);
    status = call(k);
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (status == ncclSuccess) status = ended;
  if (status != ncclSuccess) detail::throw_nccl(status, where, __FILE__, __LINE__);
}

}  // namespace

void RankPlanBase::replicas_all_reduce(std::span<void* const> data, std::span<const cudaStream_t> streams,
                                       ElementType type, ReduceOp op, const char* where) const {
  if (!layout().is_replicated())
    throw InvalidArgument(where, "this", "an all-reduce over ranks needs a replicated plan (Distribution::replicated())");
  if (size() == 0) return;
  const detail::RankNccl& nccl = detail::group_nccl(group());
  nccl_group(nccl, data, [&](std::size_t k) {
    return ncclAllReduce(data[k], data[k], size(), detail::nccl_type(type), detail::nccl_op(op), nccl.comm(k), streams[k]);
  }, where);
}

// The NCCL rank of `root`'s first device, after checking (collectively) that `root` is the same
// on every rank and has devices, and that the plan is replicated.
std::size_t RankPlanBase::nccl_root(int root, const char* where, const char* operation) const {
  const ProcessGroup& g = group();
  g.agree(where, "the root", static_cast<std::uint64_t>(static_cast<std::int64_t>(root)));
  if (root < 0 || root >= g.size() || g.devices_of(root).empty())
    throw InvalidArgument(where, "root", std::to_string(root) + " is not a rank with devices in the group");
  if (!layout().is_replicated())
    throw InvalidArgument(where, "this", std::string("a ") + operation + " over ranks needs a replicated plan (Distribution::replicated())");
  std::size_t from = 0;  // the devices of the ranks before it
  for (const RankDevice& d : g.devices())
    if (d.rank < root) ++from;
  return from;
}

void RankPlanBase::replicas_broadcast(std::span<void* const> data, std::span<const cudaStream_t> streams,
                                      std::size_t element_size, int root, const char* where) const {
  const std::size_t from = nccl_root(root, where, "broadcast");
  if (size() == 0) return;
  const detail::RankNccl& nccl = detail::group_nccl(group());
  const std::size_t bytes = size() * element_size;
  nccl_group(nccl, data, [&](std::size_t k) {
    return ncclBroadcast(data[k], data[k], bytes, ncclUint8, static_cast<int>(from), nccl.comm(k), streams[k]);
  }, where);
}

void RankPlanBase::replicas_reduce(std::span<void* const> data, std::span<const cudaStream_t> streams, ElementType type,
                                   ReduceOp op, int root, const char* where) const {
  const std::size_t to = nccl_root(root, where, "reduce");
  if (size() == 0) return;
  const detail::RankNccl& nccl = detail::group_nccl(group());
  nccl_group(nccl, data, [&](std::size_t k) {
    return ncclReduce(data[k], data[k], size(), detail::nccl_type(type), detail::nccl_op(op), static_cast<int>(to),
                      nccl.comm(k), streams[k]);
  }, where);
}

void RankPlanBase::replicas_all_gather(const RankPlanBase& parts, std::span<void* const> src,
                                       std::span<const cudaStream_t> src_streams, std::span<void* const> dst,
                                       std::span<const cudaStream_t> streams, std::size_t element_size,
                                       const char* where) const {
  // The same answers on every rank: the layouts and sizes were agreed when the plans were made.
  if (&parts.group() != &group()) throw InvalidArgument(where, "parts", "a plan over another process group");
  if (parts.size() != size())
    throw InvalidArgument(where, "parts", std::to_string(parts.size()) + " elements, this plan " + std::to_string(size()));
  if (!layout().is_replicated())
    throw InvalidArgument(where, "this", "an all-gather over ranks gathers into a replicated plan (Distribution::replicated())");
  if (parts.layout().is_replicated()) throw InvalidArgument(where, "parts", "a replicated plan: every rank has it all already");
  if (size() == 0) return;
  const detail::RankNccl& nccl = detail::group_nccl(group());
  // This plan's streams wait for the work on parts' (its segments are read from there).
  for (std::size_t k = 0; k < streams.size() && k < src_streams.size(); ++k) {
    const DeviceGuard guard(nccl.devices()[k]);
    const Event done(nccl.devices()[k]);
    done.record(src_streams[k]);
    done.wait_in(streams[k]);
  }
  // One broadcast per segment of parts, from its device (NCCL rank = its position) to every
  // replica, all in one group.
  const Layout& from = parts.layout();
  ncclResult_t status = ncclGroupStart();
  if (status != ncclSuccess) detail::throw_nccl(status, "ncclGroupStart", __FILE__, __LINE__);
  for (std::size_t pos = 0; pos < from.devices() && status == ncclSuccess; ++pos) {
    const Range seg = from.segment(pos);
    if (seg.count == 0) continue;
    for (std::size_t k = 0; k < dst.size() && status == ncclSuccess; ++k) {
      const DeviceGuard guard(nccl.devices()[k]);
      const bool root = nccl.first_rank() + k == pos;
      status = ncclBroadcast(root ? src[k] : nullptr, static_cast<std::byte*>(dst[k]) + seg.offset * element_size,
                             seg.count * element_size, ncclUint8, static_cast<int>(pos), nccl.comm(k), streams[k]);
    }
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (status == ncclSuccess) status = ended;
  if (status != ncclSuccess) detail::throw_nccl(status, where, __FILE__, __LINE__);
}

}  // namespace cush
