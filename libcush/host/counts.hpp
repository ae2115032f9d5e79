#pragma once
// The arithmetic behind the distributions (host tests check its guarantees directly).

#include <cstddef>
#include <span>
#include <vector>

namespace cush::detail {

/// Counts proportional to `weights`, boundaries rounded to multiples of `granularity`.
std::vector<std::size_t> proportional_counts(std::size_t n, std::span<const double> weights, std::size_t granularity,
                                             const char* where);
/// Even counts: the first (granules mod p) devices get one granule more.
std::vector<std::size_t> uniform_counts(std::size_t n, std::size_t p, std::size_t granularity);

}  // namespace cush::detail
