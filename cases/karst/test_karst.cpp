// Host tests of the karst case: the dimensionless groups against the seed's tables, and the CPU
// reference model against what must hold of it (spec §5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "karst.hpp"

namespace {

using namespace cases::karst;

void expect_near_rel(double got, double want, double rel, const std::string& what) {
  EXPECT_NEAR(got, want, rel * std::abs(want)) << what;
}

// Table 4.1 with one run of Table 4.2.
Physical run(double hydraulic_diameter, double velocity) {
  Physical p;
  p.hydraulic_diameter = hydraulic_diameter;
  p.velocity = velocity;
  return p;
}

TEST(KarstGroups, MatchTheSeedsTables) {
  // Psi from Table 4.1 is Table 4.3's 2.2350.
  EXPECT_NEAR(groups(run(1.0, 0.6264)).psi, 2.2350, 5e-5);
  // C11, C68, C72 (spec §4, derived from Tables 4.1/4.2 with eqs. 4.5-4.9).
  struct Row {
    const char* name;
    double d, v, re, nu, h, st, theta;
  };
  const Row rows[] = {{"C11", 1.0, 0.6264, 4.82e5, 6326, 3669, 0.5578, 1369},
                      {"C68", 10.0, 2.87, 2.21e7, 2.904e5, 16845, 0.05590, 6.27e5},
                      {"C72", 1.0, 1.98, 1.52e6, 2.002e4, 11614, 0.5586, 4327}};
  for (const Row& r : rows) {
    const Physical p = run(r.d, r.v);
    const Transfer t = transfer(p);
    const Groups g = groups(p);
    expect_near_rel(t.reynolds, r.re, 3e-3, std::string(r.name) + " Re");
    expect_near_rel(t.prandtl, 9.4138, 1e-4, std::string(r.name) + " Pr");
    expect_near_rel(t.nusselt, r.nu, 1e-3, std::string(r.name) + " Nu");
    expect_near_rel(t.h, r.h, 1e-3, std::string(r.name) + " h");
    expect_near_rel(g.st, r.st, 1e-3, std::string(r.name) + " St");
    expect_near_rel(g.theta, r.theta, 1e-3, std::string(r.name) + " Theta");
  }
}

TEST(KarstGroups, PecletAndDamkohler) {
  Physical p = run(1.0, 0.5);
  p.dispersivity = 0.025;
  p.reaction_length = 400.0;
  const Groups g = groups(p);
  EXPECT_DOUBLE_EQ(g.pe, 100.0 * 0.5 / 0.025);
  EXPECT_DOUBLE_EQ(g.da, 0.25);
  EXPECT_EQ(groups(run(1.0, 0.5)).da, 0.0);  // no reaction by default
  // Eq. 4.24: lambda = sqrt(2 g / f) D_H^1.5 sqrt(grad h) / (4 alpha).
  EXPECT_NEAR(reaction_length(1e-3, 0.05, 4.0, 0.01), std::sqrt(2 * 9.81 / 0.05) * 8.0 * 0.1 / 4e-3, 1e-9);
}

TEST(KarstGroups, RejectBadParameters) {
  Physical p = run(1.0, 0.5);
  p.rock_density = -1.0;
  EXPECT_THROW(groups(p), std::invalid_argument);
  p = run(1.0, 1e-4);  // Re = 77: laminar, outside Gnielinski
  try {
    groups(p);
    FAIL() << "a laminar conduit was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Gnielinski"), std::string::npos) << e.what();
  }
  p = run(1.0, 0.5);
  p.reaction_length = 0.0;
  EXPECT_THROW(groups(p), std::invalid_argument);
  EXPECT_THROW(reaction_length(0.0, 0.05, 1.0, 0.01), std::invalid_argument);
}

// `steps` steps of dt with velocity 1; the inlet from `inlet(t)` at the end of each step.
template <class F>
Forcing forcing(std::size_t steps, double dt, F inlet) {
  Forcing f;
  for (std::size_t s = 0; s < steps; ++s) {
    f.dt.push_back(dt);
    f.v.push_back(1.0);
    f.inlet.push_back(inlet(dt * static_cast<double>(s + 1)));
  }
  return f;
}

double gaussian_pulse(double t) { return 1.0 + 0.5 * std::exp(-std::pow((t - 0.3) / 0.08, 2)); }

