#pragma once
// A grid whose blocks belong to the ranks of a process group: each rank's part of the exchange
// (grid/rank_program.hpp), made once every rank has checked that all ranks describe the same grid
// and give its blocks the same ranks. Part of cush::mpi.

#include <cstdint>
#include <span>

#include "cush/grid.hpp"
#include "cush/halo_components.hpp"
#include "cush/process_group.hpp"
#include "grid/rank_program.hpp"

namespace cush::detail {

/// A number that differs, all but surely, between two grids that differ in extent, dimensions,
/// blocks, halo depth, ghost layers, periodicity or row alignment.
[[nodiscard]] std::uint64_t grid_fingerprint(const Decomposition& grid);

/// The same for a list of block ranks.
[[nodiscard]] std::uint64_t ranks_fingerprint(std::span<const int> block_rank);

/// Rank group.rank()'s part of the exchange of `grid`, block k on rank block_rank[k] (ranks of
/// `group`). Collective over the group: where two ranks pass another grid, other block ranks or
/// other components, or the block ranks name a rank the group lacks, every rank throws
/// InvalidArgument (never one left waiting for the others).
[[nodiscard]] RankProgram rank_exchange_program(const ProcessGroup& group, const Decomposition& grid,
                                                std::span<const int> block_rank,
                                                const HaloComponents& which = HaloComponents::all(1));

}  // namespace cush::detail
