#pragma once
/// @file grid.hpp
/// @brief A structured 1D/2D/3D grid split into blocks, one per device, with ghost layers.
/// Pure host code: which cells each block owns, who its neighbours are, and which cells a
/// stencil may update before the halo exchange is done.
///
/// Axes are x, y, z with x fastest in memory. A block's cells are addressed in its *local*
/// coordinates, which start at 0 at its first owned cell: ghost cells have local coordinates
/// in [-h, 0) and [n, n + h) along an axis with halo depth h. A block's buffer holds its owned
/// cells and the ghost layers of every axis, x fastest: rows of n_x + 2h_x cells, padded to a
/// pitch that is a multiple of GridOptions::row_align, (n_y + 2h_y)(n_z + 2h_z) rows, after
/// lead() cells that put the first owned cell of every row on a row_align boundary.

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

namespace cush {

/// @brief Three sizes or counts, one per axis (x, y, z).
using Extent3 = std::array<std::size_t, 3>;

/// @brief A box of cells: its lowest corner and its size along each axis.
struct Box {
  std::array<std::ptrdiff_t, 3> lo{};
  Extent3 size{};
  [[nodiscard]] std::size_t volume() const noexcept { return size[0] * size[1] * size[2]; }
  [[nodiscard]] bool empty() const noexcept { return volume() == 0; }
  [[nodiscard]] bool contains(const std::array<std::ptrdiff_t, 3>& p) const noexcept;
  friend bool operator==(const Box&, const Box&) = default;
};

/// @brief How a grid is split and what ghost layers it keeps.
struct GridOptions {
  /// Periodic boundaries per axis: the last cell's neighbour is the first.
  std::array<bool, 3> periodic{false, false, false};
  /// Ghost layers on each side along every axis of the grid (depth k >= 1; deep halos trade
  /// memory and larger messages for fewer exchanges).
  std::size_t halo = 1;
  /// The grid axes that keep ghost layers (default: all). An axis without them has no ghost
  /// cells in the blocks' buffers and is never exchanged, even if periodic (a kernel wraps it
  /// itself, or it has walls); it cannot be split: a process grid given in `blocks` with more
  /// than one block along it is refused, and choose_process_grid() does not split it. A lattice
  /// split along z with walls on x and y, say, keeps ghosts along z only: {false, false, true}.
  std::array<bool, 3> ghosts{true, true, true};
  /// Blocks per axis; all zero: chosen by choose_process_grid().
  Extent3 blocks{0, 0, 0};
  /// Row alignment in cells (>= 1): every row of a block's buffer starts its owned cells a
  /// multiple of `row_align` cells from an aligned buffer start, and rows are padded to match.
  /// With 16 (128 bytes of doubles) a stencil's loads and stores cover whole memory sectors:
  /// the advection case's kernel ran 1.5x faster than on unpadded rows (docs/grid.md). 1: rows
  /// are packed, no padding. Rows are aligned in bytes as far as row_align * sizeof(T) divides
  /// the buffer's alignment (256 bytes from cudaMalloc). 1 to 4096.
  std::size_t row_align = 1;
};

/// @brief The blocks per axis for `count` blocks of a grid of `extent` cells with `dims` axes:
/// the factorization whose largest block has the smallest surface (near-cubic blocks), ties
/// broken towards larger blocks along x, then y (x is contiguous in memory). No block is empty,
/// and along a split axis no block is thinner than `min_thickness`; axes whose `splittable` is
/// false keep one block. Throws InvalidArgument if no factorization fits.
[[nodiscard]] Extent3 choose_process_grid(std::size_t count, const Extent3& extent, std::size_t dims,
                                          std::size_t min_thickness = 1,
                                          const std::array<bool, 3>& splittable = {true, true, true});

/// @brief A grid of `extent` cells (axes beyond `dims` have extent 1) split into blocks along a
/// process grid; the block at position b (device b of the set: the same `pos` as a Field block
/// or a Plan segment) has coordinates (b mod B_x, (b / B_x) mod B_y, b / (B_x B_y)). The cells
/// of an axis are split as evenly as possible: the first (n mod B) blocks get one cell more.
class Decomposition {
 public:
  /// @param extent cells along x, y, z (the axes from `dims` on must be 1)
  /// @param dims   1, 2 or 3
  /// @param count  number of blocks (devices)
  /// Throws InvalidArgument for an empty grid, bad `dims`, a given process grid whose product is
  /// not `count`, or a block thinner than the halo along an axis that exchanges.
  Decomposition(const Extent3& extent, std::size_t dims, std::size_t count, const GridOptions& options = {});

