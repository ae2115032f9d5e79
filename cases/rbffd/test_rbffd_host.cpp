// Case "rbffd", host part: the Fibonacci nodes, kNN stencils against brute force, Y_7^3 as an eigenfunction,
// the weights' accuracy and row sums, one revolution of the RK4 step (Y_7^3, the Gaussian and the cosine bell)
// against the spec's reference errors (rbffd.md §4, n = 31, d = 4, gamma = 10) at its three N with the
// convergence slopes, 10 turns bounded, and the bad input of §8. The
// errors are printed so that the logs hold the numbers README.md quotes.

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ell.hpp"
#include "lu.hpp"
#include "nodes.hpp"
#include "reference.hpp"
#include "stencils.hpp"
#include "weight_cache.hpp"
#include "weights.hpp"

namespace rbf = cases::rbffd;

namespace {

constexpr std::size_t stencil_size = 31;

// Nodes, stencils and weights of one N at n = 31, d = 4, built once per test program.
struct Setup {
  std::vector<rbf::Point> nodes;
  rbf::Stencils stencils;
  rbf::Weights weights;
};
const Setup& setup(std::size_t n) {
  static std::map<std::size_t, Setup> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    Setup s;
    s.nodes = rbf::fibonacci_nodes(n);
    s.stencils = rbf::nearest_neighbours(s.nodes, stencil_size);
    s.weights = rbf::rbf_fd_weights(s.nodes, s.stencils);
    it = cache.emplace(n, std::move(s)).first;
  }
  return it->second;
}

// max |Lap_S u - (-56 u)| / max |56 u| for u = Y_7^3 at the nodes.
double laplacian_error(const std::vector<rbf::Point>& nodes, const rbf::Matrix& lap) {
  std::vector<double> u(nodes.size()), lu(nodes.size()), exact(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    u[i] = rbf::y73(nodes[i]);
    exact[i] = rbf::y73_eigenvalue * u[i];
  }
  rbf::multiply(lap, u, lu);
  return rbf::relative_max_error(lu, exact);
}

// Checks that `call` throws std::invalid_argument whose message contains `item`.
template <class F>
void expect_invalid(F call, const std::string& item) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one naming \"" << item << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(item), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(RbffdHost, FibonacciNodesAreOnTheSphereInLatitudeOrder) {
  const auto p = rbf::fibonacci_nodes(1001);
  ASSERT_EQ(p.size(), 1001u);
  EXPECT_DOUBLE_EQ(p[0].z, 1 - 1.0 / 1001);
  EXPECT_DOUBLE_EQ(p[500].z, 0.0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(rbf::dot(p[i], p[i]), 1.0, 1e-15);
    if (i > 0) EXPECT_LT(p[i].z, p[i - 1].z);
  }
  EXPECT_TRUE(rbf::fibonacci_nodes(0).empty());
}

TEST(RbffdHost, NearestNeighboursEqualBruteForce) {
  const auto nodes = rbf::fibonacci_nodes(2000);
  for (std::size_t n : {1u, 7u, 31u, 50u}) {
    const auto fast = rbf::nearest_neighbours(nodes, n);
    const auto slow = rbf::nearest_neighbours_brute_force(nodes, n);
    ASSERT_EQ(fast.row_ptr, slow.row_ptr) << "n = " << n;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      for (auto e = fast.row_ptr[i]; e < fast.row_ptr[i + 1]; ++e)
        ASSERT_EQ(fast.cols[e], slow.cols[e]) << "n = " << n << ", row " << i << ", entry " << e - fast.row_ptr[i];
  }
  // Random points (not the Fibonacci set, with exact ties from duplicated points) and all N nodes.
  std::mt19937_64 g(3);
  std::normal_distribution<double> d;
  std::vector<rbf::Point> random(700);
  for (auto& p : random) {
    p = {d(g), d(g), d(g)};
    const double r = std::sqrt(rbf::dot(p, p));
    p = {p.x / r, p.y / r, p.z / r};
  }
  for (std::size_t i = 0; i < 50; ++i) random[600 + i] = random[i];
  for (std::size_t n : {15u, 700u}) {
    const auto fast = rbf::nearest_neighbours(random, n);
    const auto slow = rbf::nearest_neighbours_brute_force(random, n);
    EXPECT_EQ(fast.cols, slow.cols) << "n = " << n;
  }
}

