// Host tests of the karst inversion (inversion.hpp): NLCG on analytic misfits with known minima,
// the ensembles it asks for, grid and random search against brute force, the errors, and the
// synthetic twin on the CPU model (spec §5 item 8).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "inversion.hpp"

namespace {

using namespace cases::karst;

// A smooth, coupled, not quadratic misfit with its zero at `at`: the RMS of four residuals in
// (Pe, log St, log Theta).
double analytic(const Groups& g, const Groups& at) {
  const double a = (g.pe - at.pe) / 40.0, s = std::log(g.st / at.st), t = std::log(g.theta / at.theta);
  const double r[] = {a + 0.5 * s, s - 0.3 * t, 2.0 * t + 0.1 * a, 0.5 * s * s + 0.2 * a * t};
  return std::sqrt((r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]) / 4.0);
}

Evaluate analytic_evaluator(const Groups& at, std::vector<std::size_t>* sizes = nullptr) {
  return [at, sizes](std::span<const Groups> members) {
    if (sizes) sizes->push_back(members.size());
    std::vector<double> out;
    for (const Groups& g : members) out.push_back(analytic(g, at));
    return out;
  };
}

void expect_rel(double got, double want, double rel, const char* what) {
  EXPECT_NEAR(got, want, rel * std::abs(want)) << what;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

TEST(KarstInversion, RmsMisfit) {
  const std::vector<double> a = {1.0, 2.0, 3.0, 4.0}, b = {1.0, 2.0, 3.0, 6.0};
  EXPECT_DOUBLE_EQ(rms_misfit(a, b), 1.0);  // sqrt(4 / 4)
  EXPECT_EQ(rms_misfit(a, a), 0.0);
  EXPECT_THROW(rms_misfit(a, std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(rms_misfit(std::vector<double>{}, std::vector<double>{}), std::invalid_argument);
}

TEST(KarstInversion, Table73BoundsAndStart) {
  const Bounds b;
  EXPECT_EQ(b.pe.lo, 1900.0);
  EXPECT_EQ(b.pe.hi, 2050.0);
  EXPECT_EQ(b.st.lo, 0.75);
  EXPECT_EQ(b.st.hi, 20.0);
  EXPECT_EQ(b.theta.lo, 0.1);
  EXPECT_EQ(b.theta.hi, 6.0);
  const Groups start = table_7_3_start(Groups{1.0, 2.0, 3.0, 1.5, 0.25});
  EXPECT_EQ(start.pe, 2000.0);
  EXPECT_EQ(start.st, 10.0);
  EXPECT_EQ(start.theta, 4.5);
  EXPECT_EQ(start.psi, 1.5);  // kept from the base
  EXPECT_EQ(start.da, 0.25);
  EXPECT_NO_THROW(check_bounds(b));
}

TEST(KarstInversion, RejectsBadBoundsAndStart) {
  const Evaluate e = analytic_evaluator(Groups{1960.0, 4.0, 1.5, 2.235, 0.0});
  Bounds b;
  b.st = {20.0, 0.75, Scale::log};  // lo >= hi
  EXPECT_NE(message_of([&] { check_bounds(b); }).find("St"), std::string::npos);
  EXPECT_THROW(nlcg(e, table_7_3_start(), b), std::invalid_argument);
  EXPECT_THROW(search_grid(e, Groups{}, b, 3), std::invalid_argument);
  b = Bounds{};
  b.theta.lo = 0.0;  // not positive
  EXPECT_NE(message_of([&] { check_bounds(b); }).find("Theta"), std::string::npos);
  b = Bounds{};
  b.pe.hi = std::numeric_limits<double>::infinity();
  EXPECT_THROW(check_bounds(b), std::invalid_argument);
  Groups outside = table_7_3_start();
  outside.st = 25.0;
  const std::string what = message_of([&] { nlcg(e, outside); });
  EXPECT_NE(what.find("St = 25"), std::string::npos) << what;
  NlcgOptions o;
  o.line_points = 1;
  EXPECT_THROW(nlcg(e, table_7_3_start(), Bounds{}, o), std::invalid_argument);
  o = NlcgOptions{};
  o.gradient_step = 0.0;
  EXPECT_THROW(nlcg(e, table_7_3_start(), Bounds{}, o), std::invalid_argument);
  EXPECT_THROW(nlcg(Evaluate{}, table_7_3_start()), std::invalid_argument);
}

TEST(KarstInversion, RejectsABadEvaluator) {
  const Evaluate short_by_one = [](std::span<const Groups> m) { return std::vector<double>(m.size() - 1, 1.0); };
  std::string what = message_of([&] { nlcg(short_by_one, table_7_3_start()); });
  EXPECT_NE(what.find("returned 0 misfits for an ensemble of 1"), std::string::npos) << what;
  // A NaN for the third member of the gradient ensemble: the member is named.
  const Evaluate nan_third = [](std::span<const Groups> m) {
    std::vector<double> out(m.size(), 1.0);
    if (m.size() == 6) out[2] = std::nan("");
    return out;
  };
  what = message_of([&] { nlcg(nan_third, table_7_3_start()); });
  EXPECT_NE(what.find("member 2 of 6"), std::string::npos) << what;
  const Evaluate negative = [](std::span<const Groups> m) { return std::vector<double>(m.size(), -1.0); };
  EXPECT_THROW(search_grid(negative, Groups{}, Bounds{}, 2), std::invalid_argument);
}

TEST(KarstInversion, NlcgFindsAnInteriorMinimum) {
  const Groups truth{1960.0, 4.0, 1.5, 2.235, 0.0};
  for (bool precondition : {true, false}) {
    NlcgOptions o;
    o.precondition = precondition;
    const Fit fit = nlcg(analytic_evaluator(truth), table_7_3_start(truth), Bounds{}, o);
    SCOPED_TRACE(std::string(precondition ? "Jacobi" : "plain") + ", stopped: " + fit.stopped);
    expect_rel(fit.groups.pe, truth.pe, 1e-3, "Pe");
    expect_rel(fit.groups.st, truth.st, 1e-3, "St");
    expect_rel(fit.groups.theta, truth.theta, 1e-3, "Theta");
    EXPECT_LT(fit.misfit, 1e-6);
    EXPECT_EQ(fit.groups.psi, truth.psi);
    ASSERT_EQ(fit.history.size(), fit.iterations + 1);  // the start, then every iteration
    for (std::size_t i = 1; i < fit.history.size(); ++i) EXPECT_LT(fit.history[i].misfit, fit.history[i - 1].misfit);
  }
}

TEST(KarstInversion, NlcgEndsOnTheBounds) {
  // Separable, so that the bound-constrained minimum is known: St and Theta below and above their
  // boxes, Pe inside.
  const auto outside = [](std::span<const Groups> members) {
    std::vector<double> out;
    for (const Groups& g : members) {
      const double a = (g.pe - 1960.0) / 40.0, s = std::log(g.st / 0.5), t = std::log(g.theta / 9.0);
      out.push_back(std::sqrt(a * a + s * s + 0.5 * t * t + 0.1 * t * t * t * t));
    }
    return out;
  };
  const Fit fit = nlcg(outside, table_7_3_start());
  SCOPED_TRACE("stopped: " + fit.stopped);
  expect_rel(fit.groups.pe, 1960.0, 1e-3, "Pe");
  EXPECT_EQ(fit.groups.st, 0.75);
  EXPECT_EQ(fit.groups.theta, 6.0);
}

// Which ensembles NLCG asks for: the start (1), then per iteration the gradient (6), the line
// search (line_points, once more when it extends to the full length) and its refinement
// (refine_points); a failed conjugate direction repeats the line search along the steepest descent.
void expect_documented_sizes(const NlcgOptions& options) {
  std::vector<std::size_t> sizes;
  const Groups truth{1960.0, 4.0, 1.5, 2.235, 0.0};
  const Fit fit = nlcg(analytic_evaluator(truth, &sizes), table_7_3_start(truth), Bounds{}, options);
  const std::size_t line = options.line_points, refine = options.refine_points;
  ASSERT_FALSE(sizes.empty());
  EXPECT_EQ(sizes[0], 1U);
  std::size_t gradients = 0, runs = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    runs += sizes[k];
    if (k == 0) continue;
    EXPECT_TRUE(sizes[k] == 6 || sizes[k] == line || (refine > 0 && sizes[k] == refine))
        << "call " << k << ": " << sizes[k];
    if (sizes[k] == 6) {
      ++gradients;
      if (k + 1 < sizes.size()) {
        EXPECT_EQ(sizes[k + 1], line) << "a gradient is followed by a line search";
      }
    }
    if (refine > 0 && sizes[k] == refine) {
      EXPECT_EQ(sizes[k - 1], line) << "a refinement follows a line search";
    }
  }
  EXPECT_EQ(fit.ensemble_calls, sizes.size());
  EXPECT_EQ(fit.forward_runs, runs);
  EXPECT_GE(gradients, fit.iterations);
  EXPECT_LE(gradients, fit.iterations + 1);  // the last gradient may end the run
}

TEST(KarstInversion, EnsemblesHaveTheDocumentedSizes) {
  {
    SCOPED_TRACE("defaults: 12 + 8");
    expect_documented_sizes(NlcgOptions{});
  }
  NlcgOptions o;
  o.line_points = 16;
  o.refine_points = 0;
  {
    SCOPED_TRACE("16, no refinement");
    expect_documented_sizes(o);
  }
  o.line_points = 9;
  o.refine_points = 5;
  {
    SCOPED_TRACE("9 + 5");
    expect_documented_sizes(o);
  }
  // With a coarse grid the first ensemble is the grid and the start.
  std::vector<std::size_t> sizes;
  o = NlcgOptions{};
  o.coarse_grid = 3;
  nlcg(analytic_evaluator(Groups{1960.0, 4.0, 1.5, 2.235, 0.0}, &sizes), table_7_3_start(), Bounds{}, o);
  EXPECT_EQ(sizes.at(0), 28U);
}

TEST(KarstInversion, ProgressReportsEveryIteration) {
  std::vector<Iteration> seen;
  NlcgOptions o;
  o.progress = [&seen](const Iteration& it) { seen.push_back(it); };
  const Fit fit = nlcg(analytic_evaluator(Groups{1960.0, 4.0, 1.5, 2.235, 0.0}), table_7_3_start(), Bounds{}, o);
  ASSERT_EQ(seen.size(), fit.history.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].index, i);
    EXPECT_EQ(seen[i].misfit, fit.history[i].misfit);
  }
  EXPECT_EQ(seen.front().forward_runs, 1U);
  EXPECT_LE(seen.back().forward_runs, fit.forward_runs);
  o.max_iterations = 2;
  const Fit two = nlcg(analytic_evaluator(Groups{1960.0, 4.0, 1.5, 2.235, 0.0}), table_7_3_start(), Bounds{}, o);
  EXPECT_EQ(two.iterations, 2U);
  EXPECT_NE(two.stopped.find("maximum iterations"), std::string::npos) << two.stopped;
}

