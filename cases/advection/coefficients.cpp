// Case "advection": the host part shared by every variant: the Lax-Wendroff coefficients, the
// exact solution and the host reference step.

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "advection.hpp"

namespace cases {
namespace advection {

namespace {
// The one-dimensional Lax-Wendroff weights for Courant number C, for offsets -1, 0, +1.
std::array<double, 3> weights(double courant) {
  return {courant * (1 + courant) / 2, 1 - courant * courant, courant * (courant - 1) / 2};
}

double wrap(double v) { return v - std::floor(v); }
}  // namespace

std::array<double, 27> coefficients(Velocity c, std::array<double, 3> nu) {
  const std::array<double, 3> courant{c.x * nu[0], c.y * nu[1], c.z * nu[2]};
  for (double v : courant)
    if (!(std::fabs(v) <= 1.0))
      throw std::invalid_argument("cases::advection::coefficients: Courant number " + std::to_string(v) +
                                  " is unstable (|c nu| must be at most 1)");
  const auto wx = weights(courant[0]);
  const auto wy = weights(courant[1]);
  const auto wz = weights(courant[2]);
  std::array<double, 27> a{};
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) a[i + 3 * j + 9 * k] = wx[i] * wy[j] * wz[k];
  return a;
}

std::array<double, 9> axis_weights(const std::array<double, 27>& a) {
  std::array<double, 9> m{};  // the sums over the other two axes: wx[i] Sy Sz, and so on
  double sum = 0, largest = 0;
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        const double v = a[i + 3 * j + 9 * k];
        m[i] += v;
        m[3 + j] += v;
        m[6 + k] += v;
        sum += v;
        largest = std::max(largest, std::fabs(v));
      }
  if (!(std::fabs(sum) > 1e-12 * largest))
    throw std::invalid_argument("cases::advection::axis_weights: the coefficients sum to 0; no per-axis weights found");
  std::array<double, 9> w = m;
  for (int q = 0; q < 6; ++q) w[q] /= sum;  // (wx Sx)(wy Sy)(wz Sz) / S^2 = a, with S = Sx Sy Sz
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i)
        if (!(std::fabs(w[i] * w[3 + j] * w[6 + k] - a[i + 3 * j + 9 * k]) <= 1e-13 * largest))
          throw std::invalid_argument("cases::advection::axis_weights: coefficient (" + std::to_string(i - 1) + ", " +
                                      std::to_string(j - 1) + ", " + std::to_string(k - 1) +
                                      ") is not a product of per-axis weights; the stencil cannot be factorized");
  return w;
}

double initial(double x, double y, double z) {
  constexpr double two_pi = 2 * std::numbers::pi;
  return std::sin(two_pi * x) * std::cos(two_pi * y) * std::sin(two_pi * z) + 0.5;
}

double exact(double x, double y, double z, double t, Velocity c) {
  return initial(wrap(x - c.x * t), wrap(y - c.y * t), wrap(z - c.z * t));
}

void step_host(std::span<const double> in, std::span<double> out, Grid g, const std::array<double, 27>& a) {
  if (in.size() != g.points() || out.size() != g.points())
    throw std::invalid_argument("cases::advection::step_host: buffers must hold nx ny nz values");
  auto at = [&](std::size_t i, std::size_t j, std::size_t k) { return in[i + g.nx * (j + g.ny * k)]; };
  for (std::size_t k = 0; k < g.nz; ++k)
    for (std::size_t j = 0; j < g.ny; ++j)
      for (std::size_t i = 0; i < g.nx; ++i) {
        double sum = 0;
        for (int dk = -1; dk <= 1; ++dk)
          for (int dj = -1; dj <= 1; ++dj)
            for (int di = -1; di <= 1; ++di)
              sum += a[(di + 1) + 3 * (dj + 1) + 9 * (dk + 1)] *
                     at((i + g.nx + di) % g.nx, (j + g.ny + dj) % g.ny, (k + g.nz + dk) % g.nz);
        out[i + g.nx * (j + g.ny * k)] = sum;
      }
}

}  // namespace advection
}  // namespace cases
