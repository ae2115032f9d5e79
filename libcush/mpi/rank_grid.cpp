#include "mpi/rank_grid.hpp"

#include <cstddef>

#include "mpi/fingerprint.hpp"

namespace cush::detail {

std::uint64_t grid_fingerprint(const Decomposition& grid) {
  Fingerprint f;
  f.add(grid.dims());
  f.add(grid.depth());
  f.add(grid.row_align());
  for (std::size_t a = 0; a < 3; ++a) {
    f.add(grid.extent()[a]);
    f.add(grid.blocks()[a]);
    f.add(grid.halo(a));
    f.add(grid.periodic(a) ? 1 : 0);
  }
  return f.h;
}

std::uint64_t ranks_fingerprint(std::span<const int> block_rank) {
  Fingerprint f;
  f.add(block_rank.size());
  for (int r : block_rank) f.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(r)));
  return f.h;
}

namespace {

std::uint64_t components_fingerprint(const HaloComponents& which) {
  Fingerprint f;
  for (std::size_t axis = 0; axis < 3; ++axis)
    for (int dir : {-1, 1}) {
      f.add(0xf111);
      for (std::size_t c : which.filled(axis, dir)) f.add(c);
      f.add(0xbac4);
      for (std::size_t c : which.written_back(axis, dir)) f.add(c);
    }
  return f.h;
}

}  // namespace

RankProgram rank_exchange_program(const ProcessGroup& group, const Decomposition& grid, std::span<const int> block_rank,
                                  const HaloComponents& which) {
  constexpr const char* where = "cush: a grid over ranks";
  // Every rank checks with the others before it can throw alone: the same grid, the same block
  // ranks, the same components; then the same input fails the same way everywhere.
  group.agree(where, "the grid (extent, blocks, halo, periodicity, row alignment)", grid_fingerprint(grid));
  group.agree(where, "the ranks of the blocks", ranks_fingerprint(block_rank));
  group.agree(where, "the components exchanged", components_fingerprint(which));
  check_block_ranks(block_rank, grid.size(), group.size());
  return rank_program(exchange_program_over_ranks(grid, block_rank, {}, which), block_rank, group.rank());
}

}  // namespace cush::detail
