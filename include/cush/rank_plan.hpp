#pragma once
/// @file rank_plan.hpp
/// @brief A plan over the GPUs of every rank of a process group: n elements spread by one
/// distribution over all ranks' GPUs, each process holding its own GPUs' segments (a Plan of its
/// own, for its kernels), with scatter from and gather to one root process's host buffer.
///
/// Needs MPI, like process_group.hpp (link cush::mpi).
///
///     cush::ProcessGroup group(MPI_COMM_WORLD, {local_gpu});
///     cush::RankPlan<float> x(group, n);             // uniform over every rank's GPUs
///     x.scatter(rank == 0 ? host.data() : nullptr, 0);
///     x.local().for_each([](cush::Segment<float> s) { kernel<<<..., s.stream()>>>(s.data(), s.size()); });
///     x.gather(rank == 0 ? host.data() : nullptr, 0);
///     x.wait();
///
/// The layout is the distribution over every rank's devices, rank 0's first, each rank's in the
/// order the group lists them (mpi/rank_layout.hpp): a distribution by memory capacity weighs
/// every GPU of every process. A rank's devices hold one contiguous range of the extent
/// (local_range()), so a scatter or gather moves one message per rank.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "cush/plan.hpp"
#include "cush/process_group.hpp"
#include "cush/reduce.hpp"

namespace cush {

/// @brief The type-independent part of a RankPlan.
class RankPlanBase {
 public:
  RankPlanBase(RankPlanBase&&) noexcept;
  RankPlanBase& operator=(RankPlanBase&&) noexcept;
  RankPlanBase(const RankPlanBase&) = delete;
  RankPlanBase& operator=(const RankPlanBase&) = delete;
  ~RankPlanBase();
  // A moved-from plan may be destroyed, assigned to and asked size() (0); anything else throws
  // InvalidArgument ("this").

  [[nodiscard]] const ProcessGroup& group() const;
  /// Elements in the whole extent (every rank's).
  [[nodiscard]] std::size_t size() const noexcept;
  /// The layout over every rank's devices (positions rank by rank).
  [[nodiscard]] const Layout& layout() const;
  /// The rank of each position of layout().
  [[nodiscard]] std::span<const int> position_ranks() const;
  /// The part of the extent this rank's devices hold (the whole extent if replicated; empty on
  /// a rank without devices).
  [[nodiscard]] Range local_range() const;
  /// The same for any rank.
  [[nodiscard]] Range range_of(int rank) const;

 protected:
  RankPlanBase(const ProcessGroup& group, std::size_t n, const Distribution& distribution, const char* where);
  /// This rank's local plan's distribution: the global layout's counts of its positions.
  [[nodiscard]] Distribution local_distribution() const;
  /// Checks the root (the same on every rank, a rank of the group) and the root's host pointer.
  void check_root(const void* host, int root, const char* where) const;
  /// Root: sends every other rank its part of `host`; elsewhere: receives this rank's part into
  /// `into` (local_range().count elements of `element_size` bytes). Blocks until the messages are
  /// done. Replicated: the whole extent to every rank.
  void distribute(const void* host, void* into, std::size_t element_size, int root) const;
  /// The reverse: every other rank sends its part (`from`) to the root, which receives it into
  /// `host`. Replicated: the lowest rank with devices sends the whole extent, unless the root has
  /// devices.
  void collect(const void* from, void* host, std::size_t element_size, int root) const;
  /// Collective, over NCCL (the group's communicator, made at the first such call): on a
  /// replicated plan, every replica of every rank becomes the combination of all (`data[k]`,
  /// `streams[k]`: this rank's k-th segment), or rank `root`'s first replica (broadcast).
  /// InvalidArgument on every rank for a plan that is not replicated, or a root that is not a
  /// rank with devices.
  void replicas_all_reduce(std::span<void* const> data, std::span<const cudaStream_t> streams, ElementType type,
                           ReduceOp op, const char* where) const;
  void replicas_broadcast(std::span<void* const> data, std::span<const cudaStream_t> streams, std::size_t element_size,
                          int root, const char* where) const;
  /// Collective, over NCCL: `parts`' segments (`src[k]` on `src_streams[k]`, this rank's k-th
  /// device) into every replica of this plan (`dst[k]`, `streams[k]`).
  void replicas_all_gather(const RankPlanBase& parts, std::span<void* const> src, std::span<const cudaStream_t> src_streams,
                           std::span<void* const> dst, std::span<const cudaStream_t> streams, std::size_t element_size,
                           const char* where) const;
  /// Collective: `src`'s segments (`from[k]` on `from_streams[k]`, this rank's k-th device) to
  /// this plan's (`to[k]`, `streams[k]`) by the transfer list of a copy (element g to element g)
  /// or, with `all_to_all`, of cush::all_to_all's block transpose: copies within this rank on the
  /// destination's streams, NCCL sends and receives between ranks in one group call.
  void rank_copy(const RankPlanBase& src, std::span<void* const> from, std::span<const cudaStream_t> from_streams,
                 std::span<void* const> to, std::span<const cudaStream_t> streams, std::size_t element_size,
                 bool all_to_all, const char* where) const;
  /// Collective, over NCCL: the combination of every replica of every rank into rank `root`'s
  /// first replica; the other replicas stay as they are.
  void replicas_reduce(std::span<void* const> data, std::span<const cudaStream_t> streams, ElementType type, ReduceOp op,
                       int root, const char* where) const;

