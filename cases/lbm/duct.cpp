// Case "lbm", host part: the duct's checks, the kernels' parameters, and the analytic fully
// developed flow it is validated against (spec §2).
//
// White's series for a rectangular duct -a <= x <= a, -b <= y <= b, pressure gradient (here body
// force) G, viscosity mu:
//
//   u(x, y) = 16 a^2 G / (mu pi^3) sum_{n = 1, 3, 5, ..} (-1)^((n-1)/2)
//             [1 - cosh(n pi y / 2a) / cosh(n pi b / 2a)] cos(n pi x / 2a) / n^3.
//
// Its first part sums in closed form to the plane Poiseuille flow between x = +-a,
// G (a^2 - x^2) / (2 mu) (the Fourier series of the parabola), so what is summed here is only
// the correction, whose terms fall like exp(-n pi (b - |y|) / 2a) / n^3: a few hundred terms at
// the first fluid cell of a 64-cell duct instead of ~10^5 for the 1/n^3 tail.

#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "lbm.hpp"

namespace cases {
namespace lbm {

namespace {

std::string str(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// cosh(p) / cosh(q) for 0 <= |p| <= q, without overflow.
double cosh_ratio(double p, double q) {
  p = std::fabs(p);
  return std::exp(p - q) * (1.0 + std::exp(-2.0 * p)) / (1.0 + std::exp(-2.0 * q));
}

// u_z at duct coordinates (X, Y) from the centre, |X| <= a, |Y| < b, for G / mu = 1.
double white(double a, double b, double X, double Y) {
  const double pi = std::numbers::pi;
  const double plates = (a * a - X * X) / 2.0;
  const double scale = 16.0 * a * a / (pi * pi * pi);
  double sum = 0.0;
  for (long n = 1;; n += 2) {
    const double k = static_cast<double>(n) * pi / (2.0 * a);
    const double sign = (n / 2) % 2 == 0 ? 1.0 : -1.0;  // (-1)^((n-1)/2)
    const double r = cosh_ratio(k * Y, k * b);
    const double n3 = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    sum += sign * r * std::cos(k * X) / n3;
    // The remaining terms are bounded by r / n^3 each, falling geometrically with n.
    if (scale * r / n3 < 1e-16 * std::fabs(plates - scale * sum) || n > 100000000) break;
  }
  return plates - scale * sum;
}

}  // namespace

void check(const Duct& duct) {
  constexpr std::size_t kMax = static_cast<std::size_t>(std::numeric_limits<int>::max() / 2);
  if (duct.nx < 3 || duct.nx > kMax)
    throw std::invalid_argument("cases::lbm: duct nx = " + std::to_string(duct.nx) +
                                " (needs 3 or more: a solid wall cell on each side and fluid between)");
  if (duct.ny < 3 || duct.ny > kMax)
    throw std::invalid_argument("cases::lbm: duct ny = " + std::to_string(duct.ny) +
                                " (needs 3 or more: a solid wall cell on each side and fluid between)");
  if (duct.nz < 1 || duct.nz > kMax)
    throw std::invalid_argument("cases::lbm: duct nz = " + std::to_string(duct.nz) + " (needs at least one layer)");
  if (!(duct.tau > 0.5) || !std::isfinite(duct.tau))
    throw std::invalid_argument("cases::lbm: relaxation time tau = " + str(duct.tau) +
                                " (needs tau > 1/2: viscosity (tau - 1/2) / 3 must be positive)");
  if (!std::isfinite(duct.force)) throw std::invalid_argument("cases::lbm: force = " + str(duct.force) + " is not finite");
}

Physics physics(const Duct& duct) {
  check(duct);
  Physics p;
  p.omega = static_cast<float>(1.0 / duct.tau);
  p.force_z = static_cast<float>(duct.force);
  return p;
}

double analytic_uz(const Duct& duct, std::size_t x, std::size_t y) {
  check(duct);
  if (x < 1 || x > duct.nx - 2 || y < 1 || y > duct.ny - 2)
    throw std::invalid_argument("cases::lbm::analytic_uz: cell (" + std::to_string(x) + ", " + std::to_string(y) +
                                ") is not a fluid cell of a " + std::to_string(duct.nx) + " x " +
                                std::to_string(duct.ny) + " duct");
  const double a = static_cast<double>(duct.nx - 2) / 2.0, b = static_cast<double>(duct.ny - 2) / 2.0;
  const double X = static_cast<double>(x) - static_cast<double>(duct.nx - 1) / 2.0;
  const double Y = static_cast<double>(y) - static_cast<double>(duct.ny - 1) / 2.0;
  const double mu = duct.viscosity();  // rho0 = 1
  return duct.force / mu * white(a, b, X, Y);
}

double force_for(const Duct& duct, double u_max) {
  check(duct);
  if (!std::isfinite(u_max)) throw std::invalid_argument("cases::lbm::force_for: u_max = " + str(u_max) + " is not finite");
  const double a = static_cast<double>(duct.nx - 2) / 2.0, b = static_cast<double>(duct.ny - 2) / 2.0;
  return u_max * duct.viscosity() / white(a, b, 0.0, 0.0);
}

double l2_error(const Duct& duct, const Moments& m, std::size_t z) {
  check(duct);
  if (z >= duct.nz)
    throw std::invalid_argument("cases::lbm::l2_error: z = " + std::to_string(z) + " is not a layer of a duct of " +
                                std::to_string(duct.nz));
  if (m.uz.size() != duct.cells())
    throw std::invalid_argument("cases::lbm::l2_error: " + std::to_string(m.uz.size()) + " values of u_z for " +
                                std::to_string(duct.cells()) + " cells");
  double err = 0.0, ref = 0.0;
  for (std::size_t y = 1; y + 1 < duct.ny; ++y)
    for (std::size_t x = 1; x + 1 < duct.nx; ++x) {
      const double ua = analytic_uz(duct, x, y);
      const double u = m.uz[x + duct.nx * (y + duct.ny * z)];
      err += (u - ua) * (u - ua);
      ref += ua * ua;
    }
  if (!(ref > 0.0)) throw std::invalid_argument("cases::lbm::l2_error: the analytic flow is zero (force = 0)");
  return std::sqrt(err / ref);
}

}  // namespace lbm
}  // namespace cases
