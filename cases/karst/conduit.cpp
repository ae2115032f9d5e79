// The CPU reference of the karst model: the discrete equations of spec §2 (seed 002 eqs. 4.14-4.20
// and 4.27), solved by the Thomas algorithm; an ensemble's members spread over threads. It is the
// baseline the GPU is timed against, so it is organised for speed (README "CPU reference"): the
// rock columns in L1-sized chunks, vectorized across columns; the eliminations cached while dt and
// v stay the same; members taken by the threads one at a time.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
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

namespace {

// One chunk of C rock columns (M rows of C values, row after row): the elimination of eqs.
// 4.14-4.18, `scale` and `upper` its 1 / pivot and modified upper band, and back substitution.
// `wall` is 2 FoBi, `water` the C water temperatures the wall row exchanges with. Each row holds C
// independent recurrences, enough vectors (C / 4 with AVX2) to hide the FMA latency; the running
// row is kept in `carry`, in registers, rather than reloaded from the row just stored. The loops
// have a fixed trip count, so that the compiler vectorizes them fully at -O3. C = 32: GCC 12 fully
// unrolls C = 16 and then leaves it scalar (3.5x slower); C = 64 was no faster on AVX-512 and
// needs all 16 AVX2 registers for `carry` alone.
template <std::size_t C>
void solve_chunk(double* r, std::size_t m, const double* scale, const double* upper, double fo, double wall,
                 const double* water) {
  double carry[C];
  const double s0 = scale[0];
  for (std::size_t c = 0; c < C; ++c) carry[c] = r[c] = (r[c] + wall * water[c]) * s0;
  for (std::size_t i = 1; i + 1 < m; ++i) {  // row M-1, the far field, is held
    double* row = r + i * C;
    const double s = scale[i];
    for (std::size_t c = 0; c < C; ++c) carry[c] = row[c] = (row[c] + fo * carry[c]) * s;
  }
  const double* last = r + (m - 1) * C;
  for (std::size_t c = 0; c < C; ++c) carry[c] = last[c];
  for (std::size_t i = m - 1; i-- > 0;) {
    double* row = r + i * C;
    const double u = upper[i];
    for (std::size_t c = 0; c < C; ++c) carry[c] = row[c] = row[c] - u * carry[c];
  }
}

}  // namespace

Conduit::Conduit(Model model, const Grid& grid, const Groups& groups, Outlet outlet)
    : model_(model), grid_(grid), g_(groups), outlet_(outlet) {
  check_grid(grid);
  const std::size_t chunks = (grid.n + kChunk - 1) / kChunk;
  water_.assign(grid.n, 1.0);
  if (model == Model::heat) rock_.assign(chunks * kChunk * grid.m, 1.0);
  scale_.resize(grid.m);
  upper_r_.resize(grid.m);
  inv_.resize(grid.n);
  upper_w_.resize(grid.n);
}

void Conduit::step(double dt, double v, double inlet) {
  if (model_ == Model::heat) step_rock(dt);
  step_water(dt, v, inlet);
}

// Eqs. 4.14-4.18: every column has the same M x M matrix, so its elimination is computed once (per
// dt) and applied to all N columns. Bands: row 0 [1 + 2Fo + 2FoBi, -2Fo], rows 1..M-2
// [-Fo, 1 + 2Fo, -Fo], row M-1 [0, 1] (the far field held).
void Conduit::factor_rock(double dt) {
  const std::size_t m = grid_.m;
  const double fo = dt / (g_.theta * grid_.dr * grid_.dr);      // 4.16
  const double fobi = g_.psi * g_.st * dt / (2.0 * grid_.dr);  // 4.18
  scale_[0] = 1.0 / (1.0 + 2.0 * fo + 2.0 * fobi);
  upper_r_[0] = -2.0 * fo * scale_[0];
  for (std::size_t i = 1; i + 1 < m; ++i) {
    scale_[i] = 1.0 / (1.0 + 2.0 * fo + fo * upper_r_[i - 1]);  // b - a c' with a = -Fo
    upper_r_[i] = -fo * scale_[i];
  }
  scale_[m - 1] = 1.0;
  upper_r_[m - 1] = 0.0;
  rock_dt_ = dt;
}

