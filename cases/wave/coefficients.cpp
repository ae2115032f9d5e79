#include "coefficients.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace cases {
namespace wave {

namespace {
// The seed's table (C_0 first), by order.
constexpr std::array<double, 2> kOrder2{-1.0, 1.0};
constexpr std::array<double, 3> kOrder4{-5.0 / 4, 4.0 / 3, -1.0 / 12};
constexpr std::array<double, 4> kOrder6{-49.0 / 36, 3.0 / 2, -3.0 / 20, 1.0 / 90};
constexpr std::array<double, 5> kOrder8{-205.0 / 144, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560};
}  // namespace

std::span<const double> coefficients(int order) {
  switch (order) {
    case 2: return kOrder2;
    case 4: return kOrder4;
    case 6: return kOrder6;
    case 8: return kOrder8;
    default: break;
  }
  throw std::invalid_argument("cases::wave: order " + std::to_string(order) + " (the seed's table has 2, 4, 6 and 8)");
}

std::size_t radius(int order) { return coefficients(order).size() - 1; }

double symbol(int order, double theta) {
  const std::span<const double> c = coefficients(order);
  double s = 2 * c[0];
  for (std::size_t k = 1; k < c.size(); ++k) s += 2 * c[k] * std::cos(static_cast<double>(k) * theta);
  return s;
}

double courant_limit(int order) {
  // The symbol is not monotone for every order in principle: search the whole period.
  double most = 0;
  constexpr int kSamples = 20000;
  for (int i = 0; i <= kSamples; ++i) most = std::max(most, std::fabs(symbol(order, std::numbers::pi * i / kSamples)));
  return std::sqrt(4.0 / (3.0 * most));
}

void check_courant(int order, double courant) {
  const double limit = courant_limit(order);
  if (!(courant > 0) || courant > limit)
    throw std::invalid_argument("cases::wave: Courant number " + std::to_string(courant) + " at order " +
                                std::to_string(order) + " (stable up to " + std::to_string(limit) + ")");
}

}  // namespace wave
}  // namespace cases