TEST(RbffdHost, StencilsAreSortedByDistanceCentreFirst) {
  const auto& s = setup(10201);
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const auto b = s.stencils.row_ptr[i];
    ASSERT_EQ(s.stencils.row_ptr[i + 1] - b, 31);
    ASSERT_EQ(s.stencils.cols[b], static_cast<std::int64_t>(i));
    for (auto e = b + 1; e < s.stencils.row_ptr[i + 1]; ++e)
      ASSERT_LE(rbf::distance2(s.nodes[i], s.nodes[s.stencils.cols[e - 1]]),
                rbf::distance2(s.nodes[i], s.nodes[s.stencils.cols[e]]));
  }
}

// Lap_S of the 0-homogeneous extension f(x / |x|) equals the R^3 Laplacian of that extension on the sphere:
// a central difference with step 1e-3 (truncation ~1e-6 relative, rounding ~1e-10) checks -56 at random points.
TEST(RbffdHost, Y73IsAnEigenfunctionOfLaplaceBeltrami) {
  auto f = [](double x, double y, double z) {
    const double r = std::sqrt(x * x + y * y + z * z);
    return rbf::y73({x / r, y / r, z / r});
  };
  std::mt19937_64 g(7);
  std::normal_distribution<double> d;
  const double h = 1e-3;
  double largest = 0, worst = 0;
  for (int t = 0; t < 200; ++t) {
    rbf::Point p{d(g), d(g), d(g)};
    const double r = std::sqrt(rbf::dot(p, p));
    p = {p.x / r, p.y / r, p.z / r};
    const double c = f(p.x, p.y, p.z);
    const double lap = (f(p.x + h, p.y, p.z) + f(p.x - h, p.y, p.z) + f(p.x, p.y + h, p.z) + f(p.x, p.y - h, p.z) +
                        f(p.x, p.y, p.z + h) + f(p.x, p.y, p.z - h) - 6 * c) /
                       (h * h);
    worst = std::max(worst, std::fabs(lap - rbf::y73_eigenvalue * c));
    largest = std::max(largest, std::fabs(c));
  }
  EXPECT_LT(worst, 1e-4 * 56 * largest);
  // Not an eigenfunction for another eigenvalue: the check can tell.
  EXPECT_GT(56 * largest, 1e3 * worst);
}

// Spec §4: 5.07e-4 at N = 10,201 and 7.72e-5 at 40,000 (max norm, relative to max |56 u|), within 1.5x.
TEST(RbffdHost, LaplacianOfY73MatchesTheSpec) {
  for (auto [n, spec] : {std::pair<std::size_t, double>{10201, 5.07e-4}, {40000, 7.72e-5}}) {
    const auto& s = setup(n);
    const double e = laplacian_error(s.nodes, rbf::laplacian(s.stencils, s.weights));
    std::printf("rbffd: Lap_S Y_7^3, N = %zu, n = 31, d = 4: max relative error %.3e (spec %.2e, ratio %.3f)\n", n, e,
                spec, e / spec);
    RecordProperty("lap_error_" + std::to_string(n), std::to_string(e));
    EXPECT_LE(e, 1.5 * spec) << "N = " << n;
    EXPECT_GE(e, spec / 1.5) << "N = " << n;
  }
}

// The same measure fails for weights that are not as accurate: d = 2 at N = 10,201 lands far above 1.5x.
TEST(RbffdHost, LaplacianErrorCheckCanFail) {
  const auto& s = setup(10201);
  const auto low = rbf::rbf_fd_weights(s.nodes, s.stencils, 2);
  const double e = laplacian_error(s.nodes, rbf::laplacian(s.stencils, low));
  std::printf("rbffd: Lap_S Y_7^3, N = 10201, n = 31, d = 2: max relative error %.3e\n", e);
  EXPECT_GT(e, 1.5 * 5.07e-4);
}

// Spec §4: each row of the Laplacian's weights sums to 0 (constants are in the polynomial space) within
// 2e-15 of the row's largest weight.
TEST(RbffdHost, LaplacianRowsSumToZero) {
  for (std::size_t n : {10201u, 40000u}) {
    const auto& s = setup(n);
    double worst = 0;
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      double sum = 0, largest = 0;
      for (auto e = s.stencils.row_ptr[i]; e < s.stencils.row_ptr[i + 1]; ++e) {
        sum += s.weights.lap[e];
        largest = std::max(largest, std::fabs(s.weights.lap[e]));
      }
      worst = std::max(worst, std::fabs(sum) / largest);
    }
    std::printf("rbffd: N = %zu: largest |row sum| / largest |weight| of Lap_S %.3e\n", n, worst);
    EXPECT_LE(worst, 2e-15) << "N = " << n;
  }
}

