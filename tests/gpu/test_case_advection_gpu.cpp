// Case "advection": the GPU variants against the host reference step, on odd grids (sizes that
// fill no thread block and no z run exactly) and several steps.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "advection.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace adv = cases::advection;

TEST(CaseAdvection, SingleGpuMatchesTheHostStep) {
  CUSH_REQUIRE_GPUS(1);
  const auto a = adv::coefficients({1.0, -0.7, 0.4}, {0.9, 0.9, 0.9});
  for (const adv::Grid g : {adv::Grid{1, 1, 1}, adv::Grid{3, 5, 2}, adv::Grid{17, 9, 23}, adv::Grid{33, 31, 20}}) {
    SCOPED_TRACE(std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz));
    std::vector<double> in(g.points());
    cush_test::fill_random(std::span<double>(in));
    for (std::size_t steps : {0U, 1U, 4U}) {
      std::vector<double> expected = in, next(g.points());
      for (std::size_t s = 0; s < steps; ++s) {
        adv::step_host(expected, next, g, a);
        expected.swap(next);
      }
      std::vector<double> out(g.points(), NAN);
      adv::single(in.data(), out.data(), g, a, steps, 1);
      for (std::size_t i = 0; i < out.size(); ++i)
        ASSERT_NEAR(out[i], expected[i], 1e-12 * (1 + std::fabs(expected[i]))) << "steps " << steps << " point " << i;
    }
  }
}
