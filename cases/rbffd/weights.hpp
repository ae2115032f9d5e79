#pragma once
// Case "rbffd": the RBF-FD weights and the operators built from them (spec rbffd.md §3 "Weights", "PDE").
//
// Per stencil, in the tangent plane at its centre x_c: e1 = unit(z^ x x_c) (x^ x x_c where |z_c| >= 0.9,
// away from the poles), e2 = x_c x e1; node x_j sits at xi_j = x_j . e1, eta_j = x_j . e2 (the orthogonal
// projection, a chart of the sphere near x_c), coordinates divided by the stencil's largest radius s. The
// sphere's metric in this chart has zero first derivatives at the centre, so there Laplace-Beltrami is
// d_xixi + d_etaeta and the surface gradient is d_xi e1 + d_eta e2.
//
// The weights w of an operator L solve the augmented (saddle-point) system
//
//     [ Phi  P ] [ w      ]   [ L phi_j(0) ]        Phi_jk = |(xi, eta)_j - (xi, eta)_k|^5
//     [ P^T  0 ] [ lambda ] = [ L p_t(0)   ]        P_jt   = monomial t (degree <= d) at node j
//
// so that they are exact on the polynomials of degree d and interpolate with r^5 besides. At the centre:
// d_xi r^5 = -5 r^3 xi_j, Laplacian 25 r^3, bi-Laplacian 225 r; the weights found in scaled coordinates are
// divided by s, s^2 and s^4. Each stencil's system is solved by lu.hpp, 46 x 46 at n = 31, d = 4.

#include <cstddef>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "nodes.hpp"
#include "stencils.hpp"

namespace cases {
namespace rbffd {

/// The polynomial degree of the spec's tests (15 monomials in two variables).
inline constexpr int default_degree = 4;

/// The number of monomials of degree at most d in two variables, (d + 1)(d + 2) / 2: a stencil needs at
/// least that many nodes.
constexpr std::size_t monomials(int degree) {
  return static_cast<std::size_t>(degree + 1) * static_cast<std::size_t>(degree + 2) / 2;
}

/// The tangent basis at a point of the unit sphere (see above).
struct TangentBasis {
  Point e1;
  Point e2;
};
TangentBasis tangent_basis(Point centre);

/// The weights of the four operators, one per stencil entry, in the order of Stencils::cols.
struct Weights {
  std::vector<double> dxi;    ///< d/dxi at the centre
  std::vector<double> deta;   ///< d/deta
  std::vector<double> lap;    ///< Laplace-Beltrami (d_xixi + d_etaeta)
  std::vector<double> bilap;  ///< the planar bi-Laplacian, the stabilizer's operator
};

/// The weights of every stencil, computed on every core (each stencil on its own, so the result does not
/// depend on the thread count). Throws std::invalid_argument for degree < 2 (r^5 needs the quadratics for a
/// solvable system), a stencil with fewer than monomials(degree) nodes (naming its centre), or a singular
/// local system such as one with coincident nodes (naming the centre).
Weights rbf_fd_weights(std::span<const Point> nodes, const Stencils& stencils, int degree = default_degree);

/// A sparse matrix in CSR, with the stencils' sparsity.
struct Matrix {
  std::vector<std::int64_t> row_ptr;
  std::vector<std::int64_t> cols;
  std::vector<double> values;
  [[nodiscard]] std::size_t rows() const noexcept { return row_ptr.empty() ? 0 : row_ptr.size() - 1; }
};

/// Laplace-Beltrami on the sphere.
Matrix laplacian(const Stencils& stencils, const Weights& w);

/// The PDE's coefficients: u_t = -(omega x x) . grad_S u + nu Lap_S u - gamma N^-2 Lap^2 u.
struct Coefficients {
  Point omega{0, 0, 2 * std::numbers::pi};  ///< one turn per unit time about z^
  double nu = 0;                             ///< diffusion
  double gamma = 10;  ///< hyperviscosity; 0 is allowed, but unstable over many turns (spec §4)
};

/// The combined matrix A of u_t = A u: row c is -((omega x x_c) . e1) w_xi - ((omega x x_c) . e2) w_eta
/// + nu w_lap - gamma N^-2 w_bilap.
Matrix combined(std::span<const Point> nodes, const Stencils& stencils, const Weights& w, const Coefficients& c);

}  // namespace rbffd
}  // namespace cases