// Spec §4 "rotation (axis z^) on Y_7^3": 1.07e-4 at N = 10,201, 8.44e-6 at 40,000. The column is the max
// relative error of the operator -(omega x x) . grad_S applied to Y_7^3 (as the Lap_S column is Lap_S's), not an
// error after one turn: these values are what that gives (1.071e-4, 8.440e-6, and 4.782e-7 at 160,000 against
// 4.78e-7), while one turn at nu = 0 gives 2.2e-3 (next test), m |omega| T = 6 pi times the operator's error.
struct Errors {
  double l2, linf;
};

// The rotation operator -(omega x x) . grad_S (omega = 2 pi z^) applied to Y_7^3 at N nodes, against the exact rate.
Errors rotation_operator_error(std::size_t n) {
  const auto& s = setup(n);
  const rbf::Coefficients k{{0, 0, 2 * std::numbers::pi}, 0, 0};
  const auto a = rbf::combined(s.nodes, s.stencils, s.weights, k);
  std::vector<double> u(n), rate(n), exact(n);
  for (std::size_t i = 0; i < n; ++i) {
    u[i] = rbf::y73(s.nodes[i]);
    exact[i] = rbf::y73_rotation_rate(s.nodes[i], k.omega);
  }
  rbf::multiply(a, u, rate);
  return {rbf::relative_l2_error(rate, exact), rbf::relative_max_error(rate, exact)};
}

TEST(RbffdHost, RotationOperatorOnY73MatchesTheSpec) {
  for (auto [n, spec] : {std::pair<std::size_t, double>{10201, 1.07e-4}, {40000, 8.44e-6}}) {
    const Errors e = rotation_operator_error(n);
    std::printf("rbffd: -(omega x x).grad_S Y_7^3, N = %zu: max relative error %.3e (spec %.2e, ratio %.3f), l2 %.3e\n",
                n, e.linf, spec, e.linf / spec, e.l2);
    RecordProperty("rotation_operator_error_" + std::to_string(n), std::to_string(e.linf));
    EXPECT_LE(e.linf, 1.5 * spec) << "N = " << n;
    EXPECT_GE(e.linf, spec / 1.5) << "N = " << n;
  }
}

// One revolution (omega = 2 pi z^, gamma = 10, RK4 at the spec's dt rounded down to a whole number of steps) at
// N = 10,201. Spec §4's last column, nu = 0.01: l2 2.20e-3 within 1.5x. For nu = 0 the spec has no value after a
// turn; the error is the advection's (diffusion adds 56 nu times Lap_S's small error), so it is held to the same
// band and printed.
// One turn of Y_7^3 about z^ at N nodes, gamma = 10.
Errors y73_one_turn(std::size_t n, double nu) {
  const auto& s = setup(n);
  const rbf::Coefficients k{{0, 0, 2 * std::numbers::pi}, nu, 10};
  const auto a = rbf::combined(s.nodes, s.stencils, s.weights, k);
  const std::size_t steps = static_cast<std::size_t>(std::ceil(1.0 / rbf::time_step(n)));
  const double dt = 1.0 / static_cast<double>(steps);
  std::vector<double> u(n), exact(n);
  for (std::size_t i = 0; i < n; ++i) {
    u[i] = rbf::y73(s.nodes[i]);
    exact[i] = rbf::y73_exact(s.nodes[i], 1.0, k);
  }
  rbf::rk4(a, u, dt, steps);
  return {rbf::relative_l2_error(u, exact), rbf::relative_max_error(u, exact)};
}

TEST(RbffdHost, OneTurnOfY73MatchesTheSpec) {
  for (const double nu : {0.01, 0.0}) {
    const std::size_t n = 10201;
    const double spec = 2.20e-3;
    const Errors e = y73_one_turn(n, nu);
    std::printf("rbffd: Y_7^3, one turn about z, nu = %g, gamma = 10, N = %zu: l2 %.3e, max %.3e (spec, nu = 0.01: "
                "l2 %.2e)\n",
                nu, n, e.l2, e.linf, spec);
    RecordProperty("one_turn_l2_nu_" + std::to_string(nu), std::to_string(e.l2));
    EXPECT_LE(e.l2, 1.5 * spec) << "nu = " << nu;
    EXPECT_GE(e.l2, spec / 1.5) << "nu = " << nu;
  }
}

