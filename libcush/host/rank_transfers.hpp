#pragma once
/// @file rank_transfers.hpp
/// @brief A transfer list whose devices belong to several processes (MPI ranks): what each rank
/// runs. Pure host code.
///
/// The lists of transfer.hpp and device_transfers.hpp name positions in a plan's device set; over
/// ranks, position p's device is driven by rank pos_rank[p], and the host buffer of a scatter,
/// gather or broadcast is the root rank's. Every rank computes the same list from the same
/// layouts, so a copy between two ranks needs no message to describe it: it is a send on one and
/// a receive on the other, tagged with its index in the list.
///
/// The list runs in order, `after` respected. On one rank that means: a step that reads a
/// position's memory (a local copy or a send) waits for every earlier step that writes that
/// memory on this rank (a local copy, or a receive), and a step that writes it (a local copy, or
/// a receive when it lands) waits for every earlier step that reads it. This keeps the order the
/// list has where it matters and lets every other step run at once.

#include <cstddef>
#include <span>
#include <vector>

#include "host/transfer.hpp"

namespace cush::detail {

/// One step of one rank: a transfer of the list with both ends on this rank (`local`), its source
/// here and destination on `peer` (`send`), or its destination here and source on `peer`
/// (`receive`; a combine transfer combines what arrives into the destination).
struct RankStep {
  enum class Kind { local, send, receive };
  Kind kind = Kind::local;
  std::size_t index = 0;  ///< the transfer's index in the list: the message's tag
  int peer = -1;          ///< send and receive: the rank at the other end
  Transfer transfer;      ///< as listed (positions and offsets as in the list)
};

/// The rank driving each end of a transfer: pos_rank[pos] for a device position, `host_rank` for
/// the host buffer. Lists between two plans (copy_transfers) give each side its own ranks.
struct RankMap {
  std::span<const int> src;  ///< rank of each source position
  std::span<const int> dst;  ///< rank of each destination position
  int host_rank = 0;         ///< the rank whose host buffer a host end is
  [[nodiscard]] int of_src(const Location& l) const { return l.is_host() ? host_rank : src[static_cast<std::size_t>(l.pos)]; }
  [[nodiscard]] int of_dst(const Location& l) const { return l.is_host() ? host_rank : dst[static_cast<std::size_t>(l.pos)]; }
};

/// Rank `rank`'s steps of `list`, in list order. Throws InvalidArgument if a position has no
/// rank in `ranks` (or a negative one), std::logic_error if a transfer waits (`after`) for one
/// that delivers to a rank other than the two of the waiting transfer (its wait could not be kept
/// by the order rules above).
[[nodiscard]] std::vector<RankStep> rank_steps(const TransferList& list, const RankMap& ranks, int rank);

}  // namespace cush::detail
