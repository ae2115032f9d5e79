#pragma once
// The row and column sums of an all-to-all's p x q piece counts (counts[i * q + j] elements from
// source segment i to destination segment j): the segment sizes the counts imply.

#include <cstddef>
#include <vector>

namespace cush_test {

struct CountSums {
  std::vector<std::size_t> rows;  ///< per source segment
  std::vector<std::size_t> cols;  ///< per destination segment
};

inline CountSums count_sums(const std::vector<std::size_t>& counts, std::size_t p, std::size_t q) {
  CountSums s{std::vector<std::size_t>(p, 0), std::vector<std::size_t>(q, 0)};
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = 0; j < q; ++j) {
      s.rows[i] += counts[i * q + j];
      s.cols[j] += counts[i * q + j];
    }
  return s;
}

}  // namespace cush_test