// One revolution of a bell (spec §4's Gaussian and cosine-bell columns) at N = 10,201, nu = 0, gamma = 10, RK4 at
// the spec's dt rounded down to a whole number of steps; after the turn the exact solution is the initial bell.
// "Axis tilt pi/2 - 0.05" is read as Williamson's alpha: the axis in the x-z plane at pi/2 - 0.05 from z^,
// omega = 2 pi (sin alpha, 0, cos alpha), so it passes 0.05 rad from the bell's centre x0 = (1, 0, 0). This
// reading reproduces both columns to three digits; the y-z plane (the bell on a great circle) gives l2 2.2e-2
// (Gaussian) and 4.2e-2 (cosine bell), the mirrored axis (-sin alpha, 0, cos alpha) 1.69e-3 / 2.75e-3 and
// 5.74e-3 / 6.11e-3.
using BellTurn = Errors;
// `turns` revolutions of a bell with hyperviscosity `gamma`, against the initial bell.
template <class Bell>
BellTurn turns_of_bell(std::size_t n, Bell bell, std::size_t turns, double gamma) {
  const auto& s = setup(n);
  const double alpha = std::numbers::pi / 2 - 0.05, turn = 2 * std::numbers::pi;
  const rbf::Coefficients k{{turn * std::sin(alpha), 0, turn * std::cos(alpha)}, 0, gamma};
  const auto a = rbf::combined(s.nodes, s.stencils, s.weights, k);
  const std::size_t steps = static_cast<std::size_t>(std::ceil(1.0 / rbf::time_step(n)));
  const double dt = 1.0 / static_cast<double>(steps);
  std::vector<double> u(n), exact(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = exact[i] = bell(s.nodes[i]);
  rbf::rk4(a, u, dt, turns * steps);
  return {rbf::relative_l2_error(u, exact), rbf::relative_max_error(u, exact)};
}
template <class Bell>
BellTurn one_turn_of_bell(std::size_t n, Bell bell) {
  return turns_of_bell(n, bell, 1, 10);
}

// The spec's values (§4) at N = 10,201 and 40,000: l2 and max after one turn, each within 1.5x.
struct BellSpec {
  std::size_t n;
  double l2, linf;
};

template <class Bell>
std::vector<BellTurn> check_bell(const char* name, Bell bell, std::initializer_list<BellSpec> specs) {
  std::vector<BellTurn> out;
  for (const BellSpec& spec : specs) {
    const BellTurn e = one_turn_of_bell(spec.n, bell);
    std::printf("rbffd: %s, one turn about the axis tilted pi/2 - 0.05, nu = 0, gamma = 10, N = %zu: l2 %.3e (spec "
                "%.2e), max %.3e (spec %.2e)\n",
                name, spec.n, e.l2, spec.l2, e.linf, spec.linf);
    ::testing::Test::RecordProperty(std::string(name) + "_one_turn_l2_" + std::to_string(spec.n), std::to_string(e.l2));
    ::testing::Test::RecordProperty(std::string(name) + "_one_turn_max_" + std::to_string(spec.n), std::to_string(e.linf));
    EXPECT_LE(e.l2, 1.5 * spec.l2) << name << ", N = " << spec.n;
    EXPECT_GE(e.l2, spec.l2 / 1.5) << name << ", N = " << spec.n;
    EXPECT_LE(e.linf, 1.5 * spec.linf) << name << ", N = " << spec.n;
    EXPECT_GE(e.linf, spec.linf / 1.5) << name << ", N = " << spec.n;
    out.push_back(e);
  }
  return out;
}

// -log(error) against log(N) between two node counts (the spec's slope, goal 7, from two of its three N).
double slope(double e_small, double e_large, std::size_t n_small, std::size_t n_large) {
  return -(std::log(e_large) - std::log(e_small)) / (std::log(static_cast<double>(n_large)) - std::log(static_cast<double>(n_small)));
}

TEST(RbffdHost, OneTurnOfGaussianBellMatchesTheSpec) {
  const rbf::Point x0{1, 0, 0};
  const std::vector<BellTurn> e = check_bell("gaussian", [&](rbf::Point p) { return rbf::gaussian_bell(p, x0); },
                                             {{10201, 1.70e-3, 2.75e-3}, {40000, 1.15e-4, 1.86e-4}});
  // The spec asks >= 1.8 over its three N (its own values: 2.0); from 10,201 to 40,000 its table gives 1.97.
  const double s = slope(e[0].l2, e[1].l2, 10201, 40000);
  std::printf("rbffd: gaussian l2 slope from N = 10,201 to 40,000: %.3f (spec goal >= 1.8)\n", s);
  RecordProperty("gaussian_l2_slope", std::to_string(s));
  EXPECT_GE(s, 1.8);
}

TEST(RbffdHost, OneTurnOfCosineBellMatchesTheSpec) {
  const rbf::Point x0{1, 0, 0};
  check_bell("cosine_bell", [&](rbf::Point p) { return rbf::cosine_bell(p, x0, 1.0 / 3); },
             {{10201, 6.05e-3, 5.35e-3}, {40000, 1.24e-3, 1.72e-3}});
}

// The least-squares slope of -log(error) against log(N) over several node counts (spec goal 7).
double least_squares_slope(const std::vector<std::size_t>& n, const std::vector<double>& e) {
  double mx = 0, my = 0;
  for (std::size_t k = 0; k < n.size(); ++k) {
    mx += std::log(static_cast<double>(n[k])) / static_cast<double>(n.size());
    my += -std::log(e[k]) / static_cast<double>(n.size());
  }
  double sxy = 0, sxx = 0;
  for (std::size_t k = 0; k < n.size(); ++k) {
    const double x = std::log(static_cast<double>(n[k])) - mx;
    sxy += x * (-std::log(e[k]) - my);
    sxx += x * x;
  }
  return sxy / sxx;
}

void expect_within_spec(const char* what, std::size_t n, double got, double spec) {
  std::printf("rbffd: %s, N = %zu: %.3e (spec %.2e, ratio %.3f)\n", what, n, got, spec, got / spec);
  ::testing::Test::RecordProperty(std::string(what) + "_" + std::to_string(n), std::to_string(got));
  EXPECT_LE(got, 1.5 * spec) << what << ", N = " << n;
  EXPECT_GE(got, spec / 1.5) << what << ", N = " << n;
}

// Spec goal 7 at the largest reference size: every §4 value at N = 160,000 within 1.5x (Lap_S 9.04e-6, the
// rotation operator 4.78e-7, the Gaussian 6.94e-6 / 1.15e-5, the cosine bell 3.09e-4 / 6.24e-4, Y_7^3 with
// nu = 0.01 after a turn 9.83e-6; and that column at 40,000, 1.75e-4), and the least-squares slopes of
// -log(error) against log(N) over 10,201, 40,000 and 160,000: >= 1.8 for the Gaussian and the rotation operator,
// >= 1.3 for Lap_S (the spec's own: 2.0, 1.97, 1.46).
TEST(RbffdHost, LargestReferenceSizeAndThreePointSlopes) {
  const std::vector<std::size_t> sizes{10201, 40000, 160000};
  std::vector<double> lap, rotation, gaussian;
  const rbf::Point x0{1, 0, 0};
  Errors largest{};
  for (std::size_t n : sizes) {
    lap.push_back(laplacian_error(setup(n).nodes, rbf::laplacian(setup(n).stencils, setup(n).weights)));
    rotation.push_back(rotation_operator_error(n).linf);
    largest = one_turn_of_bell(n, [&](rbf::Point p) { return rbf::gaussian_bell(p, x0); });
    gaussian.push_back(largest.l2);
  }
  expect_within_spec("lap_max", 160000, lap[2], 9.04e-6);
  expect_within_spec("rotation_operator_max", 160000, rotation[2], 4.78e-7);
  expect_within_spec("gaussian_one_turn_l2", 160000, largest.l2, 6.94e-6);
  expect_within_spec("gaussian_one_turn_max", 160000, largest.linf, 1.15e-5);
  check_bell("cosine_bell", [&](rbf::Point p) { return rbf::cosine_bell(p, x0, 1.0 / 3); }, {{160000, 3.09e-4, 6.24e-4}});
  expect_within_spec("y73_one_turn_nu_0.01_l2", 40000, y73_one_turn(40000, 0.01).l2, 1.75e-4);
  expect_within_spec("y73_one_turn_nu_0.01_l2", 160000, y73_one_turn(160000, 0.01).l2, 9.83e-6);
  const double s_gauss = least_squares_slope(sizes, gaussian), s_rot = least_squares_slope(sizes, rotation),
               s_lap = least_squares_slope(sizes, lap);
  std::printf("rbffd: least-squares slopes of -log(error) vs log(N) over 10,201, 40,000, 160,000: Gaussian l2 %.3f "
              "(goal >= 1.8), rotation operator max %.3f (goal >= 1.8), Lap_S max %.3f (goal >= 1.3)\n",
              s_gauss, s_rot, s_lap);
  RecordProperty("slope_gaussian_l2", std::to_string(s_gauss));
  RecordProperty("slope_rotation_max", std::to_string(s_rot));
  RecordProperty("slope_lap_max", std::to_string(s_lap));
  EXPECT_GE(s_gauss, 1.8);
  EXPECT_GE(s_rot, 1.8);
  EXPECT_GE(s_lap, 1.3);
}

// Spec §4 stability: with gamma = 10 both bells stay bounded over 10 turns at N = 10,201 (its 100 turns end at
// l2 0.12 and 0.16); without the hyperviscosity (gamma = 0) the Gaussian blows up within them (its l2 100), so
// the bound can fail.
TEST(RbffdHost, TenTurnsStayBoundedWithHyperviscosityOnly) {
  const std::size_t n = 10201;
  const rbf::Point x0{1, 0, 0};
  const auto ten_turns = [&](double gamma, auto bell) { return turns_of_bell(n, bell, 10, gamma).l2; };
  const auto gaussian = [&](rbf::Point p) { return rbf::gaussian_bell(p, x0); };
  const auto cosine = [&](rbf::Point p) { return rbf::cosine_bell(p, x0, 1.0 / 3); };
  const double g10 = ten_turns(10, gaussian), c10 = ten_turns(10, cosine), g0 = ten_turns(0, gaussian);
  std::printf("rbffd: 10 turns at N = 10,201: gamma = 10 Gaussian l2 %.3e, cosine bell l2 %.3e; gamma = 0 Gaussian "
              "l2 %.3e\n",
              g10, c10, g0);
  RecordProperty("ten_turns_gaussian_l2", std::to_string(g10));
  RecordProperty("ten_turns_cosine_bell_l2", std::to_string(c10));
  RecordProperty("ten_turns_gaussian_gamma0_l2", std::to_string(g0));
  EXPECT_LE(g10, 0.12);
  EXPECT_LE(c10, 0.16);
  EXPECT_GT(g0, 1.0) << "without hyperviscosity the Gaussian should blow up within 10 turns";
}

// The weight cache (weight_cache.hpp): the first call computes and keeps the weights, the second reads them back
// bit for bit; a file changed in one byte, cut short or grown, or kept for other nodes of the same N, is not
// used (the weights computed again, equal); a folder that cannot be made still gives the weights.
TEST(RbffdHost, WeightCacheReadsBackWhatItKeptAndRejectsBadFiles) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / ("cush_rbffd_cache_" + std::to_string(std::random_device{}()));
  fs::remove_all(folder);
  const std::vector<rbf::Point> nodes = rbf::fibonacci_nodes(2000);
  const rbf::Stencils st = rbf::nearest_neighbours(nodes, stencil_size);
  const rbf::Weights direct = rbf::rbf_fd_weights(nodes, st);
  const auto same = [&](const rbf::Weights& w) {
    return w.dxi == direct.dxi && w.deta == direct.deta && w.lap == direct.lap && w.bilap == direct.bilap;
  };
  rbf::CacheUse use{};
  EXPECT_TRUE(same(rbf::cached_weights(nodes, st, rbf::default_degree, folder, &use)));
  EXPECT_EQ(use, rbf::CacheUse::computed);
  const fs::path file = rbf::weights_file(nodes, st, rbf::default_degree, folder);
  ASSERT_TRUE(fs::exists(file));
  EXPECT_TRUE(same(rbf::cached_weights(nodes, st, rbf::default_degree, folder, &use)));
  EXPECT_EQ(use, rbf::CacheUse::read);

  // One byte of the lap weights changed: the stored hash no longer matches.
  const auto size = fs::file_size(file);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    const char x = static_cast<char>(~f.get());
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write(&x, 1);
  }
  EXPECT_TRUE(same(rbf::cached_weights(nodes, st, rbf::default_degree, folder, &use)));
  EXPECT_EQ(use, rbf::CacheUse::computed) << "a changed file was used";
  EXPECT_TRUE(same(rbf::cached_weights(nodes, st, rbf::default_degree, folder, &use)));
  EXPECT_EQ(use, rbf::CacheUse::read) << "the file written again is not read back";
  // Cut short, then grown by a byte.
  fs::resize_file(file, size - 8);
  (void)rbf::cached_weights(nodes, st, rbf::default_degree, folder, &use);
  EXPECT_EQ(use, rbf::CacheUse::computed) << "a short file was used";
  { std::ofstream(file, std::ios::app | std::ios::binary).put('x'); }
  (void)rbf::cached_weights(nodes, st, rbf::default_degree, folder, &use);
  EXPECT_EQ(use, rbf::CacheUse::computed) << "a long file was used";

  // Other nodes of the same N (one moved a little), or another degree: another file.
  std::vector<rbf::Point> moved = nodes;
  moved[777].x += 1e-9;
  EXPECT_NE(rbf::weights_file(moved, st, rbf::default_degree, folder), file);
  EXPECT_NE(rbf::weights_file(nodes, st, 3, folder), file);
  (void)rbf::cached_weights(moved, st, rbf::default_degree, folder, &use);
  EXPECT_EQ(use, rbf::CacheUse::computed);

  // A folder below a plain file cannot be made: the weights all the same.
  EXPECT_TRUE(same(rbf::cached_weights(nodes, st, rbf::default_degree, file / "below", &use)));
  EXPECT_EQ(use, rbf::CacheUse::computed);
  fs::remove_all(folder);
}

