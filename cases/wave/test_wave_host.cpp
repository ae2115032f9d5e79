// Case "wave", host numerics: the seed's coefficient table has the orders it claims, the Courant
// limits are the spec's, the discrete operator converges at its order, and the host leapfrog
// moves the discrete mode exactly as cos(n theta); the steps a launch may fuse are checked before
// any GPU is used.

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "coefficients.hpp"
#include "diamond_kernel.hpp"
#include "diamond_variant.hpp"
#include "kernels.hpp"
#include "reference.hpp"

namespace wv = cases::wave;

// Rows sum to zero, sum C_k k^2 = 1 (the second derivative), sum C_k k^(2m) = 0 for m = 2 ..
// order/2 (the Taylor terms below the order cancel).
TEST(WaveHost, CoefficientsHaveTheirOrder) {
  for (int order : wv::kOrders) {
    const auto c = wv::coefficients(order);
    ASSERT_EQ(c.size(), static_cast<std::size_t>(order / 2 + 1));
    double row = 2 * c[0];
    for (std::size_t k = 1; k < c.size(); ++k) row += 2 * c[k];
    EXPECT_NEAR(row, 0.0, 1e-15) << "order " << order;
    for (int m = 1; m <= order / 2; ++m) {
      double moment = 0, scale = 0;
      for (std::size_t k = 1; k < c.size(); ++k) {
        const double term = c[k] * std::pow(static_cast<double>(k), 2 * m);
        moment += term;
        scale += std::fabs(term);
      }
      EXPECT_NEAR(moment, m == 1 ? 1.0 : 0.0, 1e-14 * scale) << "order " << order << ", moment k^" << 2 * m;
    }
    // And the next moment does not cancel: the order is not higher than claimed.
    double next = 0;
    for (std::size_t k = 1; k < c.size(); ++k) next += c[k] * std::pow(static_cast<double>(k), order + 2);
    EXPECT_GT(std::fabs(next), 1e-3) << "order " << order;
  }
  EXPECT_THROW((void)wv::coefficients(3), std::invalid_argument);
  EXPECT_EQ(wv::radius(8), 4U);
}

// The spec's limits (s^2 max |h^2 lambda| <= 4): 0.5774, 0.5, 0.4697, 0.4529.
TEST(WaveHost, CourantLimitsAreTheSpecs) {
  const double want[] = {0.5774, 0.5, 0.4697, 0.4529};
  for (std::size_t i = 0; i < wv::kOrders.size(); ++i) {
    const int order = wv::kOrders[i];
    EXPECT_NEAR(wv::courant_limit(order), want[i], 5e-5) << "order " << order;
    EXPECT_NO_THROW(wv::check_courant(order, 0.999 * wv::courant_limit(order)));
    EXPECT_THROW(wv::check_courant(order, 1.001 * wv::courant_limit(order)), std::invalid_argument);
  }
  EXPECT_THROW(wv::check_courant(2, 0.0), std::invalid_argument);
  EXPECT_THROW(wv::check_courant(2, -0.1), std::invalid_argument);
}

// lambda_h + 3 (2 pi)^2 falls as h^order: the observed order over n = 8, 16, 32 within 0.3.
TEST(WaveHost, DiscreteOperatorConvergesAtItsOrder) {
  for (int order : wv::kOrders) {
    std::vector<double> error;
    for (std::size_t n : {8U, 16U, 32U}) {
      const double h = 1.0 / static_cast<double>(n);
      error.push_back(std::fabs(wv::mode_eigenvalue(order, n) / (h * h) + 3 * std::pow(2 * std::numbers::pi, 2)));
    }
    for (std::size_t i = 0; i + 1 < error.size(); ++i) {
      const double observed = std::log2(error[i] / error[i + 1]);
      EXPECT_NEAR(observed, order, 0.3) << "order " << order << ", n = " << (8U << i) << " to " << (16U << i);
    }
  }
}

// Started with u^{-1} = cos(theta) u^0, 1000 leapfrog steps give cos(1000 theta) u^0 within 1e-10.
TEST(WaveHost, TheDiscreteModeTurnsExactly) {
  constexpr std::size_t n = 16, steps = 1000;
  for (int order : wv::kOrders) {
    const double courant = 0.9 * wv::courant_limit(order);
    const double theta = wv::mode_angle(order, courant, n);
    const std::vector<double> u0 = wv::mode(n);
    std::vector<double> prev(u0.size()), cur = u0, next(u0.size());
    for (std::size_t i = 0; i < u0.size(); ++i) prev[i] = std::cos(theta) * u0[i];
    for (std::size_t s = 0; s < steps; ++s) {
      // Alternately in place over the older level (the seed's way) and into a third array.
      if (s % 2 == 0) {
        wv::step_host(order, courant * courant, n, prev, cur, prev);
        std::swap(prev, cur);
      } else {
        wv::step_host(order, courant * courant, n, prev, cur, next);
        prev = cur;
        cur = next;
      }
    }
    const double a = std::cos(static_cast<double>(steps) * theta);
    double worst = 0;
    for (std::size_t i = 0; i < u0.size(); ++i) worst = std::max(worst, std::fabs(cur[i] - a * u0[i]));
    EXPECT_LE(worst, 1e-10) << "order " << order << ", cos(n theta) = " << a;
    // The test can fail: a step with the wrong Courant number drifts off the cosine.
    std::vector<double> p(u0.size()), q = u0;
    for (std::size_t i = 0; i < u0.size(); ++i) p[i] = std::cos(theta) * u0[i];
    for (std::size_t s = 0; s < steps; ++s) {
      wv::step_host(order, 1.01 * courant * courant, n, p, q, p);
      std::swap(p, q);
    }
    double off = 0;
    for (std::size_t i = 0; i < u0.size(); ++i) off = std::max(off, std::fabs(q[i] - a * u0[i]));
    EXPECT_GT(off, 1e-3) << "order " << order;
  }
}

