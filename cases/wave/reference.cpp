#include "reference.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "coefficients.hpp"

namespace cases {
namespace wave {

void step_host(int order, double courant2, std::size_t n, std::span<const double> prev, std::span<const double> cur,
               std::span<double> next) {
  const std::span<const double> c = coefficients(order);
  const std::size_t r = c.size() - 1;
  if (n < 2 * r + 1 || prev.size() != n * n * n || cur.size() != n * n * n || next.size() != n * n * n)
    throw std::invalid_argument("cases::wave::step_host: " + std::to_string(n) + "^3 nodes at order " +
                                std::to_string(order) + " with arrays of " + std::to_string(prev.size()) + ", " +
                                std::to_string(cur.size()) + " and " + std::to_string(next.size()));
  const double centre = 2 + 6 * c[0] * courant2;
  const auto at = [n](std::size_t x, std::size_t y, std::size_t z) { return x + n * (y + n * z); };
  const auto wrap = [n](std::size_t i, std::size_t k, int dir) { return dir > 0 ? (i + k) % n : (i + n - k) % n; };
  for (std::size_t z = 0; z < n; ++z)
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        double sum = 0;
        for (std::size_t k = 1; k <= r; ++k) {
          sum = std::fma(c[k], cur[at(wrap(x, k, 1), y, z)] + cur[at(wrap(x, k, -1), y, z)], sum);
          sum = std::fma(c[k], cur[at(x, wrap(y, k, 1), z)] + cur[at(x, wrap(y, k, -1), z)], sum);
          sum = std::fma(c[k], cur[at(x, y, wrap(z, k, 1))] + cur[at(x, y, wrap(z, k, -1))], sum);
        }
        const std::size_t i = at(x, y, z);
        next[i] = std::fma(courant2, sum, std::fma(centre, cur[i], -prev[i]));
      }
}

std::vector<double> mode(std::size_t n) {
  std::vector<double> s(n), u(n * n * n);
  for (std::size_t i = 0; i < n; ++i) s[i] = std::sin(2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n));
  for (std::size_t z = 0; z < n; ++z)
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) u[x + n * (y + n * z)] = s[x] * s[y] * s[z];
  return u;
}

double mode_eigenvalue(int order, std::size_t n) { return 3 * symbol(order, 2 * std::numbers::pi / static_cast<double>(n)); }

double mode_angle(int order, double courant, std::size_t n) {
  return std::acos(1 + 0.5 * courant * courant * mode_eigenvalue(order, n));
}

}  // namespace wave
}  // namespace cases