TEST(RbffdHost, ExactSolutionRotatesBackwards) {
  // After a quarter turn about z^ the value at x is the initial value at R_{-pi/2} x.
  const rbf::Point p{0.3, 0.4, std::sqrt(1 - 0.25)};
  const rbf::Coefficients k{};
  const rbf::Point q = rbf::rotate(p, {0, 0, -std::numbers::pi / 2});
  EXPECT_NEAR(q.x, 0.4, 1e-15);
  EXPECT_NEAR(q.y, -0.3, 1e-15);
  EXPECT_NEAR(rbf::y73_exact(p, 0.25, k), rbf::y73(q), 1e-15);
  EXPECT_NEAR(rbf::y73_exact(p, 1.0, k), rbf::y73(p), 1e-14);
}

TEST(RbffdHost, LuSolvesAPivotingSystem) {
  // [[0, 1], [1, 0]] needs a row swap; [[1, 1], [1, 1]] is singular.
  std::vector<double> a{0, 2, 3, 0}, b{4, 9};
  std::vector<std::size_t> p(2);
  ASSERT_TRUE(rbf::lu_factor(a, 2, p, 0));
  rbf::lu_solve(a, 2, p, b, 1);
  EXPECT_DOUBLE_EQ(b[0], 3);
  EXPECT_DOUBLE_EQ(b[1], 2);
  std::vector<double> s{1, 1, 1, 1};
  EXPECT_FALSE(rbf::lu_factor(s, 2, p, 0));
}

