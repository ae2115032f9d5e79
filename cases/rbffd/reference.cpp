// Case "rbffd": the host RK4 step, Y_7^3 and the error norms (reference.hpp).

#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace cases {
namespace rbffd {

double time_step(std::size_t nodes) {
  const double h = std::sqrt(4 * std::numbers::pi / static_cast<double>(nodes));
  return 0.5 * h / (2 * std::numbers::pi);
}

void multiply(const Matrix& a, std::span<const double> x, std::span<double> y) {
  if (x.size() != a.rows() || y.size() != a.rows())
    throw std::invalid_argument("cases::rbffd::multiply: x and y must hold one value per row (" +
                                std::to_string(a.rows()) + ")");
  for (std::size_t i = 0; i < a.rows(); ++i) {
    double sum = 0;
    for (auto e = static_cast<std::size_t>(a.row_ptr[i]); e < static_cast<std::size_t>(a.row_ptr[i + 1]); ++e)
      sum += a.values[e] * x[static_cast<std::size_t>(a.cols[e])];
    y[i] = sum;
  }
}

void rk4(const Matrix& a, std::span<double> u, double dt, std::size_t steps) {
  if (!(dt > 0) || !std::isfinite(dt))
    throw std::invalid_argument("cases::rbffd::rk4: time step " + std::to_string(dt) + " must be positive");
  if (u.size() != a.rows())
    throw std::invalid_argument("cases::rbffd::rk4: u holds " + std::to_string(u.size()) + " values for " +
                                std::to_string(a.rows()) + " rows");
  constexpr double alpha[3] = {0.5, 0.5, 1.0};
  constexpr double b[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
  const std::size_t n = u.size();
  std::vector<double> x(n), y(n), acc(n);
  for (std::size_t step = 0; step < steps; ++step) {
    std::copy(u.begin(), u.end(), x.begin());
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int s = 0; s < 4; ++s) {
      multiply(a, x, y);
      for (std::size_t i = 0; i < n; ++i) {
        const double k = dt * y[i];
        acc[i] += b[s] * k;
        if (s < 3) x[i] = u[i] + alpha[s] * k;
      }
    }
    for (std::size_t i = 0; i < n; ++i) u[i] += acc[i];
  }
}

double y73(Point p) {
  const double z2 = p.z * p.z;
  return (143 * z2 * z2 - 66 * z2 + 3) * (p.x * p.x * p.x - 3 * p.x * p.y * p.y);
}

double y73_rotation_rate(Point p, Point omega) {
  // Y = g(z) h(x, y) with g = 143 z^4 - 66 z^2 + 3, h = x^3 - 3 x y^2.
  const double z2 = p.z * p.z;
  const double g = 143 * z2 * z2 - 66 * z2 + 3, dg = 572 * z2 * p.z - 132 * p.z;
  const double h = p.x * p.x * p.x - 3 * p.x * p.y * p.y;
  const Point gradient{g * (3 * p.x * p.x - 3 * p.y * p.y), g * (-6 * p.x * p.y), dg * h};
  return -dot(cross(omega, p), gradient);
}

Point rotate(Point p, Point v) {
  const double angle = std::sqrt(dot(v, v));
  if (angle == 0) return p;
  const Point k{v.x / angle, v.y / angle, v.z / angle};
  const double c = std::cos(angle), s = std::sin(angle), kp = dot(k, p) * (1 - c);
  const Point kxp = cross(k, p);
  return {p.x * c + kxp.x * s + k.x * kp, p.y * c + kxp.y * s + k.y * kp, p.z * c + kxp.z * s + k.z * kp};
}

double y73_exact(Point p, double t, const Coefficients& c) {
  const Point back{-c.omega.x * t, -c.omega.y * t, -c.omega.z * t};
  return std::exp(y73_eigenvalue * c.nu * t) * y73(rotate(p, back));
}

double gaussian_bell(Point p, Point c) {
  const Point d{p.x - c.x, p.y - c.y, p.z - c.z};
  return std::exp(-25 * dot(d, d));
}

double cosine_bell(Point p, Point c, double r0) {
  const double r = std::acos(std::clamp(dot(p, c), -1.0, 1.0));
  return r < r0 ? 0.5 * (1 + std::cos(std::numbers::pi * r / r0)) : 0.0;
}

namespace {
void same_size(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || b.empty())
    throw std::invalid_argument("cases::rbffd: error norm of arrays of " + std::to_string(a.size()) + " and " +
                                std::to_string(b.size()) + " values");
}
}  // namespace

double relative_max_error(std::span<const double> a, std::span<const double> b) {
  same_size(a, b);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return num / den;
}

double relative_l2_error(std::span<const double> a, std::span<const double> b) {
  same_size(a, b);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

}  // namespace rbffd
}  // namespace cases
