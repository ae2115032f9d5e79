#pragma once
// Grid helpers shared by the host tests of the grid subsystem.

#include <cstddef>
#include <string>

#include "cush/grid.hpp"

namespace cush_test {

/// "extent 9 10 11, blocks 2 1 2, halo 2 (ghosts 2 2 2), periodic 1 0 1, row_align 16": a decomposition in a
/// failure message.
inline std::string describe(const cush::Decomposition& g) {
  std::string s = "extent";
  for (auto e : g.extent()) s += " " + std::to_string(e);
  s += ", blocks";
  for (auto b : g.blocks()) s += " " + std::to_string(b);
  s += ", halo " + std::to_string(g.depth()) + " (ghosts";
  for (std::size_t a = 0; a < 3; ++a) s += " " + std::to_string(g.halo(a));
  s += "), periodic";
  for (std::size_t a = 0; a < 3; ++a) s += g.periodic(a) ? " 1" : " 0";
  s += ", row_align " + std::to_string(g.row_align());
  return s;
}

}  // namespace cush_test