TEST(RbffdHost, BadInputIsRejectedNamingTheItem) {
  const auto nodes = rbf::fibonacci_nodes(100);
  expect_invalid([&] { rbf::nearest_neighbours(nodes, 101); }, "n = 101");
  expect_invalid([&] { rbf::nearest_neighbours(nodes, 0); }, "n = 0");
  // n = 14 < 15 monomials of degree 4: the first stencil names its centre.
  const auto small = rbf::nearest_neighbours(nodes, 14);
  expect_invalid([&] { rbf::rbf_fd_weights(nodes, small); }, "node 0 has 14 nodes, fewer than the 15");
  expect_invalid([&] { rbf::rbf_fd_weights(nodes, rbf::nearest_neighbours(nodes, 31), 1); }, "degree 1");
  // Node 57 duplicated as node 100: the first stencil holding both (the lowest centre) is named.
  auto twin = nodes;
  twin.push_back(nodes[57]);
  const auto st = rbf::nearest_neighbours(twin, 31);
  std::size_t first = twin.size();
  for (std::size_t i = 0; i < twin.size() && first == twin.size(); ++i) {
    bool a = false, b = false;
    for (auto e = st.row_ptr[i]; e < st.row_ptr[i + 1]; ++e) {
      a = a || st.cols[e] == 57;
      b = b || st.cols[e] == 100;
    }
    if (a && b) first = i;
  }
  ASSERT_LT(first, twin.size());
  expect_invalid([&] { rbf::rbf_fd_weights(twin, st); }, "stencil of node " + std::to_string(first) + " is singular");
  const rbf::Matrix m{{0, 1}, {0}, {1.0}};
  std::vector<double> u{1.0};
  expect_invalid([&] { rbf::rk4(m, u, 0.0, 1); }, "time step");
  expect_invalid([&] { rbf::rk4(m, u, -1.0, 1); }, "time step");
}

