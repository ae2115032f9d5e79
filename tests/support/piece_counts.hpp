#pragma once
// Piece counts for an all-to-all between two plans of any layouts (counts[i * q + j] elements from
// source segment i to destination segment j): rows sum to the source's segments, columns to the
// destination's, filled greedily so that some pieces are empty.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cush/plan.hpp"

namespace cush_test {

template <class T>
std::vector<std::size_t> piece_counts(const cush::Plan<T>& a, const cush::Plan<T>& b) {
  const std::size_t p = a.devices().size(), q = b.devices().size();
  std::vector<std::size_t> left_a(p), left_b(q), counts(p * q, 0);
  for (std::size_t i = 0; i < p; ++i) left_a[i] = a.segment(i).size();
  for (std::size_t j = 0; j < q; ++j) left_b[j] = b.segment(j).size();
  for (std::size_t i = 0, j = 0; i < p && j < q;) {
    const std::size_t c = std::min(left_a[i], left_b[j]);
    counts[i * q + j] = c;
    left_a[i] -= c;
    left_b[j] -= c;
    if (left_a[i] == 0) ++i;
    if (j < q && left_b[j] == 0) ++j;
  }
  return counts;
}

/// The counts of the all-to-all back (q x p): it puts every element where it came from.
inline std::vector<std::size_t> transposed(const std::vector<std::size_t>& counts, std::size_t p, std::size_t q) {
  std::vector<std::size_t> t(counts.size());
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = 0; j < q; ++j) t[j * p + i] = counts[i * q + j];
  return t;
}

}  // namespace cush_test
