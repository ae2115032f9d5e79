// Case "karst": heat and solute transport along a karst conduit (seed 002 chapter 4; spec
// ../shared/specs/karst.md). Water flows along a 1-D conduit of N nodes and exchanges heat with
// N radial rock columns of M nodes; both are solved implicitly, one tridiagonal system per rock
// column and one for the water, every step. The solute model is the water equation alone with a
// first-order reaction term.
//
// This header: the physical parameters and their dimensionless groups (Pe, St, Theta, Psi, Da),
// the grid, the per-step forcing, the stability condition (eq. 4.21 / 4.28) and the CPU reference
// (the same discrete equations, Thomas algorithm, cache-blocked and vectorized over the rock
// columns, members spread over threads).
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <span>
#include <vector>

namespace cases::karst {

/// A conduit and its water and rock in SI units (Tables 4.1 and 4.2 of the seed; the defaults are
/// Table 4.1's). The conduit is a circular pipe: radius R = D_H / 2.
struct Physical {
  double length = 100.0;                  // L [m]
  double hydraulic_diameter = 1.0;        // D_H [m]
  double velocity = 1.0;                  // V-bar, the time-averaged flow velocity [m/s]
  double dispersivity = 0.1;              // D_L, longitudinal dispersion [m^2/s] (Pe = L V / D_L)
  double water_heat_capacity = 4200.0;    // c_p,w [J/(kg K)]
  double water_conductivity = 0.58;       // k_w [W/(m K)]
  double water_viscosity = 1.3e-3;        // mu_w [kg/(m s)]
  double water_density = 1000.0;          // rho_w [kg/m^3]
  double rock_heat_capacity = 810.0;      // c_p,r [J/(kg K)]
  double rock_conductivity = 2.15;        // k_r [W/(m K)]
  double rock_density = 2320.0;           // rho_r [kg/m^3]
  double friction = 0.05;                 // Darcy-Weisbach friction factor f
  double reaction_length = std::numeric_limits<double>::infinity();  // lambda_d,turb [m]; Da = L / lambda
};

/// The wall heat transfer of a conduit (eqs. 4.7, 4.8): Reynolds and Prandtl numbers, the
/// Gnielinski Nusselt number and the convective coefficient h = k_w Nu / D_H [W/(m^2 K)].
struct Transfer {
  double reynolds, prandtl, nusselt, h;
};
Transfer transfer(const Physical& p);

/// The dimensionless groups the model solves with (eqs. 4.5, 4.6, 4.9, 4.23 and Psi):
///   Pe = L V / D_L, St = 4 h L / (rho_w c_p,w D_H V), Theta = R^2 V / (L alpha_r),
///   Psi = rho_w c_p,w / (rho_r c_p,r), Da = L / lambda_d,turb.
struct Groups {
  double pe = 1000.0, st = 0.0, theta = 1.0, psi = 2.235, da = 0.0;
};
/// The groups of a physical conduit; std::invalid_argument for a parameter that is not positive
/// and finite (the reaction length may be infinite: no reaction), or a Reynolds number below the
/// Gnielinski correlation's range (Re <= 1000).
Groups groups(const Physical& p);

/// lambda_d,turb of eq. 4.24 [m]: (1 / (4 alpha)) sqrt(2 g / f) D_H^(3/2) sqrt(grad h), for a
/// dissolution rate constant alpha, friction factor f, hydraulic diameter D_H [m] and hydraulic
/// gradient grad h (g = 9.81 m/s^2).
double reaction_length(double alpha, double friction, double hydraulic_diameter, double gradient);

enum class Model { heat, solute };

/// The conduit's outlet row. `advective` (the default): no dispersion in the last node, upwind
/// advection, so that a uniform field stays uniform; `printed`: the row as the seed prints it
/// (lower entry -v dt/dx, diagonal unchanged), which does not keep a uniform field (spec §2.3).
enum class Outlet { advective, printed };

/// How the GPU runs the heat model (kernels.hpp). `streaming`: every member's state in global
/// memory, a few launches per step; `resident`: one thread-block cluster per member holds its
/// state on chip for the whole run (compute capability 9.0 and a member that fits; the heat
/// model only); `automatic`: resident where it can run and the forcing changes dt or v at most
/// once per 32 steps, else streaming. Both give the same numbers bit for bit.
enum class Path { automatic, streaming, resident };

/// N water nodes at x* = (j + 1) / N (the inlet is x* = 0), M rock nodes per column at
/// r*_i = 1 + i dr (i = 0: the wall, i = M - 1: the far field, held at its initial value).
struct Grid {
  std::size_t n = 1024;
  std::size_t m = 128;
  double dr = 0.05;
  double dx() const { return 1.0 / static_cast<double>(n); }
};

/// What drives a run, per step k: the dimensionless time step dt*, the velocity V(t) / V-bar and
/// the inlet value at the end of the step (eq. 4.10 / 4.25). All three of one length.
struct Forcing {
  std::vector<double> dt, v, inlet;
  std::size_t steps() const { return dt.size(); }
};

/// Eq. 4.21 (heat: v dt/dx + dt St < 1) or 4.28 (solute: v dt/dx < 1) at every step for every
/// member; std::invalid_argument naming the first step and member that break it, or a forcing
/// whose arrays differ in length, hold a step that is not positive and finite, or a grid with
/// N < 2, M < 2 or dr <= 0.
void check(Model model, const Grid& grid, const Forcing& forcing, std::span<const Groups> members);

/// One member on the CPU: the state and the step of the discrete model (spec §2). Starts at the
/// initial condition, every field 1.
class Conduit {
 public:
  Conduit(Model model, const Grid& grid, const Groups& groups, Outlet outlet = Outlet::advective);
  /// One step: the rock columns with the current water (heat only), then the water with the new
  /// wall temperatures; `inlet` is the inlet value at the end of the step.
  void step(double dt, double v, double inlet);
  const std::vector<double>& water() const { return water_; }
  /// Rock node i of column j.
  double rock(std::size_t i, std::size_t j) const { return rock_[(j / kChunk * grid_.m + i) * kChunk + j % kChunk]; }
  double outlet() const { return water_.back(); }

