#pragma once
// Checks of a field's blocks against the global array they stand for: owned cells, and ghosts
// (wrapping periodic axes). Every cell compared.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <vector>

#include "cush/field.hpp"
#include "cush/grid.hpp"

namespace cush_test {

// Checks each cell of block k's buffer `buf` (a host copy, ghosts included) that stands for a
// cell of the grid (wrapping periodic axes) against `global`: owned cells, and the ghosts for
// which `ghost(x, y, z)` says so.
template <class T, class Ghost>
void expect_buffer_matches(const cush::Decomposition& g, const cush::Block<T>& b, const std::vector<T>& buf,
                           const std::vector<T>& global, Ghost ghost) {
  const cush::Extent3 e = g.extent();
  std::size_t checked = 0;
  for (std::ptrdiff_t z = -static_cast<std::ptrdiff_t>(b.halo()[2]); z < static_cast<std::ptrdiff_t>(b.owned().size[2] + b.halo()[2]); ++z)
    for (std::ptrdiff_t y = -static_cast<std::ptrdiff_t>(b.halo()[1]); y < static_cast<std::ptrdiff_t>(b.owned().size[1] + b.halo()[1]); ++y)
      for (std::ptrdiff_t x = -static_cast<std::ptrdiff_t>(b.halo()[0]); x < static_cast<std::ptrdiff_t>(b.owned().size[0] + b.halo()[0]); ++x) {
        const std::array<std::ptrdiff_t, 3> local{x, y, z};
        const bool owned = cush::Box{{0, 0, 0}, b.owned().size}.contains(local);
        if (!owned && !ghost(x, y, z)) continue;
        std::array<std::size_t, 3> gc{};
        bool inside = true;
        for (std::size_t a = 0; a < 3; ++a) {
          std::ptrdiff_t c = b.owned().lo[a] + local[a];
          const auto n = static_cast<std::ptrdiff_t>(e[a]);
          if (c < 0 || c >= n) {
            if (!g.periodic(a)) inside = false;
            c = (c % n + n) % n;
          }
          gc[a] = static_cast<std::size_t>(c);
        }
        if (!inside) continue;  // a ghost beyond a non-periodic edge: the user's
        const T want = global[gc[0] + e[0] * (gc[1] + e[1] * gc[2])];
        ASSERT_EQ(buf[b.index(x, y, z)], want) << "block " << b.pos() << " local (" << x << ", " << y << ", " << z << ")";
        ++checked;
      }
  EXPECT_GE(checked, b.owned().volume());
}

// Copies every block's whole buffer (ghosts included) to the host and checks each cell that
// stands for a cell of the grid (wrapping periodic axes) against `global`.
template <class T>
void expect_blocks_match(const cush::Field<T>& f, const std::vector<T>& global, bool ghosts) {
  for (std::size_t k = 0; k < f.grid().size(); ++k) {
    const cush::Block<T> b = f.block(k);
    std::vector<T> buf(f.grid().allocated_cells(k));
    ASSERT_EQ(cudaMemcpy(buf.data(), b.data(), buf.size() * sizeof(T), cudaMemcpyDefault), cudaSuccess);
    expect_buffer_matches(f.grid(), b, buf, global, [&](auto...) { return ghosts; });
  }
}

}  // namespace cush_test
