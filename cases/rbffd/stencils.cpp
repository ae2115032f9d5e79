// Case "rbffd": kNN stencils over a uniform 3-D grid (stencils.hpp).

#include "stencils.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cases {
namespace rbffd {

namespace {

void check(std::span<const Point> nodes, std::size_t n) {
  if (n == 0 || n > nodes.size())
    throw std::invalid_argument("cases::rbffd::nearest_neighbours: stencil size n = " + std::to_string(n) +
                                " must be between 1 and the number of nodes N = " + std::to_string(nodes.size()));
}

// A candidate: squared distance, then index, so that std::sort's order is the documented tie break.
using Candidate = std::pair<double, std::int64_t>;

// Sorts the candidates and writes the indices of the n first to out[0 .. n).
void keep_nearest(std::vector<Candidate>& c, std::size_t n, std::int64_t* out) {
  std::partial_sort(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n), c.end());
  for (std::size_t k = 0; k < n; ++k) out[k] = c[k].second;
}

// The nodes binned in m^3 cubic cells of width w over their bounding cube, each cell's nodes one run of
// `order` (a counting sort, so a cell's nodes keep their index order).
struct Grid {
  Point lo;
  double w = 1;
  int m = 1;
  std::vector<std::int64_t> start;  // m^3 + 1 entries
  std::vector<std::int64_t> order;

  [[nodiscard]] int cell(double v, double v0) const {
    return std::clamp(static_cast<int>(std::floor((v - v0) / w)), 0, m - 1);
  }
  [[nodiscard]] std::array<int, 3> cell(Point p) const { return {cell(p.x, lo.x), cell(p.y, lo.y), cell(p.z, lo.z)}; }
  [[nodiscard]] std::size_t id(int i, int j, int k) const {
    return static_cast<std::size_t>(i) + static_cast<std::size_t>(m) * (j + static_cast<std::size_t>(m) * k);
  }

  Grid(std::span<const Point> nodes, std::size_t n) {
    Point hi = nodes[0];
    lo = nodes[0];
    for (const Point& p : nodes) {
      lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
      hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    }
    const double extent = std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z});
    // n nodes of a near-uniform set on the unit sphere fill a cap of radius about 2 sqrt(n / N); with cells
    // that wide the first ring (3^3 cells) usually holds the whole stencil.
    const double radius = 2 * std::sqrt(static_cast<double>(n) / static_cast<double>(nodes.size()));
    m = extent > 0 ? std::clamp(static_cast<int>(std::floor(extent / radius)), 1, 512) : 1;
    w = extent > 0 ? extent / m : 1;
    const std::size_t cells = static_cast<std::size_t>(m) * m * m;
    start.assign(cells + 1, 0);
    std::vector<std::size_t> of(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto [a, b, c] = cell(nodes[i]);
      of[i] = id(a, b, c);
      ++start[of[i] + 1];
    }
    for (std::size_t c = 0; c < cells; ++c) start[c + 1] += start[c];
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    order.resize(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
      order[static_cast<std::size_t>(next[of[i]]++)] = static_cast<std::int64_t>(i);
  }
};

}  // namespace

Stencils nearest_neighbours(std::span<const Point> nodes, std::size_t n) {
  check(nodes, n);
  const Grid g(nodes, n);
  Stencils s;
  s.row_ptr.resize(nodes.size() + 1);
  for (std::size_t i = 0; i <= nodes.size(); ++i) s.row_ptr[i] = static_cast<std::int64_t>(i * n);
  s.cols.resize(nodes.size() * n);
  // Each row on its own (so the result does not depend on the thread count), in contiguous blocks
  // of rows, one per core.
  const auto rows = [&](std::size_t first, std::size_t last) {
    std::vector<Candidate> c;
    for (std::size_t i = first; i < last; ++i) {
      const Point p = nodes[i];
      const auto [ci, cj, ck] = g.cell(p);
      // Ring r = the cells at Chebyshev distance r from the centre's cell. A node outside rings 0..r
      // differs from p by more than r w in some coordinate, so once the n-th nearest candidate is
      // within r w the stencil is final (the reach shrunk by 1e-9 against a node that rounding put in
      // the next cell). Only ring r's cells are read in pass r (the shell test below), so no node is
      // seen twice.
      c.clear();
      for (int r = 0;; ++r) {
        for (int k = std::max(ck - r, 0); k <= std::min(ck + r, g.m - 1); ++k)
          for (int j = std::max(cj - r, 0); j <= std::min(cj + r, g.m - 1); ++j)
            for (int ii = std::max(ci - r, 0); ii <= std::min(ci + r, g.m - 1); ++ii) {
              if (std::max({std::abs(ii - ci), std::abs(j - cj), std::abs(k - ck)}) != r) continue;
              const std::size_t cell = g.id(ii, j, k);
              for (std::int64_t q = g.start[cell]; q < g.start[cell + 1]; ++q) {
                const std::int64_t node = g.order[static_cast<std::size_t>(q)];
                c.emplace_back(distance2(p, nodes[static_cast<std::size_t>(node)]), node);
              }
            }
        const bool covers_grid = ci - r <= 0 && cj - r <= 0 && ck - r <= 0 && ci + r >= g.m - 1 &&
                                 cj + r >= g.m - 1 && ck + r >= g.m - 1;
        if (c.size() >= n) {
          std::nth_element(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n - 1), c.end());
          const double reach = r * g.w * (1 - 1e-9);
          if (covers_grid || c[n - 1].first <= reach * reach) break;
        }
        // Every node is a candidate once the rings cover the grid, and n <= N, so the loop ends there.
      }
      keep_nearest(c, n, s.cols.data() + i * n);
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, nodes.size() / 4096 + 1);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t)
    pool.emplace_back(rows, nodes.size() * t / threads, nodes.size() * (t + 1) / threads);
  rows(0, nodes.size() / threads);
  for (std::thread& t : pool) t.join();
  return s;
}

Stencils nearest_neighbours_brute_force(std::span<const Point> nodes, std::size_t n) {
  check(nodes, n);
  Stencils s;
  s.row_ptr.push_back(0);
  std::vector<Candidate> c(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t j = 0; j < nodes.size(); ++j) c[j] = {distance2(nodes[i], nodes[j]), static_cast<std::int64_t>(j)};
    s.cols.resize(s.cols.size() + n);
    keep_nearest(c, n, s.cols.data() + i * n);
    s.row_ptr.push_back(static_cast<std::int64_t>(s.cols.size()));
  }
  return s;
}

}  // namespace rbffd
}  // namespace cases