TEST(KarstInversion, CoarseGridGivesTheStart) {
  // A misfit with a second, worse basin around the Table 7.3 start: without the grid NLCG stays
  // there, with it NLCG starts in the right basin.
  const Groups truth{1930.0, 1.5, 0.3, 2.235, 0.0};
  const auto two_basins = [truth](std::span<const Groups> members) {
    std::vector<double> out;
    for (const Groups& g : members) {
      const double far = analytic(g, truth), near = analytic(g, table_7_3_start());
      out.push_back(std::min(far, 1.0 + near));
    }
    return out;
  };
  const Fit local = nlcg(two_basins, table_7_3_start());
  EXPECT_GT(local.misfit, 0.99);
  NlcgOptions o;
  o.coarse_grid = 4;
  const Fit global = nlcg(two_basins, table_7_3_start(), Bounds{}, o);
  expect_rel(global.groups.st, truth.st, 1e-3, "St");
  expect_rel(global.groups.theta, truth.theta, 1e-3, "Theta");
  expect_rel(global.groups.pe, truth.pe, 1e-3, "Pe");
}

TEST(KarstInversion, GridSearchFindsTheBestOfItsGrid) {
  const Groups truth{1960.0, 4.0, 1.5, 2.235, 0.0};
  std::vector<std::size_t> sizes;
  const Best best = search_grid(analytic_evaluator(truth, &sizes), truth, Bounds{}, 5);
  EXPECT_EQ(sizes, std::vector<std::size_t>{125});
  EXPECT_EQ(best.forward_runs, 125U);
  EXPECT_EQ(best.ensemble_calls, 1U);
  // Brute force over the same grid, built here: Pe linear, St and Theta logarithmic, bounds included.
  double want = std::numeric_limits<double>::infinity();
  Groups arg{};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 5; ++k) {
        const Groups g{1900.0 + 150.0 * i / 4.0, 0.75 * std::pow(20.0 / 0.75, j / 4.0), 0.1 * std::pow(60.0, k / 4.0),
                       2.235, 0.0};
        if (analytic(g, truth) < want) {
          want = analytic(g, truth);
          arg = g;
        }
      }
  EXPECT_NEAR(best.misfit, want, 1e-12);
  expect_rel(best.groups.pe, arg.pe, 1e-12, "Pe");
  expect_rel(best.groups.st, arg.st, 1e-12, "St");
  expect_rel(best.groups.theta, arg.theta, 1e-12, "Theta");
  // In chunks of at most 16: 8 calls, the same best.
  sizes.clear();
  const Best chunked = search_grid(analytic_evaluator(truth, &sizes), truth, Bounds{}, 5, 16);
  EXPECT_EQ(sizes.size(), 8U);
  EXPECT_EQ(*std::max_element(sizes.begin(), sizes.end()), 16U);
  EXPECT_EQ(chunked.misfit, best.misfit);
  EXPECT_EQ(chunked.ensemble_calls, 8U);
  // One point per axis: the centre of the box in its coordinates.
  const Best centre = search_grid(analytic_evaluator(truth), truth, Bounds{}, 1);
  expect_rel(centre.groups.pe, 1975.0, 1e-12, "Pe");
  expect_rel(centre.groups.st, std::sqrt(0.75 * 20.0), 1e-12, "St");
  EXPECT_THROW(search_grid(analytic_evaluator(truth), truth, Bounds{}, 0), std::invalid_argument);
}