 private:
  // nccl_root: the NCCL rank of `root`'s first device (checks as replicas_broadcast says).
  [[nodiscard]] std::size_t nccl_root(int root, const char* where, const char* operation) const;
  struct Impl;
  [[nodiscard]] const Impl& impl() const;
  std::unique_ptr<Impl> impl_;
};

/// @brief n elements of T over the GPUs of every rank (see the file comment).
template <class T>
class RankPlan : public RankPlanBase {
  static_assert(std::is_trivially_copyable_v<T>, "a plan moves its elements as bytes");

 public:
  /// Collective over the group. InvalidArgument on every rank where the ranks pass different n
  /// or distributions, or the distribution refuses the group's devices. The plan keeps a
  /// reference to `group`: the group must outlive the plan and stay where it is (not be moved
  /// from) while the plan exists.
  RankPlan(const ProcessGroup& group, std::size_t n, const Distribution& distribution = Distribution::uniform())
      : RankPlanBase(group, n, distribution, "cush::RankPlan") {
    if (local_range().count > 0)
      local_.emplace(DeviceSet(group.devices_of(group.rank())), local_range().count, local_distribution());
  }

  /// Whether this rank holds any of the extent.
  [[nodiscard]] bool has_local() const noexcept { return local_.has_value(); }
  /// This rank's segments as a plan of its own: element 0 of it is element local_range().offset
  /// of the extent. InvalidArgument on a rank without devices.
  [[nodiscard]] Plan<T>& local() {
    if (!local_) throw InvalidArgument("cush::RankPlan::local", "this", "this rank holds no device of the plan");
    return *local_;
  }

  /// Collective: the root's host buffer (size() elements; ignored elsewhere, may be null) to every
  /// rank's devices. Returns when the messages have arrived; the copies to the devices are on the
  /// local plan's streams (wait()). The root's buffer must stay until then, as for Plan::scatter.
  void scatter(const T* host, int root) {
    check_root(host, root, "cush::RankPlan::scatter");
    if (group().rank() == root) {
      distribute(host, nullptr, sizeof(T), root);
      if (local_) local_->scatter(host + (layout().is_replicated() ? 0 : local_range().offset));
      return;
    }
    if (!local_) {
      distribute(nullptr, nullptr, sizeof(T), root);
      return;
    }
    local_->wait();  // the staging buffer of the previous move is free again
    staging_.resize(local_range().count);
    distribute(nullptr, staging_.data(), sizeof(T), root);
    local_->scatter(staging_.data());
  }

  /// Collective: every rank's devices to the root's host buffer (size() elements; ignored
  /// elsewhere). Blocks until the root has every other rank's part; the root's own part lands on
  /// its local plan's streams (wait()).
  void gather(T* host, int root) {
    check_root(host, root, "cush::RankPlan::gather");
    if (group().rank() != root && local_) {
      local_->wait();  // the previous scatter has read the staging buffer
      staging_.resize(local_range().count);
      local_->gather(staging_.data());
      local_->wait();
    }
    collect(staging_.data(), host, sizeof(T), root);
    if (group().rank() == root && local_) local_->gather(host + (layout().is_replicated() ? 0 : local_range().offset));
  }

  /// Not collective: this rank's own part of the host extent (local_range().count elements,
  /// element 0 being element local_range().offset of the extent) to its devices, and back. For
  /// programs whose ranks each hold their part of the data; asynchronous, as Plan::scatter.
  /// Nothing on a rank without devices.
  void scatter_own(const T* part) {
    if (local_) local_->scatter(part);
  }
  void gather_own(T* part) {
    if (local_) local_->gather(part);
  }

