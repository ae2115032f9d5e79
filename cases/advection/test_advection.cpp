// Case "advection", host part: the Lax-Wendroff coefficients of seed 000 Table 2.1, exactness
// for constant and linear fields, and second-order convergence of the host reference step.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "advection.hpp"

namespace adv = cases::advection;

namespace {
double coef(const std::array<double, 27>& a, int i, int j, int k) { return a[(i + 1) + 3 * (j + 1) + 9 * (k + 1)]; }
}  // namespace

// Entries of Table 2.1 written out as the seed prints them (with one nu for all axes), for
// random stable velocities.
TEST(Advection, CoefficientsMatchTheSeedsTable) {
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  for (int t = 0; t < 200; ++t) {
    const adv::Velocity c{v(g), v(g), v(g)};
    const double nu = std::uniform_real_distribution<double>(0.0, 1.0)(g);
    const auto a = adv::coefficients(c, {nu, nu, nu});
    const double cx = c.x, cy = c.y, cz = c.z, n2 = nu * nu;
    EXPECT_NEAR(coef(a, -1, -1, -1), cx * cy * cz * nu * n2 * (1 + cx * nu) * (1 + cy * nu) * (1 + cz * nu) / 8, 1e-15);
    EXPECT_NEAR(coef(a, -1, -1, 0), -2 * cx * cy * n2 * (1 + cx * nu) * (1 + cy * nu) * (cz * cz * n2 - 1) / 8, 1e-15);
    EXPECT_NEAR(coef(a, -1, 0, 0), 4 * cx * nu * (1 + cx * nu) * (cy * cy * n2 - 1) * (cz * cz * n2 - 1) / 8, 1e-15);
    EXPECT_NEAR(coef(a, 0, 0, 0), -8 * (-1 + cx * cx * n2) * (-1 + cy * cy * n2) * (-1 + cz * cz * n2) / 8, 1e-15);
    EXPECT_NEAR(coef(a, 0, 1, -1), -2 * cy * cz * n2 * (-1 + cy * nu) * (1 + cz * nu) * (-1 + cx * cx * n2) / 8, 1e-15);
    EXPECT_NEAR(coef(a, 1, 0, 1), -2 * cx * cz * n2 * (-1 + cx * nu) * (-1 + cz * nu) * (-1 + cy * cy * n2) / 8, 1e-15);
    EXPECT_NEAR(coef(a, 1, 1, 1), cx * cy * cz * nu * n2 * (-1 + cx * nu) * (-1 + cy * nu) * (-1 + cz * nu) / 8, 1e-15);
  }
}

// The factorized form's weights: the one-dimensional Lax-Wendroff weights of each axis back from
// the 27 products (also for a stencil scaled so that it no longer sums to 1), and anything that
// is not such a product refused.
TEST(Advection, AxisWeightsFactorTheCoefficients) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  for (int t = 0; t < 200; ++t) {
    const adv::Velocity c{v(g), v(g), v(g)};
    const std::array<double, 3> nu{0.9, 0.7, 0.4};
    const auto a = adv::coefficients(c, nu);
    const std::array<double, 9> w = adv::axis_weights(a);
    const double courant[3] = {c.x * nu[0], c.y * nu[1], c.z * nu[2]};
    for (int axis = 0; axis < 3; ++axis) {
      const double q = courant[axis];
      EXPECT_NEAR(w[3 * axis], q * (1 + q) / 2, 1e-15);
      EXPECT_NEAR(w[3 * axis + 1], 1 - q * q, 1e-15);
      EXPECT_NEAR(w[3 * axis + 2], q * (q - 1) / 2, 1e-15);
    }
    std::array<double, 27> scaled = a;
    for (double& x : scaled) x *= 2.5;
    const std::array<double, 9> s = adv::axis_weights(scaled);
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(s[i] * s[3 + j] * s[6 + k], scaled[i + 3 * j + 9 * k], 4e-15);
  }
  auto a = adv::coefficients({0.3, -0.6, 0.9}, {0.9, 0.9, 0.9});
  a[22] += 1e-9;
  EXPECT_THROW((void)adv::axis_weights(a), std::invalid_argument);
  EXPECT_THROW((void)adv::axis_weights(std::array<double, 27>{}), std::invalid_argument);
  adv::Options o;
  EXPECT_NO_THROW((void)adv::checked_coefficients(a, o));  // the 27-term chain takes it
  o.factorized = true;
  EXPECT_THROW((void)adv::checked_coefficients(a, o), std::invalid_argument);
}