TEST(KarstInversion, RandomSearchFindsTheBestOfItsPoints) {
  const Groups truth{1960.0, 4.0, 1.5, 2.235, 0.0};
  std::vector<Groups> seen;
  const Evaluate recording = [&seen, truth](std::span<const Groups> members) {
    std::vector<double> out;
    for (const Groups& g : members) {
      seen.push_back(g);
      out.push_back(analytic(g, truth));
    }
    return out;
  };
  const Best best = search_random(recording, truth, Bounds{}, 200, 7, 64);
  ASSERT_EQ(seen.size(), 200U);
  EXPECT_EQ(best.ensemble_calls, 4U);  // 64 + 64 + 64 + 8
  double want = std::numeric_limits<double>::infinity();
  for (const Groups& g : seen) {
    want = std::min(want, analytic(g, truth));
    ASSERT_TRUE(g.pe >= 1900.0 && g.pe <= 2050.0 && g.st >= 0.75 && g.st <= 20.0 && g.theta >= 0.1 && g.theta <= 6.0);
  }
  EXPECT_EQ(best.misfit, want);
  EXPECT_EQ(analytic(best.groups, truth), want);
  // The seed decides the points.
  const std::vector<Groups> first(seen.begin(), seen.end());
  seen.clear();
  EXPECT_EQ(search_random(recording, truth, Bounds{}, 200, 7).misfit, best.misfit);
  EXPECT_EQ(seen.front().pe, first.front().pe);
  seen.clear();
  search_random(recording, truth, Bounds{}, 200, 8);
  EXPECT_NE(seen.front().pe, first.front().pe);
  EXPECT_THROW(search_random(recording, truth, Bounds{}, 0, 1), std::invalid_argument);
}

