#pragma once
// A plan's layout over the GPUs of every rank of a process group: what a distribution gives over
// all ranks' devices, rank by rank, computed the same on every rank. Part of cush::mpi.

#include <cstddef>
#include <span>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/distribution.hpp"
#include "cush/layout.hpp"
#include "cush/process_group.hpp"

namespace cush::detail {

struct RankLayout {
  Layout layout;                   ///< over every rank's devices, rank 0's first (global positions)
  std::vector<int> pos_rank;       ///< the rank of each position
  std::vector<std::size_t> local;  ///< this rank's positions, in order
};

/// The layout of n elements by `distribution` over the devices of every rank of `group`; `mine`
/// are this rank's (any number, none included), in the order its plan will use them. Collective.
/// Every rank gets the same layout. InvalidArgument on every rank, never one left waiting, where
/// the ranks pass different n or distributions (by name), where the distribution refuses the
/// devices (no device on any rank, weights of the wrong count: the first refusing rank's message),
/// and where the ranks computed different layouts (a custom rule that depends on the rank).
[[nodiscard]] RankLayout rank_layout(const ProcessGroup& group, std::size_t n, const Distribution& distribution,
                                     std::span<const DeviceInfo> mine);

}  // namespace cush::detail
