#pragma once
// Reproducible random test data.

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

namespace cush_test {

inline std::mt19937_64& rng() {
  static std::mt19937_64 engine(20261122);
  return engine;
}

template <class T>
void fill_random(std::span<T> out, std::mt19937_64& g = rng()) {
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> d(T(-1000), T(1000));
    for (T& x : out) x = d(g);
  } else {
    std::uniform_int_distribution<std::uint64_t> d;
    for (T& x : out) x = static_cast<T>(d(g));
  }
}

/// `n` random values (fill_random).
template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& g = rng()) {
  std::vector<T> v(n);
  fill_random<T>(v, g);
  return v;
}

}  // namespace cush_test