TEST(KarstModel, UniformFieldStaysUniform) {
  const Grid grid{200, 40, 0.05};
  const Forcing f = forcing(600, 0.004, [](double) { return 1.0; });
  const std::vector<Groups> members = {{1000.0, 15.7, 23.0, 2.235, 0.0}, {300.0, 0.5, 4.5, 2.235, 0.0}};
  for (Model model : {Model::heat, Model::solute}) {
    const std::vector<double> out = forward_cpu(model, grid, f, members);
    double worst = 0;
    for (double x : out) worst = std::max(worst, std::abs(x - 1.0));
    EXPECT_LT(worst, 1e-13) << (model == Model::heat ? "heat" : "solute");
  }
  // The outlet row as printed (diagonal unchanged) does not keep a uniform field (spec §2.3).
  const std::vector<double> printed = forward_cpu(Model::heat, grid, f, members, Outlet::printed);
  double drift = 0;
  for (double x : printed) drift = std::max(drift, std::abs(x - 1.0));
  EXPECT_GT(drift, 1e-3);
}

TEST(KarstModel, HeatWithoutExchangeIsSoluteWithoutReaction) {
  const Grid grid{128, 16, 0.1};
  const Forcing f = forcing(300, 0.005, gaussian_pulse);
  const std::vector<Groups> heat = {{500.0, 0.0, 4.5, 2.235, 0.0}};
  const std::vector<Groups> solute = {{500.0, 7.0, 1.0, 1.0, 0.0}};  // St, Theta, Psi play no part
  const std::vector<double> a = forward_cpu(Model::heat, grid, f, heat);
  const std::vector<double> b = forward_cpu(Model::solute, grid, f, solute);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t s = 0; s < a.size(); ++s) ASSERT_EQ(a[s], b[s]) << "step " << s;  // bit for bit
  EXPECT_GT(*std::max_element(a.begin(), a.end()), 1.1);  // the pulse came through
}

// Ogata-Banks: a step from 1 to 0 at the inlet of a semi-infinite column, dimensionless
// (v = 1, D = 1/Pe): C = 1 - (erfc((x - t) / (2 sqrt(t/Pe))) + exp(Pe x) erfc((x + t) / (2 sqrt(t/Pe)))) / 2.
double ogata_banks(double x, double t, double pe) {
  const double w = 2.0 * std::sqrt(t / pe);
  return 1.0 - 0.5 * (std::erfc((x - t) / w) + std::exp(pe * x) * std::erfc((x + t) / w));
}

TEST(KarstModel, AdvectionDispersionConvergesToOgataBanks) {
  // Pure advection-dispersion (solute, Da = 0): the water profile at t = 0.4 against the analytic
  // solution over the first half of the conduit (the outlet is 0.6 away from the front).
  const double pe = 100.0, t_end = 0.4;
  double previous = 0;
  for (std::size_t n : {100U, 200U, 400U, 800U}) {
    const Grid grid{n, 2, 1.0};
    const double dx = grid.dx(), dt = 0.5 * dx;
    const auto steps = static_cast<std::size_t>(std::llround(t_end / dt));
    Conduit c(Model::solute, grid, Groups{pe, 0.0, 1.0, 1.0, 0.0});
    for (std::size_t s = 0; s < steps; ++s) c.step(dt, 1.0, 0.0);
    double error = 0;
    for (std::size_t j = 0; j < n / 2; ++j)
      error = std::max(error, std::abs(c.water()[j] - ogata_banks(static_cast<double>(j + 1) * dx, t_end, pe)));
    SCOPED_TRACE("N = " + std::to_string(n) + ", max error " + std::to_string(error));
    if (previous > 0) {
      EXPECT_GT(previous / error, 1.7);  // first order in dt (dt = dx / 2)
    }
    previous = error;
  }
  EXPECT_LT(previous, 0.01);
}

TEST(KarstModel, ExchangeDelaysAndAttenuatesAPulse) {
  const Grid grid{200, 40, 0.05};
  const Forcing f = forcing(500, 0.004, gaussian_pulse);
  const std::vector<Groups> members = {{1000.0, 0.0, 4.5, 2.235, 0.0}, {1000.0, 2.0, 4.5, 2.235, 0.0}};
  const std::vector<double> out = forward_cpu(Model::heat, grid, f, members);
  const auto steps = f.steps();
  const auto peak = [&](std::size_t k) {
    return std::max_element(out.begin() + static_cast<long>(k * steps), out.begin() + static_cast<long>((k + 1) * steps));
  };
  const auto free = peak(0), exchanged = peak(1);
  EXPECT_GT(*free, 1.25);  // the pulse (peak 1.5 at the inlet) arrives, spread by dispersion
  EXPECT_LT(*exchanged - 1.0, 0.7 * (*free - 1.0));  // lower
  EXPECT_GT(exchanged - (out.begin() + static_cast<long>(steps)), free - out.begin());  // later
}