// ---- the synthetic twin on the CPU model --------------------------------------------------------

// A Gaussian inlet pulse (peak 1.5 at t* = 0.3), v = 1, dt* = 0.004 on N = 128: eq. 4.21 gives
// v dt/dx + dt St = 0.512 + 0.004 St < 1 for every St in the box (at most 0.592). 750 steps
// (t* = 3): the pulse, delayed by the exchange to a peak near t* = 1.4 at St = 6, has left.
Forcing twin_forcing() {
  Forcing f;
  const double dt = 0.004;
  for (std::size_t s = 0; s < 750; ++s) {
    const double t = dt * static_cast<double>(s + 1);
    f.dt.push_back(dt);
    f.v.push_back(1.0);
    f.inlet.push_back(1.0 + 0.5 * std::exp(-std::pow((t - 0.3) / 0.08, 2)));
  }
  return f;
}

TEST(KarstInversion, CpuEvaluatorMatchesTheModel) {
  const Grid grid{32, 8, 0.05};
  Forcing f = twin_forcing();
  f.dt.resize(200);
  f.v.resize(200);
  f.inlet.resize(200);
  const std::vector<Groups> members = {{1980.0, 6.0, 2.5, 2.235, 0.0}, {2000.0, 10.0, 4.5, 2.235, 0.0}};
  const std::vector<double> curves = forward_cpu(Model::heat, grid, f, members);
  const std::vector<double> observed(curves.begin(), curves.begin() + 200);
  const std::vector<double> misfits = evaluate_cpu(grid, f, observed)(members);
  ASSERT_EQ(misfits.size(), 2U);
  EXPECT_EQ(misfits[0], 0.0);
  EXPECT_EQ(misfits[1], rms_misfit(std::span<const double>(curves).subspan(200), observed));
  EXPECT_GT(misfits[1], 0.0);
  EXPECT_THROW(evaluate_cpu(grid, f, std::vector<double>(199, 1.0)), std::invalid_argument);
}

