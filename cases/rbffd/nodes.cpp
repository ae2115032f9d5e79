// Case "rbffd": the Fibonacci nodes (nodes.hpp).

#include "nodes.hpp"

#include <cmath>
#include <numbers>

namespace cases {
namespace rbffd {

std::vector<Point> fibonacci_nodes(std::size_t n) {
  // The golden angle pi (3 - sqrt 5). phi is not reduced modulo 2 pi: std::cos and std::sin reduce exactly,
  // and the product's rounding (a few 1e-11 rad at N = 2^20) only moves a node along its latitude.
  const double golden = std::numbers::pi * (3 - std::sqrt(5.0));
  std::vector<Point> p(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = 1 - (2 * static_cast<double>(i) + 1) / static_cast<double>(n);
    const double r = std::sqrt((1 - z) * (1 + z));
    const double phi = static_cast<double>(i) * golden;
    p[i] = {r * std::cos(phi), r * std::sin(phi), z};
  }
  return p;
}

}  // namespace rbffd
}  // namespace cases
