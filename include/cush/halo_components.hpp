#pragma once
/// @file halo_components.hpp
/// @brief Which components of a Field of several components an exchange moves: per axis and
/// per direction of travel, the components whose ghosts are filled from their owners, and those
/// whose ghost cells are written back into the owners (in-place streaming).
///
/// A lattice-Boltzmann lattice split along z, say, is a field of 19 components (one per
/// population), and only the 5 populations that move up cross a face upwards:
///
///     cush::HaloComponents up_and_down;
///     up_and_down.fill(2, +1, {5, 9, 11, 16, 18})   // into the upper block's low ghost layer
///                .fill(2, -1, {6, 10, 12, 15, 17}); // into the lower block's high ghost layer
///     lattice.exchange(up_and_down);
///
/// A kernel that streams in place writes into the ghost cells the populations that belong to
/// its neighbours' cells (esoteric pull, the A-A pattern); write_back() copies those ghost cells
/// back into the owned cells they stand for. Direction of travel: +1 is from a block to its
/// neighbour on the high side of the axis. fill(a, +1, ...) copies a block's highest owned
/// layers into its high neighbour's low ghost layers; write_back(a, +1, ...) copies a block's
/// high ghost layers into its high neighbour's lowest owned layers.

#include <array>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <ranges>
#include <vector>

namespace cush {

class HaloComponents {
 public:
  /// Nothing moves.
  HaloComponents() = default;

  /// Components `components` cross the faces of `axis` (0-2) in direction `dir` (+1 or -1) from
  /// owned cells into ghost cells. Throws InvalidArgument for a bad axis, direction or a
  /// negative component; the field checks the rest when it exchanges (components in range, none
  /// both filled and written back along one axis).
  HaloComponents& fill(std::size_t axis, int dir, std::initializer_list<std::size_t> components) {
    return add(fill_, axis, dir, components);
  }
  template <std::ranges::input_range R>
    requires std::integral<std::ranges::range_value_t<R>>
  HaloComponents& fill(std::size_t axis, int dir, const R& components) {
    return add(fill_, axis, dir, components);
  }
  /// Components `components` of the ghost cells on the faces of `axis` cross in direction `dir`
  /// back into the owned cells they stand for (overwriting them). Supported on grids with ghost
  /// layers along one axis only (GridOptions::ghosts), where no ghost cell stands for two cells.
  HaloComponents& write_back(std::size_t axis, int dir, std::initializer_list<std::size_t> components) {
    return add(back_, axis, dir, components);
  }
  template <std::ranges::input_range R>
    requires std::integral<std::ranges::range_value_t<R>>
  HaloComponents& write_back(std::size_t axis, int dir, const R& components) {
    return add(back_, axis, dir, components);
  }

  /// The components filled / written back across `axis` in direction `dir`, ascending, once each.
  [[nodiscard]] const std::vector<std::size_t>& filled(std::size_t axis, int dir) const { return fill_.at(slot(axis, dir)); }
  [[nodiscard]] const std::vector<std::size_t>& written_back(std::size_t axis, int dir) const {
    return back_.at(slot(axis, dir));
  }
  /// Every component of a field of `components` filled in both directions on every axis (what
  /// Field::exchange() without an argument moves).
  [[nodiscard]] static HaloComponents all(std::size_t components);

  friend bool operator==(const HaloComponents&, const HaloComponents&) = default;

 private:
  using Lists = std::array<std::vector<std::size_t>, 6>;  // by axis * 2 + (dir > 0)
  [[nodiscard]] static std::size_t slot(std::size_t axis, int dir);
  static void insert(std::vector<std::size_t>& list, long long component);
  template <class R>
  HaloComponents& add(Lists& lists, std::size_t axis, int dir, const R& components) {
    std::vector<std::size_t>& list = lists[slot(axis, dir)];
    for (const auto c : components) insert(list, static_cast<long long>(c));
    return *this;
  }
  Lists fill_{};
  Lists back_{};
};

}  // namespace cush
