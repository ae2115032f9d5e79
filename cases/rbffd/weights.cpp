// Case "rbffd": RBF-FD weights per stencil and the operators assembled from them (weights.hpp).

#include "weights.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include "lu.hpp"

namespace cases {
namespace rbffd {

namespace {

Point scaled(Point p, double f) { return {p.x * f, p.y * f, p.z * f}; }
Point unit(Point p) { return scaled(p, 1 / std::sqrt(dot(p, p))); }

// Monomial t of degree <= d is xi^p eta^q, listed degree by degree with p falling: 1, xi, eta, xi^2, ...
struct Monomial {
  int p;
  int q;
};
std::vector<Monomial> monomial_list(int degree) {
  std::vector<Monomial> m;
  for (int k = 0; k <= degree; ++k)
    for (int p = k; p >= 0; --p) m.push_back({p, k - p});
  return m;
}

// The operators at the centre applied to the monomial xi^p eta^q: nonzero only for the few monomials
// whose derivative of that order has a constant term.
std::array<double, 4> monomial_rhs(Monomial t) {
  const auto is = [&](int p, int q) { return t.p == p && t.q == q; };
  return {is(1, 0) ? 1.0 : 0.0, is(0, 1) ? 1.0 : 0.0, is(2, 0) || is(0, 2) ? 2.0 : 0.0,
          is(4, 0) || is(0, 4) ? 24.0 : is(2, 2) ? 8.0 : 0.0};  // d^4 xi^4 = 24; 2 d_xixi d_etaeta xi^2 eta^2 = 8
}

// Scratch space of one thread, sized for one stencil.
struct Workspace {
  std::vector<double> xi, eta, a, b, system, residual;
  std::vector<std::size_t> pivots;
};

std::string centre_name(std::size_t i) {
  return "cases::rbffd::rbf_fd_weights: the stencil of node " + std::to_string(i);
}

// The weights of stencil i, written into w at the row's entries.
void stencil_weights(std::span<const Point> nodes, const Stencils& s, const std::vector<Monomial>& mono,
                     std::size_t i, Workspace& ws, Weights& w) {
  const auto begin = static_cast<std::size_t>(s.row_ptr[i]);
  const std::size_t n = static_cast<std::size_t>(s.row_ptr[i + 1]) - begin;
  const std::size_t m = mono.size();
  if (n < m)
    throw std::invalid_argument(centre_name(i) + " has " + std::to_string(n) + " nodes, fewer than the " +
                                std::to_string(m) + " monomials of the polynomial degree");
  const Point centre = nodes[i];
  const TangentBasis t = tangent_basis(centre);
  ws.xi.resize(n);
  ws.eta.resize(n);
  double s2 = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const Point p = nodes[static_cast<std::size_t>(s.cols[begin + j])];
    ws.xi[j] = dot(p, t.e1);
    ws.eta[j] = dot(p, t.e2);
    s2 = std::max(s2, ws.xi[j] * ws.xi[j] + ws.eta[j] * ws.eta[j]);
  }
  if (!(s2 > 0)) throw std::invalid_argument(centre_name(i) + " is singular: all its nodes coincide");
  // Scaled coordinates keep Phi's entries and the monomials within [0, 32] and [-1, 1] whatever N is.
  const double scale = std::sqrt(s2);
  for (std::size_t j = 0; j < n; ++j) {
    ws.xi[j] /= scale;
    ws.eta[j] /= scale;
  }
  const std::size_t k = n + m;
  ws.a.assign(k * k, 0.0);
  ws.b.assign(k * 4, 0.0);
  ws.pivots.resize(k);
  double largest = 0;
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t l = 0; l < n; ++l) {
      const double dx = ws.xi[j] - ws.xi[l], dy = ws.eta[j] - ws.eta[l];
      const double r = std::sqrt(dx * dx + dy * dy);
      ws.a[j * k + l] = r * r * r * r * r;
      largest = std::max(largest, ws.a[j * k + l]);
    }
    for (std::size_t c = 0; c < m; ++c) {
      double v = 1;
      for (int e = 0; e < mono[c].p; ++e) v *= ws.xi[j];
      for (int e = 0; e < mono[c].q; ++e) v *= ws.eta[j];
      ws.a[j * k + n + c] = v;
      ws.a[(n + c) * k + j] = v;
    }
    const double r = std::sqrt(ws.xi[j] * ws.xi[j] + ws.eta[j] * ws.eta[j]);
    const double r3 = r * r * r;
    ws.b[j * 4 + 0] = -5 * r3 * ws.xi[j];
    ws.b[j * 4 + 1] = -5 * r3 * ws.eta[j];
    ws.b[j * 4 + 2] = 25 * r3;
    ws.b[j * 4 + 3] = 225 * r;
  }
  for (std::size_t c = 0; c < m; ++c) {
    const auto rhs = monomial_rhs(mono[c]);
    for (int o = 0; o < 4; ++o) ws.b[(n + c) * 4 + static_cast<std::size_t>(o)] = rhs[static_cast<std::size_t>(o)];
  }
  ws.system = ws.a;  // kept for the refinement below
  ws.residual = ws.b;
  // Coincident nodes give two equal rows, which elimination turns into an exact zero pivot; the tolerance
  // also catches nodes that nearly coincide. Fibonacci stencils' smallest pivots are above 1e-4 of the largest
  // entry (N = 10,201, measured), nine orders above it.
  if (!lu_factor(ws.a, k, ws.pivots, 1e-13 * std::max(largest, 1.0)))
    throw std::invalid_argument(centre_name(i) + " is singular (coincident nodes?)");
  lu_solve(ws.a, k, ws.pivots, ws.b, 4);
  // One step of iterative refinement: the last rows of the system say P^T w = L p, so the row sums
  // (sum w = L 1 = 0) are the residual of the constant's row. One correction brings them from a few 1e-15 of
  // the largest weight to rounding level (spec §4 asks 2e-15; without it 2.8e-15 at
  // N = 40,000) for a tenth of the stencil's cost.
  for (std::size_t r = 0; r < k; ++r)
    for (std::size_t c = 0; c < k; ++c) {
      const double v = ws.system[r * k + c];
      for (std::size_t o = 0; o < 4; ++o) ws.residual[r * 4 + o] -= v * ws.b[c * 4 + o];
    }
  lu_solve(ws.a, k, ws.pivots, ws.residual, 4);
  for (std::size_t e = 0; e < k * 4; ++e) ws.b[e] += ws.residual[e];
  const double s4 = s2 * s2;
  for (std::size_t j = 0; j < n; ++j) {
    w.dxi[begin + j] = ws.b[j * 4 + 0] / scale;
    w.deta[begin + j] = ws.b[j * 4 + 1] / scale;
    w.lap[begin + j] = ws.b[j * 4 + 2] / s2;
    w.bilap[begin + j] = ws.b[j * 4 + 3] / s4;
  }
}

}  // namespace