// The grid search at the size of the spec's largest reference run: every row holds n nodes, the centre
// first, each node once. (Its speed belongs in a benchmark, not here.)
TEST(RbffdHost, NearestNeighboursAtTheLargestReferenceSize) {
  const auto nodes = rbf::fibonacci_nodes(160000);
  const auto s = rbf::nearest_neighbours(nodes, stencil_size);
  ASSERT_EQ(s.cols.size(), 160000u * 31);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto first = static_cast<std::size_t>(s.row_ptr[i]);
    ASSERT_EQ(s.row_ptr[i + 1] - s.row_ptr[i], 31) << "row " << i;
    ASSERT_EQ(s.cols[first], static_cast<std::int64_t>(i)) << "row " << i;
    std::vector<std::int64_t> row(s.cols.begin() + static_cast<std::ptrdiff_t>(first),
                                  s.cols.begin() + static_cast<std::ptrdiff_t>(first + 31));
    std::sort(row.begin(), row.end());
    ASSERT_EQ(std::adjacent_find(row.begin(), row.end()), row.end()) << "row " << i << " holds a node twice";
  }
}

// CSR to ELL: column-major, each row's entries in order, short rows padded with weight 0 at the
// row's last column (column 0 for an empty row); bad input named.
TEST(RbffdHost, EllKeepsEachRowsEntryOrder) {
  const std::vector<std::int64_t> row_ptr{0, 3, 3, 4};
  const std::vector<std::int32_t> cols{2, 0, 1, 1};
  const std::vector<double> values{0.5, -1.0, 2.0, 7.0};
  const rbf::Ell e = rbf::ell_from_csr(row_ptr, cols, values);
  ASSERT_EQ(e.rows, 3u);
  ASSERT_EQ(e.width, 3u);
  // Entry k of row r at k * rows + r.
  EXPECT_EQ(e.cols, (std::vector<std::int32_t>{2, 0, 1, 0, 0, 1, 1, 0, 1}));
  EXPECT_EQ(e.values, (std::vector<double>{0.5, 0.0, 7.0, -1.0, 0.0, 0.0, 2.0, 0.0, 0.0}));
  expect_invalid([&] { rbf::ell_from_csr(std::vector<std::int64_t>{1, 2}, cols, values); }, "start at 0");
  expect_invalid([&] { rbf::ell_from_csr(std::vector<std::int64_t>{0, 3, 2, 4}, cols, values); }, "decreases at row 1");
  expect_invalid([&] { rbf::ell_from_csr(std::vector<std::int64_t>{0, 3, 3, 3}, cols, values); }, "ends at 3");
  EXPECT_EQ(rbf::narrow_columns(std::vector<std::int64_t>{0, 5, INT32_MAX}), (std::vector<std::int32_t>{0, 5, INT32_MAX}));
  expect_invalid([&] { (void)rbf::narrow_columns(std::vector<std::int64_t>{0, std::int64_t{INT32_MAX} + 1}); }, "entry 1");
  expect_invalid([&] { (void)rbf::narrow_columns(std::vector<std::int64_t>{-1}); }, "entry 0");
}

// Rows [first, first + count) of a CSR matrix as an ELL matrix of their own.
TEST(RbffdHost, EllOfRowsTakesTheAskedRows) {
  const std::vector<std::int64_t> row_ptr{0, 3, 3, 4, 6};
  const std::vector<std::int32_t> cols{2, 0, 1, 1, 3, 0};
  const std::vector<double> values{0.5, -1.0, 2.0, 7.0, 8.0, 9.0};
  const rbf::Ell e = rbf::ell_of_rows(row_ptr, cols, values, 1, 3);  // rows 1 (empty), 2, 3
  ASSERT_EQ(e.rows, 3u);
  ASSERT_EQ(e.width, 2u);
  EXPECT_EQ(e.cols, (std::vector<std::int32_t>{0, 1, 3, 0, 1, 0}));
  EXPECT_EQ(e.values, (std::vector<double>{0.0, 7.0, 8.0, 0.0, 0.0, 9.0}));
  EXPECT_EQ(rbf::ell_of_rows(row_ptr, cols, values, 4, 0).rows, 0u);
  expect_invalid([&] { (void)rbf::ell_of_rows(row_ptr, cols, values, 2, 3); }, "rows [2, 5) of 4");
}
