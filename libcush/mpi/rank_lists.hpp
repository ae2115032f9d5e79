#pragma once
// Transfer lists over the ranks of a process group: each rank's steps (host/rank_transfers.hpp),
// made once every rank has checked that all ranks computed the same list and give its positions
// the same ranks. Part of cush::mpi.

#include <cstdint>
#include <vector>

#include "cush/process_group.hpp"
#include "host/rank_transfers.hpp"

namespace cush::detail {

/// A number that differs, all but surely, between two different transfer lists.
[[nodiscard]] std::uint64_t list_fingerprint(const TransferList& list);

/// Rank group.rank()'s steps of `list`. Collective over the group: where two ranks pass another
/// list or other ranks for its positions or host buffer, or a rank the group lacks, every rank
/// throws InvalidArgument (never one left waiting for the others).
[[nodiscard]] std::vector<RankStep> rank_steps(const ProcessGroup& group, const TransferList& list, const RankMap& ranks);

}  // namespace cush::detail
