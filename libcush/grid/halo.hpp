#pragma once
/// @file halo.hpp
/// @brief What a halo exchange moves: dimension-serialized phases of box copies between the
/// blocks of a Decomposition. Pure host code; the GPU exchange executes these lists.
///
/// Phase x sends each block's outermost owned layers to its x neighbours' ghost layers; phase y
/// sends layers that include the x ghosts just filled, and phase z layers that include the x and
/// y ghosts. So 6 messages per block (2 per axis) fill all 26 neighbour regions: edges and
/// corners travel through two or three phases. A block that is its own neighbour (one block
/// along a periodic axis) copies within its buffer.

#include <cstddef>
#include <vector>

#include "cush/grid.hpp"

namespace cush {

/// @brief One box copy: the cells `src` (local coordinates of block `from`) land on the cells
/// `dst` (local coordinates of block `to`), which is a ghost region of `to`. Same sizes.
struct HaloMessage {
  std::size_t from = 0;
  std::size_t to = 0;
  Box src;
  Box dst;
  std::size_t axis = 0;
  int dir = 0;  ///< +1: `to` is `from`'s neighbour on the high side of `axis`; -1: on the low side
  friend bool operator==(const HaloMessage&, const HaloMessage&) = default;
};

/// @brief The messages of one axis. They write disjoint ghost regions and read no cell another
/// message of the phase writes, so they may run in any order or all at once; a phase must end
/// before the next begins.
struct HaloPhase {
  std::size_t axis = 0;
  std::vector<HaloMessage> messages;
};

/// @brief The phases of a full exchange (every grid axis along which some block has a
/// neighbour), in the order x, y, z.
[[nodiscard]] std::vector<HaloPhase> halo_phases(const Decomposition& grid);

}  // namespace cush