  [[nodiscard]] const Extent3& extent() const noexcept { return extent_; }
  [[nodiscard]] std::size_t dims() const noexcept { return dims_; }
  [[nodiscard]] const Extent3& blocks() const noexcept { return blocks_; }
  [[nodiscard]] std::size_t size() const noexcept { return blocks_[0] * blocks_[1] * blocks_[2]; }
  [[nodiscard]] bool periodic(std::size_t axis) const { return periodic_.at(axis); }
  /// Ghost layers on each side along `axis` (the options' depth on the grid's axes that keep
  /// ghosts, else 0).
  [[nodiscard]] std::size_t halo(std::size_t axis) const { return halo_.at(axis); }
  /// The options' halo depth (GridOptions::halo), whichever axes keep ghosts.
  [[nodiscard]] std::size_t depth() const noexcept { return depth_; }

  [[nodiscard]] Extent3 coords(std::size_t pos) const;
  [[nodiscard]] std::size_t block_at(const Extent3& coords) const;
  /// The cells the block at position `pos` owns, in global coordinates.
  [[nodiscard]] Box owned(std::size_t pos) const;
  /// The sizes of the block's buffer, x fastest: [0] is the row pitch (a row's owned and ghost
  /// cells, row_cells(), plus padding up to a multiple of row_align()), [1] and [2] the owned
  /// cells plus ghost layers.
  [[nodiscard]] Extent3 allocated(std::size_t pos) const;
  /// The cells of a row that hold values: owned cells plus ghost layers along x.
  [[nodiscard]] std::size_t row_cells(std::size_t pos) const;
  /// The product of allocated(): the buffer's cells from its first ghost cell on.
  [[nodiscard]] std::size_t allocated_cells(std::size_t pos) const;
  [[nodiscard]] std::size_t row_align() const noexcept { return row_align_; }
  /// Cells a buffer holds before its first ghost cell, so that with the buffer's start aligned
  /// to row_align() cells, every row's first owned cell is too: (row_align - h_x mod row_align)
  /// mod row_align. A block's buffer holds lead() + allocated_cells() cells.
  [[nodiscard]] std::size_t lead() const noexcept { return (row_align_ - halo_[0] % row_align_) % row_align_; }
  /// Position of the cell at local coordinates `p`, counted from the buffer's first ghost cell.
  [[nodiscard]] std::size_t index(std::size_t pos, const std::array<std::ptrdiff_t, 3>& p) const;

  /// The block next to the one at `pos` on side `dir` (-1 or +1) of `axis`, wrapping around periodic
  /// axes (a block can be its own neighbour); none at a non-periodic edge of the grid, and none
  /// along an axis without ghost layers (nothing is exchanged across it).
  [[nodiscard]] std::optional<std::size_t> neighbor(std::size_t pos, std::size_t axis, int dir) const;

  /// True if the exchange fills the ghosts along `axis` within each block, before any message
  /// between blocks: the axis and every grid axis before it have one block (the ghosts of a
  /// periodic such axis are copies of the block's own cells). Field::exchange_start() does those
  /// copies on the blocks' streams before it returns, so kernels enqueued after it may read them.
  [[nodiscard]] bool exchanged_in_place(std::size_t axis) const;

  /// The owned cells (local coordinates) whose stencil of `radius` reads no ghost cell that the
  /// exchange writes after Field::exchange_start() returns: the owned box shrunk by `radius` on
  /// every side that has a neighbour, except along axes exchanged in place (for a grid split along
  /// z only, the interior spans x and y whole). Ghost cells on a non-periodic edge of the grid
  /// are the user's (boundary values), so the cells next to them count as interior. With radius
  /// < halo depth the interior still holds cells that the exchange sends: update them during an
  /// exchange only into another field. Paired with another exchange than Field's, shrink the box
  /// along the axes exchanged in place yourself unless that exchange fills them first too.
  /// Throws InvalidArgument if radius > depth().
  [[nodiscard]] Box interior(std::size_t pos, std::size_t radius) const;
  /// The owned box (local coordinates) grown by `layers` on every side whose ghost cells the
  /// exchange fills: a side with a neighbour, its own block's included along a periodic axis
  /// exchanged in place; never past a non-periodic edge of the grid nor along an axis without
  /// ghost layers. After an exchange a kernel may compute a step on grown(pos, k * radius) from
  /// values valid on grown(pos, (k + 1) * radius): a multi-step cycle's substeps shrink it by a
  /// radius each. Throws InvalidArgument if layers > depth().
  [[nodiscard]] Box grown(std::size_t pos, std::size_t layers) const;
  /// The rest of the owned cells: at most six disjoint, non-empty boxes (z slabs, then y slabs
  /// within the interior's z range, then x slabs within its y and z ranges).
  [[nodiscard]] std::vector<Box> boundary(std::size_t pos, std::size_t radius) const;

 private:
  Extent3 extent_{};
  std::size_t dims_ = 0;
  Extent3 blocks_{};
  std::array<bool, 3> periodic_{};
  std::size_t row_align_ = 1;
  std::size_t depth_ = 1;
  Extent3 halo_{};
};

}  // namespace cush