TangentBasis tangent_basis(Point c) {
  // z^ x c vanishes at the poles; near them x^ x c is used instead (any unit tangent works: the basis
  // r^5 plus all monomials of degree <= d is invariant under rotations of the plane).
  const Point axis = std::fabs(c.z) >= 0.9 ? Point{1, 0, 0} : Point{0, 0, 1};
  const Point e1 = unit(cross(axis, c));
  return {e1, cross(c, e1)};
}

Weights rbf_fd_weights(std::span<const Point> nodes, const Stencils& s, int degree) {
  if (degree < 2)
    throw std::invalid_argument("cases::rbffd::rbf_fd_weights: polynomial degree " + std::to_string(degree) +
                                " is below 2, which r^5 needs for a solvable system");
  if (s.rows() != nodes.size())
    throw std::invalid_argument("cases::rbffd::rbf_fd_weights: " + std::to_string(s.rows()) +
                                " stencils for " + std::to_string(nodes.size()) + " nodes");
  const auto mono = monomial_list(degree);
  const std::size_t rows = nodes.size(), nnz = s.cols.size();
  Weights w{std::vector<double>(nnz), std::vector<double>(nnz), std::vector<double>(nnz), std::vector<double>(nnz)};
  // Contiguous blocks of rows, one per thread; each stops at its first failure and the lowest failing
  // row's error is the one thrown, so the message does not depend on the thread count.
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, rows / 512 + 1);
  std::vector<std::exception_ptr> errors(threads);
  auto block = [&](std::size_t b) {
    Workspace ws;
    try {
      for (std::size_t i = rows * b / threads; i < rows * (b + 1) / threads; ++i)
        stencil_weights(nodes, s, mono, i, ws, w);
    } catch (...) {
      errors[b] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t b = 1; b < threads; ++b) pool.emplace_back(block, b);
  block(0);
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return w;
}

Matrix laplacian(const Stencils& s, const Weights& w) { return {s.row_ptr, s.cols, w.lap}; }

Matrix combined(std::span<const Point> nodes, const Stencils& s, const Weights& w, const Coefficients& c) {
  const double n = static_cast<double>(nodes.size());
  const double hyper = c.gamma / (n * n);
  Matrix a{s.row_ptr, s.cols, std::vector<double>(s.cols.size())};
  for (std::size_t i = 0; i < s.rows(); ++i) {
    const TangentBasis t = tangent_basis(nodes[i]);
    const Point velocity = cross(c.omega, nodes[i]);
    const double v1 = dot(velocity, t.e1), v2 = dot(velocity, t.e2);
    for (auto e = static_cast<std::size_t>(s.row_ptr[i]); e < static_cast<std::size_t>(s.row_ptr[i + 1]); ++e)
      a.values[e] = -v1 * w.dxi[e] - v2 * w.deta[e] + c.nu * w.lap[e] - hyper * w.bilap[e];
  }
  return a;
}

}  // namespace rbffd
}  // namespace cases
