#pragma once
// Case "rbffd": the stencils. Stencil i = the n nodes nearest to node i by chordal (straight-line)
// distance, node i itself included (spec rbffd.md §3 "Nodes"). On the sphere the chordal order is the
// great-circle order, so this is the usual kNN stencil.
//
// Stored in CSR: row i = cols[row_ptr[i] .. row_ptr[i + 1]), sorted by distance with ties broken by the
// smaller index, so the centre comes first and the result does not depend on the search order.
// The search bins the nodes in a uniform 3-D grid whose cells are about as wide as a stencil, then
// looks at rings of cells around the centre's cell until the n-th distance found is inside the rings:
// O(N n) work instead of O(N^2), the rows split over the cores (each row on its own, so the result
// does not depend on the thread count).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nodes.hpp"

namespace cases {
namespace rbffd {

/// The stencils in CSR: row_ptr has N + 1 entries, cols has N n.
struct Stencils {
  std::vector<std::int64_t> row_ptr;
  std::vector<std::int64_t> cols;
  [[nodiscard]] std::size_t rows() const noexcept { return row_ptr.empty() ? 0 : row_ptr.size() - 1; }
};

/// The n nearest neighbours of every node. Throws std::invalid_argument for n = 0 or n > N.
Stencils nearest_neighbours(std::span<const Point> nodes, std::size_t n);

/// The same by brute force, O(N^2 log n): the reference the tests compare against.
Stencils nearest_neighbours_brute_force(std::span<const Point> nodes, std::size_t n);

}  // namespace rbffd
}  // namespace cases