TEST(KarstModel, RockWarmsAtTheWallAndHoldsTheFarField) {
  const Grid grid{100, 20, 0.05};
  Conduit c(Model::heat, grid, Groups{1000.0, 2.0, 4.5, 2.235, 0.0});
  for (std::size_t s = 0; s < 100; ++s) c.step(0.005, 1.0, 1.5);  // warm water enters
  EXPECT_GT(c.rock(0, 0), 1.01);                          // the wall near the inlet warmed
  EXPECT_GT(c.rock(0, 0), c.rock(5, 0));                  // more than deeper rock
  for (std::size_t j = 0; j < grid.n; ++j) ASSERT_EQ(c.rock(grid.m - 1, j), 1.0);  // far field held
}

TEST(KarstModel, StabilityCheckRejectsLargeSteps) {
  const Grid grid{100, 8, 0.1};
  Forcing f = forcing(10, 0.005, [](double) { return 1.0; });
  const std::vector<Groups> members = {{1000.0, 0.0, 1.0, 1.0, 0.0}, {1000.0, 60.0, 1.0, 1.0, 0.0}};
  // Every step: v dt/dx = 0.5, member 1 adds dt St = 0.3. Step 3: 0.8, and member 1 adds 0.48.
  f.dt[3] = 0.008;
  try {
    forward_cpu(Model::heat, grid, f, members);
    FAIL() << "an unstable step was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("step 3, member 1"), std::string::npos) << what;
    EXPECT_NE(what.find("4.21"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(forward_cpu(Model::solute, grid, f, members));  // 4.28 has no St term
  f.v[7] = 2.5;                                                     // v dt/dx = 1.25
  EXPECT_THROW(forward_cpu(Model::solute, grid, f, members), std::invalid_argument);
  f.v[7] = -1.0;
  EXPECT_THROW(forward_cpu(Model::solute, grid, f, members), std::invalid_argument);
  f.v.pop_back();
  EXPECT_THROW(forward_cpu(Model::solute, grid, f, members), std::invalid_argument);
  EXPECT_THROW(forward_cpu(Model::solute, Grid{1, 8, 0.1}, forcing(2, 0.001, [](double) { return 1.0; }), members),
               std::invalid_argument);
}

// The discrete model of spec §2 written the plain way, to check the CPU reference's blocked,
// vectorized and cached solve against: every step, every rock column and the water assembled as
// explicit bands and solved by a textbook Thomas algorithm (divisions, nothing kept between steps).
class NaiveConduit {
 public:
  NaiveConduit(Model model, const Grid& grid, const Groups& g, Outlet outlet)
      : model_(model), grid_(grid), g_(g), outlet_(outlet), water_(grid.n, 1.0) {
    if (model == Model::heat) rock_.assign(grid.n, std::vector<double>(grid.m, 1.0));
  }

  void step(double dt, double v, double inlet) {
    const std::size_t n = grid_.n, m = grid_.m;
    if (model_ == Model::heat) {
      const double fo = dt / (g_.theta * grid_.dr * grid_.dr), fobi = g_.psi * g_.st * dt / (2.0 * grid_.dr);
      std::vector<double> a(m, -fo), b(m, 1.0 + 2.0 * fo), c(m, -fo);
      b[0] = 1.0 + 2.0 * fo + 2.0 * fobi;  // eq. 4.15, the wall
      c[0] = -2.0 * fo;
      a[m - 1] = 0.0;  // the far field held
      b[m - 1] = 1.0;
      for (std::size_t j = 0; j < n; ++j) {
        std::vector<double> d = rock_[j];
        d[0] += 2.0 * fobi * water_[j];
        thomas(a, b, c, d);
        rock_[j] = d;
      }
    }
    const double dx = grid_.dx(), diffusion = dt / (g_.pe * dx * dx), advection = v * dt / (2.0 * dx);
    const double source = model_ == Model::heat ? dt * g_.st : -dt * g_.da;
    std::vector<double> a(n, -diffusion - advection), b(n, 1.0 + 2.0 * diffusion + source), c(n, advection - diffusion);
    a[n - 1] = -2.0 * advection;
    if (outlet_ == Outlet::advective) b[n - 1] = 1.0 + 2.0 * advection + source;
    std::vector<double> d = water_;
    if (model_ == Model::heat)
      for (std::size_t j = 0; j < n; ++j) d[j] += dt * g_.st * rock_[j][0];
    d[0] -= a[0] * inlet;
    thomas(a, b, c, d);
    water_ = d;
  }

  const std::vector<double>& water() const { return water_; }
  double rock(std::size_t i, std::size_t j) const { return rock_[j][i]; }

 private:
  // Solves the system with lower band a (a[0] unused), diagonal b and upper band c (last unused);
  // d is the right-hand side, then the solution.
  static void thomas(const std::vector<double>& a, const std::vector<double>& b, std::vector<double> c,
                     std::vector<double>& d) {
    const std::size_t n = d.size();
    c[0] /= b[0];
    d[0] /= b[0];
    for (std::size_t i = 1; i < n; ++i) {
      const double pivot = b[i] - a[i] * c[i - 1];
      c[i] /= pivot;
      d[i] = (d[i] - a[i] * d[i - 1]) / pivot;
    }
    for (std::size_t i = n - 1; i-- > 0;) d[i] -= c[i] * d[i + 1];
  }

  Model model_;
  Grid grid_;
  Groups g_;
  Outlet outlet_;
  std::vector<double> water_;
  std::vector<std::vector<double>> rock_;  // rock_[j][i]: column j, node i
};

// A forcing whose dt and v change now and then and stay put in between, so that the cached
// eliminations are both reused and recomputed: dt changes at steps 60 and 120, v at step 150 and
// then every step up to 179; a pulse at the inlet.
Forcing changing_forcing() {
  Forcing f;
  for (std::size_t s = 0; s < 240; ++s) {
    const double dt = s < 60 || s >= 120 ? 0.002 : 0.0013;
    const double v = s < 150 ? 1.0 : s < 180 ? 0.6 + 0.01 * static_cast<double>(s - 150) : 0.8;
    f.dt.push_back(dt);
    f.v.push_back(v);
    f.inlet.push_back(s % 50 < 12 ? 1.5 : 1.0);
  }
  return f;
}

TEST(KarstModel, FastPathEqualsANaiveSolve) {
  // N and M are not multiples of the rock chunk (32 columns), so that the padded last chunk is
  // exercised; the members differ in every group, Da included.
  const Grid grid{203, 37, 0.07};
  const Forcing f = changing_forcing();
  const std::vector<Groups> members = {
      {700.0, 1.3, 3.0, 2.235, 0.4}, {300.0, 0.4, 12.0, 1.5, 0.0}, {1500.0, 2.5, 0.8, 2.235, 1.1}};
  for (Model model : {Model::heat, Model::solute}) {
    for (Outlet outlet : {Outlet::advective, Outlet::printed}) {
      SCOPED_TRACE(std::string(model == Model::heat ? "heat" : "solute") +
                   (outlet == Outlet::advective ? ", advective outlet" : ", printed outlet"));
      const std::vector<double> out = forward_cpu(model, grid, f, members, outlet, 2);
      for (std::size_t k = 0; k < members.size(); ++k) {
        Conduit fast(model, grid, members[k], outlet);
        NaiveConduit naive(model, grid, members[k], outlet);
        double worst_outlet = 0, worst_water = 0, worst_rock = 0;
        for (std::size_t s = 0; s < f.steps(); ++s) {
          fast.step(f.dt[s], f.v[s], f.inlet[s]);
          naive.step(f.dt[s], f.v[s], f.inlet[s]);
          ASSERT_EQ(fast.outlet(), out[k * f.steps() + s]) << "member " << k << ", step " << s;
          worst_outlet = std::max(worst_outlet, std::abs(out[k * f.steps() + s] - naive.water().back()));
          for (std::size_t j = 0; j < grid.n; ++j) {
            worst_water = std::max(worst_water, std::abs(fast.water()[j] - naive.water()[j]));
            if (model == Model::heat)
              for (std::size_t i = 0; i < grid.m; ++i)
                worst_rock = std::max(worst_rock, std::abs(fast.rock(i, j) - naive.rock(i, j)));
          }
        }
        EXPECT_LE(worst_outlet, 1e-12) << "member " << k;
        EXPECT_LE(worst_water, 1e-12) << "member " << k;
        EXPECT_LE(worst_rock, 1e-12) << "member " << k;
        EXPECT_GT(*std::max_element(fast.water().begin(), fast.water().end()), 1.01);  // the pulses are in
      }
    }
  }
}

TEST(KarstModel, ThreadsDoNotChangeTheResult) {
  const Grid grid{64, 12, 0.1};
  const Forcing f = forcing(150, 0.01, gaussian_pulse);
  std::vector<Groups> members;
  for (int k = 0; k < 7; ++k) members.push_back({200.0 + 50.0 * k, 0.3 * k, 1.0 + k, 2.235, 0.0});
  const std::vector<double> one = forward_cpu(Model::heat, grid, f, members, Outlet::advective, 1);
  EXPECT_EQ(one, forward_cpu(Model::heat, grid, f, members, Outlet::advective, 3));
  // and equals a member stepped by hand
  Conduit c(Model::heat, grid, members[4]);
  for (std::size_t s = 0; s < f.steps(); ++s) {
    c.step(f.dt[s], f.v[s], f.inlet[s]);
    ASSERT_EQ(c.outlet(), one[4 * f.steps() + s]) << "step " << s;
  }
}

}  // namespace