// Sum 1 (constants stay), first moments -C (a linear field moves by c D exactly), second moments
// C^2 (what makes the step second order).
TEST(Advection, CoefficientMomentsMakeTheStepSecondOrder) {
  std::mt19937_64 g(6);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  for (int t = 0; t < 200; ++t) {
    const adv::Velocity c{v(g), v(g), v(g)};
    const std::array<double, 3> nu{0.9, 0.7, 0.4};
    const auto a = adv::coefficients(c, nu);
    double sum = 0, mx = 0, my = 0, mz = 0, mxx = 0, myy = 0, mzz = 0;
    for (int k = -1; k <= 1; ++k)
      for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i) {
          const double w = coef(a, i, j, k);
          sum += w;
          mx += w * i;
          my += w * j;
          mz += w * k;
          mxx += w * i * i;
          myy += w * j * j;
          mzz += w * k * k;
        }
    EXPECT_NEAR(sum, 1.0, 1e-14);
    EXPECT_NEAR(mx, -c.x * nu[0], 1e-14);
    EXPECT_NEAR(my, -c.y * nu[1], 1e-14);
    EXPECT_NEAR(mz, -c.z * nu[2], 1e-14);
    EXPECT_NEAR(mxx, c.x * c.x * nu[0] * nu[0], 1e-14);
    EXPECT_NEAR(myy, c.y * c.y * nu[1] * nu[1], 1e-14);
    EXPECT_NEAR(mzz, c.z * c.z * nu[2] * nu[2], 1e-14);
  }
  EXPECT_THROW((void)adv::coefficients({1.0, 0.0, 0.0}, {1.01, 1.0, 1.0}), std::invalid_argument);
  EXPECT_THROW((void)adv::coefficients({0.0, NAN, 0.0}, {1.0, 1.0, 1.0}), std::invalid_argument);
  // Courant number 1: a shift by one cell, exactly.
  const auto shift = adv::coefficients({1.0, 0.0, 0.0}, {1.0, 1.0, 1.0});
  EXPECT_EQ(coef(shift, -1, 0, 0), 1.0);
  EXPECT_EQ(coef(shift, 0, 0, 0), 0.0);
}

// A constant field stays (through the periodic host step). A linear field is not periodic, so its
// exact advection is checked by applying the stencil at one point of an unbounded grid.
TEST(Advection, ConstantAndLinearFieldsAdvectExactly) {
  const adv::Grid g{9, 7, 5};
  const auto a = adv::coefficients({0.8, -0.6, 0.3}, {0.9, 0.9, 0.9});
  std::vector<double> in(g.points(), 2.5), out(g.points(), 0.0);
  adv::step_host(in, out, g, a);
  for (double x : out) EXPECT_NEAR(x, 2.5, 1e-14);

  // u(x, y, z) = 3x - 2y + 5z + 1 at an interior point, with d = 1 and D = nu: the step must give
  // u(x - c.x D, y - c.y D, z - c.z D).
  const double nu = 0.9;
  const adv::Velocity c{0.8, -0.6, 0.3};
  auto u = [](double x, double y, double z) { return 3 * x - 2 * y + 5 * z + 1; };
  double sum = 0;
  for (int k = -1; k <= 1; ++k)
    for (int j = -1; j <= 1; ++j)
      for (int i = -1; i <= 1; ++i) sum += coef(a, i, j, k) * u(4 + i, 3 + j, 2 + k);
  EXPECT_NEAR(sum, u(4 - c.x * nu, 3 - c.y * nu, 2 - c.z * nu), 1e-12);
}

// The max error against the exact solution at a fixed time falls by ~4 when the grid is refined
// by 2 (same nu): second order. A first-order bug (a wrong second moment) gives ~2.
TEST(Advection, HostStepConvergesAtSecondOrder) {
  const adv::Velocity c{1.0, 0.7, -0.4};
  const double nu = 0.8;
  const double t_end = 0.25;
  std::vector<double> errors;
  for (std::size_t n : {16U, 32U, 64U}) {
    const adv::Grid g{n, n, n};
    const double d = 1.0 / static_cast<double>(n);
    const std::size_t steps = static_cast<std::size_t>(std::lround(t_end / (nu * d)));
    const double dt = t_end / static_cast<double>(steps);  // nu adjusted so that steps land on t_end
    const auto a = adv::coefficients(c, {dt / d, dt / d, dt / d});
    std::vector<double> u(g.points()), next(g.points());
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) u[i + n * (j + n * k)] = adv::initial(i * d, j * d, k * d);
    for (std::size_t s = 0; s < steps; ++s) {
      adv::step_host(u, next, g, a);
      u.swap(next);
    }
    double worst = 0;
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i)
          worst = std::max(worst, std::fabs(u[i + n * (j + n * k)] - adv::exact(i * d, j * d, k * d, t_end, c)));
    errors.push_back(worst);
  }
  for (std::size_t r = 1; r < errors.size(); ++r) {
    const double order = std::log2(errors[r - 1] / errors[r]);
    EXPECT_GT(order, 1.8) << "errors " << errors[r - 1] << " -> " << errors[r];
    EXPECT_LT(order, 2.3) << "errors " << errors[r - 1] << " -> " << errors[r];
  }
}
