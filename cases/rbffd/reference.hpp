#pragma once
// Case "rbffd": the host reference: the RK4 step every GPU variant is checked against, the exact solutions
// and the error norms of the spec's table (rbffd.md §3 "Step", §4).
//
// Step (classical RK4 on u_t = A u, A from weights.hpp's combined()): four stages y = A x, k = dt y,
// next input x = u_n + alpha k (alpha = 1/2, 1/2, 1), acc += b k (b = 1/6, 1/3, 1/3, 1/6); u_{n+1} = u_n + acc.
// Time step dt = 0.5 h / (2 pi), h = sqrt(4 pi / N) (the node spacing).
//
// Exact solution: the real spherical harmonic Y_7^3 (Lap_S Y = -l (l + 1) Y = -56 Y), which for a point x
// of the unit sphere is, up to a constant factor,
//
//     Y_7^3(x) = (143 z^4 - 66 z^2 + 3) (x^3 - 3 x y^2)
//
// (P_7^3(cos theta) = (315/8) (143 cos^4 - 66 cos^2 + 3) sin^3 theta from the third derivative of P_7, and
// sin^3 theta cos 3 phi = Re (x + i y)^3). Rotated by solid-body rotation and damped by diffusion:
// u(x, t) = e^{-nu l (l + 1) t} Y(R_{-omega t} x).

#include <cstddef>
#include <span>
#include <vector>

#include "nodes.hpp"
#include "weights.hpp"

namespace cases {
namespace rbffd {

/// The spec's time step for N nodes: 0.5 h / (2 pi), h = sqrt(4 pi / N).
double time_step(std::size_t nodes);

/// y = A x. Throws std::invalid_argument if x or y does not hold one value per row.
void multiply(const Matrix& a, std::span<const double> x, std::span<double> y);

/// Advances u by `steps` RK4 steps of dt. Throws std::invalid_argument for dt <= 0 (or not finite) or a u
/// of the wrong size.
void rk4(const Matrix& a, std::span<double> u, double dt, std::size_t steps);

/// Y_7^3 at a point of the unit sphere (unnormalized, see above), and its eigenvalue of Lap_S.
double y73(Point p);
inline constexpr double y73_eigenvalue = -56.0;

/// The advection term at t = 0, -(omega x p) . grad_S Y_7^3(p): the exact value of the combined operator's
/// rotation part (omega x p is tangent, so the gradient of the polynomial above serves as grad_S).
double y73_rotation_rate(Point p, Point omega);

/// p rotated about axis `v` by the angle |v| (right hand; Rodrigues' formula). v = 0 leaves p.
Point rotate(Point p, Point v);

/// The exact solution from Y_7^3 at time t: e^{-56 nu t} Y_7^3(R_{-omega t} x).
double y73_exact(Point p, double t, const Coefficients& c);

/// The spec's bells (§4), centred at c (a point of the unit sphere): the Gaussian exp(-25 |p - c|^2) (chordal
/// distance) and the cosine bell of great-circle radius r0 (Williamson et al. 1992, test 1, amplitude 1):
/// (1 + cos(pi r / r0)) / 2 for the great-circle distance r = acos(p . c) < r0, else 0. Under solid-body rotation
/// either moves as u(x, t) = u0(R_{-omega t} x), which is u0 again after a whole turn.
double gaussian_bell(Point p, Point c);
double cosine_bell(Point p, Point c, double r0);

/// Error norms over the nodes: max |a - b| / max |b| and ||a - b||_2 / ||b||_2 (the nodes are near
/// equal-area, so the plain sums stand for the integrals).
double relative_max_error(std::span<const double> a, std::span<const double> b);
double relative_l2_error(std::span<const double> a, std::span<const double> b);

}  // namespace rbffd
}  // namespace cases
