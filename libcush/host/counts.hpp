#pragma once
// The arithmetic behind the distributions (host tests check its guarantees directly).

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace cush::detail {

/// Counts proportional to `weights`, boundaries rounded to multiples of `granularity`.
std::vector<std::size_t> proportional_counts(std::size_t n, std::span<const double> weights, std::size_t granularity,
                                             const char* where);
/// Even counts: the first (granules mod p) devices get one granule more.
std::vector<std::size_t> uniform_counts(std::size_t n, std::size_t p, std::size_t granularity);
/// Device i's share of uniform_counts(n, p, granularity) as {offset, count}, in O(1): p may be
/// far larger than anything a vector of counts could hold.
std::pair<std::size_t, std::size_t> uniform_share(std::size_t n, std::size_t p, std::size_t granularity,
                                                  std::size_t i);

}  // namespace cush::detail
