// The CPU reference of the karst model: the discrete equations of spec §2 (seed 002 eqs. 4.14-4.20
// and 4.27), solved by the Thomas algorithm; an ensemble's members spread over threads.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

#include "karst.hpp"

namespace cases::karst {

namespace {

std::string at(std::size_t step, std::size_t member) {
  return " at step " + std::to_string(step) + ", member " + std::to_string(member);
}

void check_grid(const Grid& grid) {
  if (grid.n < 2 || grid.m < 2 || !(grid.dr > 0.0) || !std::isfinite(grid.dr))
    throw std::invalid_argument("cases::karst: a grid needs N >= 2 water nodes, M >= 2 rock nodes and dr > 0");
}

}  // namespace

void check(Model model, const Grid& grid, const Forcing& forcing, std::span<const Groups> members) {
  check_grid(grid);
  if (forcing.v.size() != forcing.steps() || forcing.inlet.size() != forcing.steps())
    throw std::invalid_argument("cases::karst: the forcing's dt, v and inlet differ in length (" +
                                std::to_string(forcing.dt.size()) + ", " + std::to_string(forcing.v.size()) + ", " +
                                std::to_string(forcing.inlet.size()) + ")");
  for (std::size_t k = 0; k < members.size(); ++k) {
    const Groups& g = members[k];
    if (!(g.pe > 0.0) || !(g.theta > 0.0) || !(g.psi > 0.0) || !(g.st >= 0.0) || !std::isfinite(g.da))
      throw std::invalid_argument("cases::karst: member " + std::to_string(k) +
                                  " needs Pe, Theta, Psi > 0, St >= 0 and a finite Da");
  }
  for (std::size_t s = 0; s < forcing.steps(); ++s) {
    const double dt = forcing.dt[s], v = forcing.v[s];
    if (!(dt > 0.0) || !std::isfinite(dt) || !(v >= 0.0) || !std::isfinite(v) || !std::isfinite(forcing.inlet[s]))
      throw std::invalid_argument("cases::karst: step " + std::to_string(s) + " has dt* = " + std::to_string(dt) +
                                  ", v = " + std::to_string(v) + ": dt* must be positive, v >= 0 (flow from the inlet), "
                                  "all finite");
    for (std::size_t k = 0; k < members.size(); ++k) {
      const double courant = v * dt / grid.dx() + (model == Model::heat ? dt * members[k].st : 0.0);
      if (courant >= 1.0)
        throw std::invalid_argument("cases::karst: unstable step" + at(s, k) + ": " +
                                    (model == Model::heat ? "v dt*/dx* + dt* St = " : "v dt*/dx* = ") +
                                    std::to_string(courant) + " >= 1 (eq. " + (model == Model::heat ? "4.21" : "4.28") +
                                    "); take smaller steps");
    }
  }
}

Conduit::Conduit(Model model, const Grid& grid, const Groups& groups, Outlet outlet)
    : model_(model),
      grid_(grid),
      g_(groups),
      outlet_(outlet),
      water_(grid.n, 1.0),
      rock_(model == Model::heat ? grid.n * grid.m : 0, 1.0),
      lower_(grid.n),
      diag_(grid.n),
      upper_(grid.n),
      scale_(grid.m),
      upper_r_(grid.m) {
  check_grid(grid);
}

void Conduit::step(double dt, double v, double inlet) {
  if (model_ == Model::heat) step_rock(dt);
  step_water(dt, v, inlet);
}

// Eqs. 4.14-4.18: every column has the same M x M matrix, so its elimination is computed once and
// applied to all N columns, row by row (the inner loops run along contiguous columns).
void Conduit::step_rock(double dt) {
  const std::size_t n = grid_.n, m = grid_.m;
  const double fo = dt / (g_.theta * grid_.dr * grid_.dr);  // 4.16
  const double fobi = g_.psi * g_.st * dt / (2.0 * grid_.dr);  // 4.18
  // Forward elimination of the bands: row 0 [1 + 2Fo + 2FoBi, -2Fo], rows 1..M-2 [-Fo, 1 + 2Fo, -Fo],
  // row M-1 [0, 1] (the far field held).
  scale_[0] = 1.0 / (1.0 + 2.0 * fo + 2.0 * fobi);
  upper_r_[0] = -2.0 * fo * scale_[0];
  for (std::size_t i = 1; i + 1 < m; ++i) {
    scale_[i] = 1.0 / (1.0 + 2.0 * fo + fo * upper_r_[i - 1]);  // b - a c' with a = -Fo
    upper_r_[i] = -fo * scale_[i];
  }
  scale_[m - 1] = 1.0;
  upper_r_[m - 1] = 0.0;
  double* r = rock_.data();
  // Right-hand sides, eliminated in place: row 0 adds the wall exchange with the current water.
  for (std::size_t j = 0; j < n; ++j) r[j] = (r[j] + 2.0 * fobi * water_[j]) * scale_[0];
  for (std::size_t i = 1; i + 1 < m; ++i) {
    double* row = r + i * n;
    const double* prev = row - n;
    const double s = scale_[i];
    for (std::size_t j = 0; j < n; ++j) row[j] = (row[j] + fo * prev[j]) * s;
  }
  // Back substitution (row M-1 keeps its value).
  for (std::size_t i = m - 1; i-- > 0;) {
    double* row = r + i * n;
    const double* next = row + n;
    const double c = upper_r_[i];
    for (std::size_t j = 0; j < n; ++j) row[j] -= c * next[j];
  }
}

// Eqs. 4.19/4.20 (heat) and 4.27 (solute): central differences, backward Euler.
void Conduit::step_water(double dt, double v, double inlet) {
  const std::size_t n = grid_.n;
  const double dx = grid_.dx();
  const double diffusion = dt / (g_.pe * dx * dx);
  const double advection = v * dt / (2.0 * dx);
  const double source = model_ == Model::heat ? dt * g_.st : -dt * g_.da;  // St (T_s - T_w) or + Da C
  const double lo = -diffusion - advection, up = advection - diffusion, mid = 1.0 + 2.0 * diffusion + source;
  std::vector<double>& b = water_;  // the right-hand side, then the solution
  if (model_ == Model::heat)
    for (std::size_t j = 0; j < n; ++j) b[j] += dt * g_.st * rock_[j];  // the new wall temperature
  b[0] -= lo * inlet;                                                      // the inlet folded into row 0
  for (std::size_t j = 0; j < n; ++j) {
    lower_[j] = lo;
    diag_[j] = mid;
    upper_[j] = up;
  }
  lower_[n - 1] = -2.0 * advection;  // the outlet row: no dispersion, upwind advection
  if (outlet_ == Outlet::advective) diag_[n - 1] = 1.0 + 2.0 * advection + source;
  // Thomas: eliminate the lower band, then substitute back.
  upper_[0] /= diag_[0];
  b[0] /= diag_[0];
  for (std::size_t j = 1; j < n; ++j) {
    const double inv = 1.0 / (diag_[j] - lower_[j] * upper_[j - 1]);
    upper_[j] = upper_[j] * inv;
    b[j] = (b[j] - lower_[j] * b[j - 1]) * inv;
  }
  for (std::size_t j = n - 1; j-- > 0;) b[j] -= upper_[j] * b[j + 1];
}

std::vector<double> forward_cpu(Model model, const Grid& grid, const Forcing& forcing, std::span<const Groups> members,
                                Outlet outlet, unsigned threads) {
  check(model, grid, forcing, members);
  const std::size_t steps = forcing.steps(), count = members.size();
  std::vector<double> out(count * steps);
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(count, 1)));
  auto run = [&](std::size_t first, std::size_t last) {
    for (std::size_t k = first; k < last; ++k) {
      Conduit c(model, grid, members[k], outlet);
      for (std::size_t s = 0; s < steps; ++s) {
        c.step(forcing.dt[s], forcing.v[s], forcing.inlet[s]);
        out[k * steps + s] = c.outlet();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(run, count * t / threads, count * (t + 1) / threads);
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace cases::karst
