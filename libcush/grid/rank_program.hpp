#pragma once
// The halo exchange of a grid whose blocks belong to several processes (MPI ranks): each rank's
// share of the exchange program (exchange_program.hpp). Steps between two blocks of one rank stay
// as they are; a copy from a block of one rank to a block of another becomes a transfer: the
// sender sends a run of cells from its buffer, the receiver receives it into its own (NCCL
// send/receive on GPUs, MPI on host arrays). Pure host code: every rank computes the same global
// program from the same decomposition and keeps its part, so the two ends of a transfer agree on
// its tag and size without a message.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "grid/exchange_program.hpp"

namespace cush::detail {

/// One end of a copy between two ranks: `cells` cells, one run, from the sender's buffer at
/// `side` (a send) or into the receiver's at `side` (a receive). `tag` numbers the copy in the
/// global program, the same on both ends.
struct RankTransfer {
  std::size_t tag = 0;
  int peer = 0;         ///< the rank at the other end
  std::size_t block = 0;  ///< the block of this rank whose device (stream) the transfer runs on
  StepSide side;
  std::size_t cells = 0;
  std::size_t peer_block = 0;  ///< the block at the other end (its device is NCCL rank peer_block)
};

/// One phase of one rank: its `sends` (packs, copies within the rank) run first, then the
/// `outgoing` transfers leave and the `incoming` ones arrive, every receiver of the rank waits for
/// its senders within the rank (`links`), then its `receives` (unpacks) run.
struct RankPhase {
  std::size_t axis = 0;
  std::vector<ExchangeStep> sends;
  std::vector<RankTransfer> outgoing;
  std::vector<RankTransfer> incoming;
  std::vector<std::pair<std::size_t, std::size_t>> links;  // both blocks on this rank
  std::vector<ExchangeStep> receives;
};

struct RankProgram {
  int rank = 0;
  std::vector<RankPhase> phases;
  /// As ExchangeProgram's, over the global message numbers; 0 for the messages whose staging
  /// buffers are not on this rank.
  std::vector<std::size_t> send_cells;
  std::vector<std::size_t> recv_cells;
  std::vector<std::pair<std::size_t, std::size_t>> ends;
};

/// Throws InvalidArgument unless `block_rank` gives each of `blocks` blocks a rank in [0, ranks).
void check_block_ranks(std::span<const int> block_rank, std::size_t blocks, int ranks);

/// The exchange program of `grid` whose block k belongs to rank block_rank[k]: exchange_program()
/// with no pack into another rank's memory (`pack_to_peer` is asked only for blocks of one rank).
[[nodiscard]] ExchangeProgram exchange_program_over_ranks(const Decomposition& grid, std::span<const int> block_rank,
                                                          const PeerStores& pack_to_peer = {},
                                                          const HaloComponents& which = HaloComponents::all(1));

/// Rank `rank`'s part of `program` (made by exchange_program_over_ranks with the same
/// `block_rank`). Throws std::logic_error if a step between two ranks is not one linear copy.
[[nodiscard]] RankProgram rank_program(const ExchangeProgram& program, std::span<const int> block_rank, int rank);

}  // namespace cush::detail
