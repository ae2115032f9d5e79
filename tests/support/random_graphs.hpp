#pragma once
// Random stencil graphs for the tests of the graph decomposition and the graph field: kNN rows on
// random points or random one-way edges, with duplicates, empty rows, rows without their centre
// and shuffled entries; owners random, as consecutive ranges (with their Layout) or z slabs;
// sometimes a part that reads only its own nodes. Deterministic for a given generator state.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cush/graph.hpp"
#include "cush/layout.hpp"

namespace cush_test {

using Node = std::int64_t;
using Rows = std::vector<std::vector<Node>>;

struct Graph {
  std::vector<Node> row_ptr{0};
  std::vector<Node> cols;
  [[nodiscard]] std::size_t nodes() const { return row_ptr.size() - 1; }
  [[nodiscard]] cush::Adjacency adjacency() const { return {row_ptr, cols}; }
  [[nodiscard]] std::vector<Node> row(Node i) const {
    const auto u = static_cast<std::size_t>(i);
    return {cols.begin() + row_ptr[u], cols.begin() + row_ptr[u + 1]};
  }
};

Graph csr(const Rows& rows) {
  Graph g;
  for (const auto& r : rows) {
    g.cols.insert(g.cols.end(), r.begin(), r.end());
    g.row_ptr.push_back(static_cast<Node>(g.cols.size()));
  }
  return g;
}

// Counts of what the random graphs covered, so that a generator that stops making a kind fails.
struct Coverage {
  std::size_t multi_part = 0, empty_ghosts = 0, sent_not_boundary = 0, boundary_not_sent = 0, gathers = 0,
              plain_copies = 0, duplicates = 0, empty_rows = 0, rows_without_centre = 0, layouts = 0;
};

struct Case {
  Graph graph;
  std::vector<int> owner;
  std::size_t parts = 1;
  std::optional<cush::Layout> layout;  // the owners as consecutive ranges
  std::string what;
};

/// Trial `trial` picks the kind (kNN or random edges by parity, owners by (trial / 2) % 3; every
/// fifth at most 12 nodes); `seen` counts what the graphs covered.
inline Case random_case(std::mt19937_64& rng, int trial, Coverage& seen) {
  const auto uniform = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  const auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  Case c;
  const std::size_t n = uniform(1, trial % 5 == 0 ? 12 : 200);
  c.parts = uniform(1, std::min<std::size_t>(8, n));
  std::vector<std::array<double, 3>> points(n);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& pt : points) pt = {u(rng), u(rng), u(rng)};

  // The rows: k nearest neighbours (centre first), or random one-way edges.
  Rows rows(n);
  const bool knn = trial % 2 == 0;
  if (knn) {
    const std::size_t k = uniform(1, std::min<std::size_t>(n, 10));
    c.what = "kNN k=" + std::to_string(k);
    const auto dist = [&](std::size_t a, std::size_t b) {
      double d = 0;
      for (std::size_t ax = 0; ax < 3; ++ax) d += (points[a][ax] - points[b][ax]) * (points[a][ax] - points[b][ax]);
      return d;
    };
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::size_t> all(n);
      std::iota(all.begin(), all.end(), 0);
      std::partial_sort(
          all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
          [&](std::size_t a, std::size_t b) { return std::pair(dist(i, a), a) < std::pair(dist(i, b), b); });
      for (std::size_t m = 0; m < k; ++m) rows[i].push_back(static_cast<Node>(all[m]));
    }
  } else {
    c.what = "random edges";
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t len = uniform(0, 6);
      for (std::size_t m = 0; m < len; ++m) {
        if (chance(0.5)) {  // near the centre, so that ranges of nodes keep most edges inside
          const auto lo = static_cast<std::ptrdiff_t>(i) - 3;
          const auto j = std::clamp<std::ptrdiff_t>(lo + static_cast<std::ptrdiff_t>(uniform(0, 6)), 0,
                                                    static_cast<std::ptrdiff_t>(n) - 1);
          rows[i].push_back(j);
        } else {
          rows[i].push_back(static_cast<Node>(uniform(0, n - 1)));
        }
      }
    }
  }
  // Duplicates, empty rows, rows without their centre, shuffled entries.
  for (std::size_t i = 0; i < n; ++i) {
    auto& r = rows[i];
    if (!r.empty() && chance(0.1)) r.push_back(r[uniform(0, r.size() - 1)]);
    if (knn && !r.empty() && chance(0.1)) r.erase(r.begin());
    if (chance(0.05)) r.clear();
    if (chance(0.3)) std::shuffle(r.begin(), r.end(), rng);
  }

  // The owners: random, consecutive ranges of random sizes, or equal slabs along z.
  c.owner.assign(n, 0);
  switch ((trial / 2) % 3) {
    case 0: {
      c.what += ", random owners";
      for (auto& o : c.owner) o = static_cast<int>(uniform(0, c.parts - 1));
      std::vector<std::size_t> perm(n);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      for (std::size_t p = 0; p < c.parts; ++p) c.owner[perm[p]] = static_cast<int>(p);  // no part empty
      break;
    }
    case 1: {
      c.what += ", ranges";
      std::vector<std::size_t> cuts(n - 1);
      std::iota(cuts.begin(), cuts.end(), 1);
      std::shuffle(cuts.begin(), cuts.end(), rng);
      cuts.resize(c.parts - 1);
      cuts.push_back(0);
      cuts.push_back(n);
      std::sort(cuts.begin(), cuts.end());
      std::vector<std::size_t> counts;
      for (std::size_t p = 0; p < c.parts; ++p) {
        counts.push_back(cuts[p + 1] - cuts[p]);
        for (std::size_t i = cuts[p]; i < cuts[p + 1]; ++i) c.owner[i] = static_cast<int>(p);
      }
      c.layout = cush::Layout::partitioned(counts);
      break;
    }
    default: {
      c.what += ", z slabs";
      std::vector<std::size_t> by_z(n);
      std::iota(by_z.begin(), by_z.end(), 0);
      std::sort(by_z.begin(), by_z.end(), [&](std::size_t a, std::size_t b) { return points[a][2] < points[b][2]; });
      for (std::size_t k = 0; k < n; ++k) c.owner[by_z[k]] = static_cast<int>(k * c.parts / n);
      break;
    }
  }
  // Sometimes one part reads only its own nodes (its R is empty).
  if (c.parts > 1 && chance(0.25)) {
    const auto alone = static_cast<int>(uniform(0, c.parts - 1));
    std::vector<Node> mine;
    for (std::size_t i = 0; i < n; ++i)
      if (c.owner[i] == alone) mine.push_back(static_cast<Node>(i));
    for (std::size_t i = 0; i < n; ++i)
      if (c.owner[i] == alone)
        for (Node& j : rows[i])
          if (c.owner[static_cast<std::size_t>(j)] != alone) j = mine[uniform(0, mine.size() - 1)];
    c.what += ", part " + std::to_string(alone) + " reads only its own nodes";
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = rows[i];
    if (r.empty()) ++seen.empty_rows;
    if (std::find(r.begin(), r.end(), static_cast<Node>(i)) == r.end()) ++seen.rows_without_centre;
    if (std::set<Node>(r.begin(), r.end()).size() != r.size()) ++seen.duplicates;
  }
  c.graph = csr(rows);
  c.what += ", N=" + std::to_string(n) + ", parts=" + std::to_string(c.parts) + ", trial " + std::to_string(trial);
  return c;
}

}  // namespace cush_test
