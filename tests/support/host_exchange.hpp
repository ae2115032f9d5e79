#pragma once
// Host arrays for the exchange tests of the grid subsystem: random decompositions, block buffers
// whose owned cells hold their global index, the check that every ghost holds its owner's value,
// and one step of an exchange program run on host arrays as the GPU engine runs it. Shared by the
// single-process tests (tests/grid) and the tests over MPI ranks (tests/mpi).

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <random>
#include <vector>

#include "cush/error.hpp"
#include "cush/grid.hpp"
#include "grid/exchange_program.hpp"

namespace cush_test {

using Point = std::array<std::ptrdiff_t, 3>;

template <class F>
void for_each_cell(const cush::Box& b, F&& f) {
  for (std::size_t z = 0; z < b.size[2]; ++z)
    for (std::size_t y = 0; y < b.size[1]; ++y)
      for (std::size_t x = 0; x < b.size[0]; ++x)
        f(Point{b.lo[0] + static_cast<std::ptrdiff_t>(x), b.lo[1] + static_cast<std::ptrdiff_t>(y),
                b.lo[2] + static_cast<std::ptrdiff_t>(z)});
}

/// A random decomposition: 1-3 axes, 1-8 blocks (chosen or given), depth 1-4, random periodicity.
inline cush::Decomposition random_grid(std::mt19937& rng) {
  for (;;) {
    const std::size_t dims = std::uniform_int_distribution<std::size_t>(1, 3)(rng);
    cush::Extent3 extent{1, 1, 1};
    for (std::size_t a = 0; a < dims; ++a) extent[a] = std::uniform_int_distribution<std::size_t>(1, dims == 3 ? 13 : 40)(rng);
    cush::GridOptions o;
    o.halo = std::uniform_int_distribution<std::size_t>(1, 4)(rng);
    for (std::size_t a = 0; a < dims; ++a) o.periodic[a] = (rng() & 1U) != 0;
    const std::size_t aligns[] = {1, 1, 2, 4, 16};
    o.row_align = aligns[rng() % 5];
    std::size_t count = std::uniform_int_distribution<std::size_t>(1, 8)(rng);
    if ((rng() & 1U) != 0) {
      o.blocks = {1, 1, 1};
      for (std::size_t a = 0; a < dims; ++a) o.blocks[a] = std::uniform_int_distribution<std::size_t>(1, 3)(rng);
      count = o.blocks[0] * o.blocks[1] * o.blocks[2];
    }
    try {
      return cush::Decomposition(extent, dims, count, o);
    } catch (const cush::InvalidArgument&) {
      // Too thin for its halo or too many blocks: draw again.
    }
  }
}

inline constexpr double unset = -1.0;

inline double cell_value(const cush::Extent3& e, const Point& global) {
  return 1.0 + static_cast<double>(global[0] + e[0] * (global[1] + e[1] * global[2]));
}

/// Block b's buffer with every owned cell set to its value and every ghost unset.
inline std::vector<double> initial_buffer(const cush::Decomposition& g, std::size_t b) {
  std::vector<double> buf(g.allocated_cells(b), unset);
  const cush::Box o = g.owned(b);
  for_each_cell(cush::Box{{0, 0, 0}, o.size}, [&](const Point& p) {
    buf[g.index(b, p)] = cell_value(g.extent(), Point{o.lo[0] + p[0], o.lo[1] + p[1], o.lo[2] + p[2]});
  });
  return buf;
}

inline std::vector<std::vector<double>> initial_buffers(const cush::Decomposition& g) {
  std::vector<std::vector<double>> buf(g.size());
  for (std::size_t b = 0; b < g.size(); ++b) buf[b] = initial_buffer(g, b);
  return buf;
}

/// Every cell of block b's buffer: owned cells unchanged, ghost cells equal to the cell they
/// stand for (wrapping around periodic axes), or untouched where that lies outside a
/// non-periodic edge.
inline void verify_buffer(const cush::Decomposition& g, std::size_t b, const std::vector<double>& buf) {
  const cush::Extent3 e = g.extent();
  const cush::Box o = g.owned(b);
  cush::Box whole;
  for (std::size_t a = 0; a < 3; ++a) {
    whole.lo[a] = -static_cast<std::ptrdiff_t>(g.halo(a));
    whole.size[a] = o.size[a] + 2 * g.halo(a);
  }
  for_each_cell(whole, [&](const Point& p) {
    Point global{};
    bool inside = true;
    for (std::size_t a = 0; a < 3; ++a) {
      std::ptrdiff_t c = o.lo[a] + p[a];
      const auto n = static_cast<std::ptrdiff_t>(e[a]);
      if (c < 0 || c >= n) {
        if (g.periodic(a)) {
          c = (c % n + n) % n;
        } else {
          inside = false;
        }
      }
      global[a] = c;
    }
    const double want = inside ? cell_value(e, global) : unset;
    ASSERT_EQ(buf[g.index(b, p)], want) << "block " << b << " local (" << p[0] << ", " << p[1] << ", " << p[2] << ")";
  });
}

inline void verify_buffers(const cush::Decomposition& g, const std::vector<std::vector<double>>& buf) {
  for (std::size_t b = 0; b < g.size(); ++b) verify_buffer(g, b, buf[b]);
}

/// A cell's offset in a buffer of `alloc` cells.
inline std::size_t offset(const cush::Extent3& alloc, const cush::Extent3& p) { return p[0] + alloc[0] * (p[1] + alloc[1] * p[2]); }

/// One step of an exchange program from `src` to `dst` (the buffers its sides name): a
/// contiguous step as one linear copy, which must equal the box copy it replaces, any other as a
/// box copy.
inline void run_step(const cush::detail::ExchangeStep& step, const std::vector<double>& src, std::vector<double>& dst) {
  ASSERT_EQ(src.size(), step.src.alloc[0] * step.src.alloc[1] * step.src.alloc[2]);
  ASSERT_EQ(dst.size(), step.dst.alloc[0] * step.dst.alloc[1] * step.dst.alloc[2]);
  std::vector<double> boxed = dst;
  for_each_cell(cush::Box{{0, 0, 0}, step.size}, [&](const Point& c) {
    const auto at = [&](const cush::Extent3& lo) {
      return cush::Extent3{lo[0] + static_cast<std::size_t>(c[0]), lo[1] + static_cast<std::size_t>(c[1]),
                           lo[2] + static_cast<std::size_t>(c[2])};
    };
    boxed.at(offset(step.dst.alloc, at(step.dst.lo))) = src.at(offset(step.src.alloc, at(step.src.lo)));
  });
  if (step.contiguous) {
    // One linear copy from the first cell to the last: padding between whole rows comes along
    // (it is `unset` everywhere, so the comparison below still sees every real cell).
    const std::size_t n = cush::detail::box_span(step.src.alloc, step.size);
    ASSERT_EQ(n, cush::detail::box_span(step.dst.alloc, step.size));
    const std::size_t from = offset(step.src.alloc, step.src.lo);
    const std::size_t to = offset(step.dst.alloc, step.dst.lo);
    ASSERT_LE(from + n, src.size());
    ASSERT_LE(to + n, dst.size());
    std::copy(src.begin() + static_cast<std::ptrdiff_t>(from), src.begin() + static_cast<std::ptrdiff_t>(from + n),
              dst.begin() + static_cast<std::ptrdiff_t>(to));
    ASSERT_EQ(dst, boxed) << "a step marked contiguous is not one run";
  } else {
    dst = boxed;
  }
}

}  // namespace cush_test
