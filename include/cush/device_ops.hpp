#pragma once
/// @file device_ops.hpp
/// @brief Operations among the GPUs of plans: copy, broadcast, scatter, gather, all-gather,
/// all-to-all, reduce and all-reduce (seed 002, Table 2.2).
///
/// Every operation is asynchronous and stream-ordered: on each device it takes part in, it
/// starts after the work already enqueued on the plans' streams there (both plans, if two), and
/// work enqueued afterwards on those streams sees its result. Nothing blocks the host; wait() on
/// a plan waits for it. The source plan's streams are ordered after the operation too, so that
/// a later kernel cannot overwrite data still being read.
///
/// Plans may live on different device subsets, in any order, with any distributions; elements
/// are matched by their global index in the extent. The transport (peer links, NCCL, staging
/// through host memory) is chosen per operation and size (transport.hpp) unless forced with
/// CommOptions. Arguments are checked before anything is enqueued (InvalidArgument).
///
/// @code
/// cush::Plan<float> rows(gpus, n);                 // row blocks
/// cush::Plan<float> cols(gpus, n);
/// cush::all_to_all(rows, cols);                    // block transpose
/// cush::Plan<double> sums(gpus, m, cush::Distribution::replicated());
/// cush::all_reduce(sums, cush::ReduceOp::sum);     // every replica = the sum of all
/// @endcode

#include <cstddef>
#include <span>
#include <vector>

#include "cush/layout.hpp"
#include "cush/plan.hpp"
#include "cush/reduce.hpp"
#include "cush/transport.hpp"

namespace cush {

namespace detail {
/// `root`: the source replica of a scatter, the destination replica of a gather; else unused.
void copy_plans(const PlanBase& src, PlanBase& dst, Range part, std::size_t root, Collective kind,
                const CommOptions& options, const char* where);
void copy_segment(const PlanBase& src, std::size_t src_pos, PlanBase& dst, std::size_t dst_pos,
                  const CommOptions& options, const char* where);
void all_to_all_plans(const PlanBase& src, PlanBase& dst, std::span<const std::size_t> counts,
                      const CommOptions& options, const char* where);
void broadcast_plan(PlanBase& plan, std::size_t root, const CommOptions& options, const char* where);
/// `all`: all-reduce (root unused).
void reduce_plan(PlanBase& plan, bool all, std::size_t root, ElementType type, ReduceOp op,
                 const CommOptions& options, const char* where);
}  // namespace detail

/// Device-to-device copy: element g of `src` to element g of `dst`, for the whole extent (both
/// plans have the same size). Any two distributions and device sets: a redistribution; into a
/// replicated `dst` every replica receives everything.
template <class T>
void copy(const Plan<T>& src, Plan<T>& dst, const CommOptions& options = {}) {
  detail::copy_plans(src, dst, Range{0, src.size()}, 0, Collective::copy, options, "cush::copy");
}

/// Device-to-device copy of global elements [first, first + count) only.
template <class T>
void copy(const Plan<T>& src, Plan<T>& dst, std::size_t first, std::size_t count, const CommOptions& options = {}) {
  detail::copy_plans(src, dst, Range{first, count}, 0, Collective::copy, options, "cush::copy");
}

/// Copies segment `src_pos` of `src` into segment `dst_pos` of `dst` (which must have the same
/// number of elements), whatever their global offsets.
template <class T>
void copy_segment(const Plan<T>& src, std::size_t src_pos, Plan<T>& dst, std::size_t dst_pos,
                  const CommOptions& options = {}) {
  detail::copy_segment(src, src_pos, dst, dst_pos, options, "cush::copy_segment");
}

/// Broadcast: the replica at position `root` of a replicated plan to every other replica.
template <class T>
void broadcast(Plan<T>& plan, std::size_t root = 0, const CommOptions& options = {}) {
  detail::broadcast_plan(plan, root, options, "cush::broadcast");
}

/// Device scatter: the data of the device at position `root` of `src` divided among the devices
/// of `dst` by dst's distribution. `src` is replicated, or its segment `root` is the whole extent
/// (e.g. a one-device plan).
template <class T>
void scatter(const Plan<T>& src, Plan<T>& dst, std::size_t root = 0, const CommOptions& options = {}) {
  detail::copy_plans(src, dst, Range{0, src.size()}, root, Collective::scatter, options,
                     "cush::scatter");
}

/// Device gather: every segment of `src` collected on the device at position `root` of `dst`,
/// which is replicated (only that replica is written) or whose segment `root` is the whole
/// extent.
template <class T>
void gather(const Plan<T>& src, Plan<T>& dst, std::size_t root = 0, const CommOptions& options = {}) {
  detail::copy_plans(src, dst, Range{0, src.size()}, root, Collective::gather, options,
                     "cush::gather");
}

/// All-gather: every segment of `src` to every replica of the replicated plan `dst`.
template <class T>
void all_gather(const Plan<T>& src, Plan<T>& dst, const CommOptions& options = {}) {
  detail::copy_plans(src, dst, Range{0, src.size()}, 0, Collective::all_gather, options, "cush::all_gather");
}

/// All-to-all, the block transpose: segment i of `src` is cut into pieces of s_i * d_j / n
/// elements (s, d the segment sizes; InvalidArgument unless each is a whole number), piece j goes
/// to segment j of `dst`, where the pieces from sources 0, 1, ... follow each other.
template <class T>
void all_to_all(const Plan<T>& src, Plan<T>& dst, const CommOptions& options = {}) {
  detail::all_to_all_plans(src, dst, {}, options, "cush::all_to_all");
}

/// All-to-all with explicit piece sizes: counts[i * q + j] elements from source segment i to
/// destination segment j (q = dst's device count); rows sum to the source segments, columns to
/// the destination segments (MPI_Alltoallv's layout, with contiguous pieces).
template <class T>
void all_to_all(const Plan<T>& src, Plan<T>& dst, std::span<const std::size_t> counts,
                const CommOptions& options = {}) {
  detail::all_to_all_plans(src, dst, counts, options, "cush::all_to_all");
}

/// Reduce, in place: the replica at `root` of a replicated plan becomes the element-wise
/// reduction of all replicas; the others are unchanged.
template <class T>
void reduce(Plan<T>& plan, ReduceOp op, std::size_t root = 0, const CommOptions& options = {}) {
  detail::reduce_plan(plan, false, root, element_type_of<T>(), op, options, "cush::reduce");
}

/// All-reduce, in place: every replica of a replicated plan becomes the element-wise reduction
/// of all replicas.
template <class T>
void all_reduce(Plan<T>& plan, ReduceOp op, const CommOptions& options = {}) {
  detail::reduce_plan(plan, true, 0, element_type_of<T>(), op, options, "cush::all_reduce");
}

}  // namespace cush