TEST(WaveHost, BadArraysAreRejected) {
  std::vector<double> u(8 * 8 * 8), small(7);
  EXPECT_THROW(wv::step_host(2, 0.1, 8, u, small, u), std::invalid_argument);
  EXPECT_THROW(wv::step_host(8, 0.1, 8, u, u, u), std::invalid_argument);  // radius 4 on 8 nodes: 9 > 8
  EXPECT_THROW(wv::step_host(5, 0.1, 8, u, u, u), std::invalid_argument);
}

// The steps one launch of the streaming kernel may fuse, per order (its registers: README.md), and
// a launch of more refused before it touches a GPU.
TEST(WaveHost, FusedStepsAreCheckedBeforeAnyLaunch) {
  const std::vector<std::size_t> most{4, 2, 1, 1};
  for (std::size_t i = 0; i < wv::kOrders.size(); ++i) {
    const int order = wv::kOrders[i];
    EXPECT_EQ(wv::max_fused_steps(order), most[i]) << "order " << order;
    for (std::size_t t = 1; t <= most[i]; ++t) EXPECT_EQ(wv::checked_fused_steps(order, t), t);
    EXPECT_THROW((void)wv::checked_fused_steps(order, 0), std::invalid_argument);
    EXPECT_THROW((void)wv::checked_fused_steps(order, most[i] + 1), std::invalid_argument);
    const wv::Leapfrog l = wv::leapfrog(order, 0.5 * wv::courant_limit(order));
    const wv::Box box{8, 8, 8, 4, 4, 4, 32, 20};
    EXPECT_THROW(wv::launch_steps({}, box, l, most[i] + 1, nullptr), std::invalid_argument) << "order " << order;
    EXPECT_THROW(wv::launch_steps({}, box, l, 0, nullptr), std::invalid_argument) << "order " << order;
  }
  try {
    (void)wv::checked_fused_steps(8, 2);
    ADD_FAILURE() << "two steps a launch at order 8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 steps a launch at order 8 (1 .. 1)"), std::string::npos) << e.what();
  }
}

// The DiamondTorre variant refuses what it cannot run before it touches a GPU.
TEST(WaveHost, DiamondVariantChecksItsProblemFirst) {
  const wv::Problem ok{24, 2, 0.5};
  EXPECT_NO_THROW(wv::Diamond::check(ok, {}));
  EXPECT_NO_THROW(wv::Diamond::check({1024, 2, 0.5}, {.radius = 3, .steps = 16}));   // 4 blocks a tower
  EXPECT_THROW(wv::Diamond::check({24, 4, 0.5}, {}), std::invalid_argument);         // order 4
  EXPECT_THROW(wv::Diamond::check({2, 2, 0.5}, {}), std::invalid_argument);          // no stencil
  EXPECT_THROW(wv::Diamond::check({2049, 2, 0.5}, {}), std::invalid_argument);       // past 8 blocks
  EXPECT_THROW(wv::Diamond::check({24, 2, 0.6}, {}), std::invalid_argument);         // past the Courant limit
  EXPECT_THROW(wv::Diamond::check(ok, {.radius = 4}), std::invalid_argument);
  EXPECT_THROW(wv::Diamond::check(ok, {.radius = 0}), std::invalid_argument);
  EXPECT_THROW(wv::Diamond::check(ok, {.steps = 0}), std::invalid_argument);
  EXPECT_THROW(wv::Diamond::check(ok, {.chunks = 5}), std::invalid_argument);         // 5 does not divide 24
  EXPECT_THROW(wv::Diamond::check(ok, {.reads = static_cast<wv::DiamondReads>(7)}), std::invalid_argument);  // no such schedule
  for (wv::DiamondReads r : wv::kDiamondReads) EXPECT_NO_THROW(wv::Diamond::check(ok, {.reads = r}));
  EXPECT_THROW(wv::Diamond::check({257, 2, 0.5}, {}), std::invalid_argument);        // prime, past one block
}

// DiamondTorre's GPU sweep refuses what its kernel cannot run before it touches a GPU.
TEST(WaveHost, DiamondSweepRefusesWhatItsKernelCannotRun) {
  EXPECT_THROW(wv::DiamondSweep(0, 10, 10, 32, 2), std::invalid_argument);    // no diamond
  EXPECT_THROW(wv::DiamondSweep(4, 10, 10, 32, 2), std::invalid_argument);    // more than registers hold
  EXPECT_THROW(wv::DiamondSweep(1, 10, 10, 32, 2, static_cast<wv::DiamondReads>(7)), std::invalid_argument);  // no such schedule
  EXPECT_THROW(wv::DiamondSweep(2, 10, 10, 2, 2), std::invalid_argument);     // z narrower than its stencil
  EXPECT_THROW(wv::DiamondSweep(2, 10, 10, 257, 2), std::invalid_argument);   // a prime column past one block
  EXPECT_THROW(wv::DiamondSweep(2, 10, 10, 2049, 2), std::invalid_argument);  // more than 8 blocks a tower
  EXPECT_THROW(wv::DiamondSweep(2, 10, 10, 100, 2, wv::DiamondReads::in_step, 3), std::invalid_argument);  // 3 blocks
  EXPECT_THROW(wv::DiamondSweep(2, 10, 10, 32, 0), std::invalid_argument);    // no step
  EXPECT_THROW(wv::DiamondSweep(2, 0, 10, 32, 2), std::invalid_argument);     // no column
}