  /// Collective, over NCCL between every rank's GPUs: on a replicated plan, every replica
  /// becomes the combination (`op`) of all replicas of all ranks; on this rank's streams, like
  /// cush::all_reduce on a Plan. InvalidArgument on every rank if the plan is not replicated.
  void all_reduce(ReduceOp op = ReduceOp::sum) {
    auto [data, streams] = local_segments();
    replicas_all_reduce(data, streams, element_type_of<T>(), op, "cush::RankPlan::all_reduce");
  }

  /// Collective, over NCCL: on a replicated plan, rank `root`'s first replica to every replica of
  /// every rank. InvalidArgument on every rank if the plan is not replicated or `root` has no
  /// device.
  void broadcast(int root) {
    auto [data, streams] = local_segments();
    replicas_broadcast(data, streams, sizeof(T), root, "cush::RankPlan::broadcast");
  }

  /// Collective, over NCCL: on a replicated plan, the combination (`op`) of every replica of
  /// every rank into rank `root`'s first replica (its first device's); every other replica stays
  /// as it is. InvalidArgument on every rank as for broadcast().
  void reduce(int root, ReduceOp op = ReduceOp::sum) {
    auto [data, streams] = local_segments();
    replicas_reduce(data, streams, element_type_of<T>(), op, root, "cush::RankPlan::reduce");
  }

  /// Collective, over NCCL: every replica of this replicated plan becomes the whole extent of
  /// `parts` (a plan over the same group and as many elements, not replicated): each segment of
  /// every rank is broadcast from its device to every replica, at its offset. This plan's streams
  /// wait for `parts`' work first. InvalidArgument on every rank for plans of another group or
  /// size, this plan not replicated, or `parts` replicated.
  void all_gather(const RankPlan<T>& parts) {
    auto [src, src_streams] = parts.local_segments();
    auto [dst, streams] = local_segments();
    replicas_all_gather(parts, src, src_streams, dst, streams, sizeof(T), "cush::RankPlan::all_gather");
  }

  /// Collective, over NCCL between the ranks' GPUs and copies within a rank: element g of `src`
  /// (a plan over the same group with as many elements, not this one) to element g of this plan,
  /// for every element. Any two distributions: a redistribution; into a replicated plan every
  /// replica receives everything (an all-gather); from a replicated plan each piece is read from
  /// one replica (a scatter among the GPUs). This plan's streams wait for `src`'s work first, and
  /// `src`'s streams wait for the copies that read it; on this rank's streams, like cush::copy.
  /// InvalidArgument on every rank for plans of different sizes.
  void copy_from(const RankPlan<T>& src) {
    auto [from, from_streams] = src.local_segments();
    auto [to, streams] = local_segments();
    rank_copy(src, from, from_streams, to, streams, sizeof(T), false, "cush::RankPlan::copy_from");
  }

  /// Collective, over NCCL: the all-to-all of cush::all_to_all from `src` into this plan (same
  /// group and size, neither replicated): piece (i, j) of src's segment i, s_i d_j / n elements
  /// (s, d: the segment sizes), goes to segment j, pieces in order of i: the block transpose of a
  /// matrix split by rows on both sides. InvalidArgument on every rank where a piece is not a whole
  /// number of elements.
  void all_to_all_from(const RankPlan<T>& src) {
    auto [from, from_streams] = src.local_segments();
    auto [to, streams] = local_segments();
    rank_copy(src, from, from_streams, to, streams, sizeof(T), true, "cush::RankPlan::all_to_all_from");
  }

  /// Waits for this rank's local work (not a collective).
  void wait() const {
    if (local_) local_->wait();
  }

 private:
  // This rank's segments' buffers (null where empty) and streams, one per device of this rank in
  // the group's order (none without devices).
  std::pair<std::vector<void*>, std::vector<cudaStream_t>> local_segments() const {
    std::pair<std::vector<void*>, std::vector<cudaStream_t>> out;
    if (!local_) return out;
    for (std::size_t pos = 0; pos < local_->devices().size(); ++pos) {
      const Segment<T> s = local_->segment(pos);
      out.first.push_back(s.data());
      out.second.push_back(s.stream());
    }
    return out;
  }

  // A rank's part between its devices and MPI. Declared first, so destroyed last: the local
  // plan's destructor waits for the copies that still read or write it.
  std::vector<T> staging_;
  std::optional<Plan<T>> local_;
};

}  // namespace cush
