// Case "rbffd": dense LU with partial pivoting (lu.hpp).

#include "lu.hpp"

#include <cmath>
#include <utility>

namespace cases {
namespace rbffd {

bool lu_factor(std::span<double> a, std::size_t k, std::span<std::size_t> pivots, double tolerance) {
  for (std::size_t c = 0; c < k; ++c) {
    // The largest entry of column c at or below the diagonal becomes the pivot: multipliers stay <= 1,
    // which is what keeps the indefinite saddle-point systems of the weights stable without symmetry.
    std::size_t p = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r * k + c]) > std::fabs(a[p * k + c])) p = r;
    pivots[c] = p;
    if (!(std::fabs(a[p * k + c]) > tolerance)) return false;
    if (p != c)
      for (std::size_t j = 0; j < k; ++j) std::swap(a[c * k + j], a[p * k + j]);
    const double inverse = 1 / a[c * k + c];
    for (std::size_t r = c + 1; r < k; ++r) {
      const double l = a[r * k + c] * inverse;
      a[r * k + c] = l;
      if (l == 0) continue;
      for (std::size_t j = c + 1; j < k; ++j) a[r * k + j] -= l * a[c * k + j];
    }
  }
  return true;
}

void lu_solve(std::span<const double> a, std::size_t k, std::span<const std::size_t> pivots, std::span<double> b,
              std::size_t rhs) {
  for (std::size_t c = 0; c < k; ++c)
    if (pivots[c] != c)
      for (std::size_t j = 0; j < rhs; ++j) std::swap(b[c * rhs + j], b[pivots[c] * rhs + j]);
  // Forward substitution with the unit lower factor, then back substitution with the upper one.
  for (std::size_t r = 1; r < k; ++r)
    for (std::size_t c = 0; c < r; ++c) {
      const double l = a[r * k + c];
      for (std::size_t j = 0; j < rhs; ++j) b[r * rhs + j] -= l * b[c * rhs + j];
    }
  for (std::size_t r = k; r-- > 0;) {
    for (std::size_t c = r + 1; c < k; ++c) {
      const double u = a[r * k + c];
      for (std::size_t j = 0; j < rhs; ++j) b[r * rhs + j] -= u * b[c * rhs + j];
    }
    const double inverse = 1 / a[r * k + r];
    for (std::size_t j = 0; j < rhs; ++j) b[r * rhs + j] *= inverse;
  }
}

}  // namespace rbffd
}  // namespace cases