 private:
  // The rock is stored in chunks of kChunk columns: chunk c holds the M rows of columns
  // c kChunk .. c kChunk + kChunk - 1, one row of kChunk values after another. A chunk (32 KiB
  // at M = 128) then stays in L1 through the elimination and the back substitution, and each row
  // gives kChunk independent recurrences to vectorize over. The last chunk is padded with columns
  // that start at 1 and see a water temperature of 1, so they stay 1 and are never read.
  static constexpr std::size_t kChunk = 32;

  // Allocates on 64-byte boundaries, so that every row of a chunk starts a cache line: vector
  // loads and stores that straddle two lines cost a quarter more time in the rock sweeps.
  template <class T>
  struct LineAligned {
    using value_type = T;
    static constexpr std::align_val_t kAlign{64};
    LineAligned() = default;
    template <class U>
    LineAligned(const LineAligned<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
    void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
    friend bool operator==(const LineAligned&, const LineAligned&) { return true; }
  };

  void factor_rock(double dt);
  void factor_water(double dt, double v);
  void step_rock(double dt);
  void step_water(double dt, double v, double inlet);

  Model model_;
  Grid grid_;
  Groups g_;
  Outlet outlet_;
  std::vector<double> water_;
  std::vector<double, LineAligned<double>> rock_;  // chunked as above (heat only)
  // The eliminations depend on the step only through dt (rock) and dt, v (water), which are often
  // constant over a run: they are kept from the last step and recomputed when dt or v change.
  std::vector<double> scale_, upper_r_;  // the rock's 1 / pivot and modified upper band, for rock_dt_
  std::vector<double> inv_, upper_w_;    // the water's 1 / pivot and modified upper band, for water_dt_, water_v_
  double diag0_ = 0.0, lower_ = 0.0, lower_last_ = 0.0;  // the water's first pivot, lower band, outlet row's lower
  double rock_dt_ = std::numeric_limits<double>::quiet_NaN();
  double water_dt_ = std::numeric_limits<double>::quiet_NaN(), water_v_ = std::numeric_limits<double>::quiet_NaN();
};

/// The CPU reference for an ensemble: every member run over the whole forcing (checked first),
/// members spread over `threads` threads (0: all hardware threads). Returns the outlet curves,
/// member after member: out[k * steps + s] is member k's outlet after step s.
std::vector<double> forward_cpu(Model model, const Grid& grid, const Forcing& forcing,
                                std::span<const Groups> members, Outlet outlet = Outlet::advective,
                                unsigned threads = 0);

}  // namespace cases::karst
