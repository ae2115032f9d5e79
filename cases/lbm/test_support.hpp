#pragma once
// Case "lbm": helpers shared by its host test (test_lbm.cpp) and its GPU test (test_lbm_gpu.cpp).

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "lbm.hpp"

namespace lbm_test {

namespace lbm = cases::lbm;

/// Bit-for-bit equality of two sets of moments; reports the first few differences.
inline ::testing::AssertionResult same_bits(const lbm::Moments& got, const lbm::Moments& want) {
  const std::pair<const std::vector<float>*, const std::vector<float>*> parts[4] = {
      {&got.rho, &want.rho}, {&got.ux, &want.ux}, {&got.uy, &want.uy}, {&got.uz, &want.uz}};
  const char* names[4] = {"rho", "ux", "uy", "uz"};
  std::size_t bad = 0;
  std::string first;
  for (int c = 0; c < 4; ++c) {
    const auto& [a, b] = parts[c];
    if (a->size() != b->size())
      return ::testing::AssertionFailure() << names[c] << ": " << a->size() << " values, expected " << b->size();
    for (std::size_t n = 0; n < a->size(); ++n)
      if (std::memcmp(&(*a)[n], &(*b)[n], sizeof(float)) != 0 && bad++ < 3)
        first += std::string(" ") + names[c] + "[" + std::to_string(n) + "] " + std::to_string((*a)[n]) + " vs " +
                 std::to_string((*b)[n]) + ";";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " values differ:" << first;
}

/// Sum of rho over the fluid cells.
inline double fluid_mass(const lbm::Duct& d, const lbm::Moments& m) {
  double s = 0;
  for (std::size_t z = 0; z < d.nz; ++z)
    for (std::size_t y = 1; y + 1 < d.ny; ++y)
      for (std::size_t x = 1; x + 1 < d.nx; ++x) s += m.rho[x + d.nx * (y + d.ny * z)];
  return s;
}

}  // namespace lbm_test