TEST(KarstInversion, TwinRecoversTheParameters) {
  // Pe is the weakly determined parameter: on this grid a 1% change of Pe moves the outlet curve by
  // an RMS of ~1e-5, St and Theta by ~1e-4, and in the box's coordinates the curvatures differ by
  // ~1e6 (the Jacobi preconditioner is what makes NLCG converge). Noise-free, Pe is determined on
  // this grid (N = 64 already works); with a logger's noise (0.01 C, ~1e-3 in T*) it would not be
  // inside Table 7.3's narrow Pe box. Pe 1940 is 3% from the start, so that it has to move.
  const Grid grid{128, 32, 0.05};
  const Forcing f = twin_forcing();
  const Groups truth{1940.0, 6.0, 2.5, 2.235, 0.0};
  const std::vector<double> observed = forward_cpu(Model::heat, grid, f, std::vector<Groups>{truth});
  const Fit fit = nlcg(evaluate_cpu(grid, f, observed), table_7_3_start(truth));
  std::printf("twin: Pe %.6g St %.6g Theta %.6g (errors %.1e %.1e %.1e), misfit %.2e -> %.2e, %zu iterations, "
              "%zu ensemble calls, %zu forward runs; stopped: %s\n",
              fit.groups.pe, fit.groups.st, fit.groups.theta, fit.groups.pe / truth.pe - 1.0,
              fit.groups.st / truth.st - 1.0, fit.groups.theta / truth.theta - 1.0, fit.history.front().misfit,
              fit.misfit, fit.iterations, fit.ensemble_calls, fit.forward_runs, fit.stopped.c_str());
  expect_rel(fit.groups.pe, truth.pe, 0.01, "Pe");
  expect_rel(fit.groups.st, truth.st, 0.01, "St");
  expect_rel(fit.groups.theta, truth.theta, 0.01, "Theta");
  EXPECT_LT(fit.misfit, 1e-3 * fit.history.front().misfit);
}

}  // namespace