// The rock chunk by chunk with the current water; then each chunk's new wall temperatures go into
// the water's right-hand side (eq. 4.20) while they are in cache.
void Conduit::step_rock(double dt) {
  if (dt != rock_dt_) factor_rock(dt);
  const std::size_t n = grid_.n, m = grid_.m;
  const double fo = dt / (g_.theta * grid_.dr * grid_.dr);
  const double fobi = g_.psi * g_.st * dt / (2.0 * grid_.dr);
  const double exchange = dt * g_.st;
  for (std::size_t j0 = 0; j0 < n; j0 += kChunk) {
    const std::size_t width = std::min(kChunk, n - j0);
    double* chunk = rock_.data() + j0 * m;  // chunk j0 / kChunk starts at (j0 / kChunk) kChunk m
    double* water = water_.data() + j0;
    double padded[kChunk];  // the last chunk's water, padded with 1 (see rock_ in karst.hpp)
    const double* wall_water = water;
    if (width < kChunk) {
      std::fill(std::copy(water, water + width, padded), padded + kChunk, 1.0);
      wall_water = padded;
    }
    solve_chunk<kChunk>(chunk, m, scale_.data(), upper_r_.data(), fo, 2.0 * fobi, wall_water);
    for (std::size_t c = 0; c < width; ++c) water[c] += exchange * chunk[c];  // row 0: the new wall
  }
}

// The water's elimination (eqs. 4.19/4.20 heat, 4.27 solute: central differences, backward Euler):
// bands [lo, mid, up], the outlet row [-v dt/dx, mid or 1 + v dt/dx + source] (Outlet).
void Conduit::factor_water(double dt, double v) {
  const std::size_t n = grid_.n;
  const double dx = grid_.dx();
  const double diffusion = dt / (g_.pe * dx * dx);
  const double advection = v * dt / (2.0 * dx);
  const double source = model_ == Model::heat ? dt * g_.st : -dt * g_.da;  // St (T_s - T_w) or + Da C
  const double up = advection - diffusion, mid = 1.0 + 2.0 * diffusion + source;
  lower_ = -diffusion - advection;
  lower_last_ = -2.0 * advection;  // the outlet row: no dispersion, upwind advection
  const double mid_last = outlet_ == Outlet::advective ? 1.0 + 2.0 * advection + source : mid;
  diag0_ = mid;  // row 0 divides by its pivot (once a step), as the uncached solve did
  upper_w_[0] = up / mid;
  inv_[0] = 0.0;  // not used
  for (std::size_t j = 1; j + 1 < n; ++j) {
    inv_[j] = 1.0 / (mid - lower_ * upper_w_[j - 1]);
    upper_w_[j] = up * inv_[j];
  }
  inv_[n - 1] = 1.0 / (mid_last - lower_last_ * upper_w_[n - 2]);
  upper_w_[n - 1] = 0.0;  // no upper entry in the last row
  water_dt_ = dt;
  water_v_ = v;
}

// The water solve with the cached factors: no division per row, the arithmetic of the uncached
// Thomas solve otherwise. A single chain of dependent FMAs (about 11 cycles a node): it is latency
// bound, but a small part of a heat step (N nodes against N M rock cells).
void Conduit::step_water(double dt, double v, double inlet) {
  if (dt != water_dt_ || v != water_v_) factor_water(dt, v);
  const std::size_t n = grid_.n;
  double* b = water_.data();  // the right-hand side (the wall term added by step_rock), then the solution
  b[0] -= lower_ * inlet;     // the inlet folded into row 0
  b[0] /= diag0_;
  for (std::size_t j = 1; j + 1 < n; ++j) b[j] = (b[j] - lower_ * b[j - 1]) * inv_[j];
  b[n - 1] = (b[n - 1] - lower_last_ * b[n - 2]) * inv_[n - 1];
  for (std::size_t j = n - 1; j-- > 0;) b[j] -= upper_w_[j] * b[j + 1];
}

std::vector<double> forward_cpu(Model model, const Grid& grid, const Forcing& forcing, std::span<const Groups> members,
                                Outlet outlet, unsigned threads) {
  check(model, grid, forcing, members);
  const std::size_t steps = forcing.steps(), count = members.size();
  std::vector<double> out(count * steps);
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(count, 1)));
  // Members are taken one at a time from a shared counter, so that a thread that finishes early
  // takes the next member; each member's result does not depend on which thread ran it.
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run = [&] {
    try {
      for (;;) {
        const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
        if (k >= count) break;
        Conduit c(model, grid, members[k], outlet);
        for (std::size_t s = 0; s < steps; ++s) {
          c.step(forcing.dt[s], forcing.v[s], forcing.inlet[s]);
          out[k * steps + s] = c.outlet();
        }
      }
    } catch (...) {  // e.g. std::bad_alloc: stop the others and rethrow on the calling thread
      next.store(count);
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(run);
    } catch (const std::system_error&) {  // no more threads to be had: the ones running do the rest
      break;
    }
  }
  run();  // the calling thread is one of them
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace cases::karst
