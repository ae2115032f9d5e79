#pragma once
/// @file device_transfers.hpp
/// @brief What moves where in the GPU<->GPU operations. Pure host code, tested without GPUs.
///
/// Every function returns a TransferList whose `src.pos` indexes the source layout and whose
/// `dst.pos` indexes the destination layout (the same layout for broadcast and reductions).
/// Executing the list in order, with `after` respected, performs the operation; transfers
/// without a dependency between them may run concurrently. Device ids are needed only to prefer
/// copies within one GPU where a replica is already there.

#include <cstddef>
#include <span>
#include <vector>

#include "cush/layout.hpp"
#include "host/transfer.hpp"

namespace cush {

/// @brief Which replicas take part when a layout is replicated.
struct CopyRoots {
  /// If >= 0 and the source is replicated: read only that replica (device scatter).
  int source = -1;
  /// If >= 0 and the destination is replicated: write only that replica (device gather).
  int destination = -1;
};

/// Element g of the source (for g in `part`) to element g of the destination. Covers
/// redistribution between any two partitioned layouts, all-gather (partitioned -> replicated),
/// device scatter (replica -> partitioned) and device gather (partitioned -> one replica).
/// From a replicated source each piece is read from a replica on the same GPU if there is one.
/// Copies are listed by step: each device's k-th copy goes to the device k places after it (in
/// ascending id order), so no device receives from all the others at once.
[[nodiscard]] TransferList copy_transfers(const Layout& src, std::span<const int> src_ids, const Layout& dst,
                                          std::span<const int> dst_ids, Range part, CopyRoots roots = {});

/// The block counts of an all-to-all in which piece (i, j) = s_i * d_j / n elements, s and d the
/// segment sizes: the block transpose of a matrix split by rows on both sides (an R x C matrix
/// in row blocks r_i, to C x R in row blocks c_j, gives r_i * c_j). Row-major, src x dst.
/// Throws InvalidArgument if a piece is not a whole number of elements.
[[nodiscard]] std::vector<std::size_t> all_to_all_counts(const Layout& src, const Layout& dst);

/// All-to-all: source segment i is cut into consecutive pieces of counts[i * q + j] elements
/// (q destination devices); destination segment j receives pieces (0, j), (1, j), ... in that
/// order. Rows must sum to the source segments and columns to the destination segments.
[[nodiscard]] TransferList all_to_all_transfers(const Layout& src, const Layout& dst,
                                                std::span<const std::size_t> counts);

/// Broadcast `part` of replica `root` to every other replica. Without `split` (or on fewer than
/// three devices) the root copies the part to each replica. With `split` it relays along a chain:
/// the root sends the part to the next replica in rounds of at most `chunk` elements (0: one
/// round), and each replica forwards every round to the one after it as soon as it has landed
/// (`after`), so that the part leaves every device at most once and every link of the chain
/// carries one round at a time, all links at once.
[[nodiscard]] TransferList device_broadcast_transfers(const Layout& layout, std::size_t root, Range part,
                                                      bool split, std::size_t chunk = 0);

/// Reduce every replica into replica `root` (combine transfers, one per other replica, in
/// order); the other replicas are left unchanged.
[[nodiscard]] TransferList reduce_transfers(const Layout& layout, std::size_t root, Range part);

/// All-reduce in place: the extent is cut into one share per device (multiples of `granularity`
/// elements), each device reduces its share from all others, then sends it to all others.
[[nodiscard]] TransferList all_reduce_transfers(const Layout& layout, Range part, std::size_t granularity = 1);

}  // namespace cush
