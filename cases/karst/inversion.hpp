// The inversion of the karst heat model (seed 002 chapter 7 §7.3.2/§7.4.2; spec §6): recover Pe,
// St and Theta from an outlet curve by nonlinear conjugate gradients (NLCG), or by a grid or random
// search of the box. Every set of forward runs the optimizer needs at one time (the start, the six
// gradient points, the trial step lengths of a line search, a grid) is handed to the evaluator as
// ONE ensemble, so that a GPU backend runs it as one batched forward run.
//
// Host code only; the evaluator decides where the runs go (evaluate_cpu: forward_cpu on threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "karst.hpp"

namespace cases::karst {

/// How a parameter is mapped to the optimizer's normalized coordinate u in [0, 1]:
/// linear: p = lo + u (hi - lo); log: p = lo (hi / lo)^u.
enum class Scale { linear, log };

/// One parameter's interval. lo < hi, both positive and finite.
struct Range {
  double lo, hi;
  Scale scale;
};

/// The box of (Pe, St, Theta); the defaults are Table 7.3's bounds. Scaling (why): St and Theta
/// span factors of 27 and 60 and act on the curve roughly multiplicatively (an exchange rate, a
/// time scale), so log coordinates give comparable sensitivities across the box and keep the
/// problem better conditioned; Pe's box is 8% wide, where log and linear differ by less than 4%,
/// so it stays linear.
struct Bounds {
  Range pe{1900.0, 2050.0, Scale::linear};
  Range st{0.75, 20.0, Scale::log};
  Range theta{0.1, 6.0, Scale::log};
};

/// std::invalid_argument naming the parameter if a range has lo >= hi, a bound that is not
/// positive or not finite.
void check_bounds(const Bounds& bounds);

/// Table 7.3's initial values (Pe 2000, St 10, Theta 4.5); Psi and Da from `base`.
Groups table_7_3_start(const Groups& base = {});

/// An ensemble evaluator: one misfit (>= 0, finite) per member, in member order. The members of
/// one call are one ensemble (on a GPU: one batched forward run). Psi and Da of every member are
/// those of the base Groups the caller gave; only pe, st and theta vary.
using Evaluate = std::function<std::vector<double>(std::span<const Groups> members)>;

/// sqrt(mean((curve - observed)^2)); std::invalid_argument for unequal lengths or empty curves.
double rms_misfit(std::span<const double> curve, std::span<const double> observed);

/// The CPU evaluator: forward_cpu(Model::heat, grid, forcing, members, Outlet::advective,
/// threads) and each member's rms_misfit against `observed` (one value per step; checked here).
/// Grid, forcing and observed curve are copied into the evaluator.
Evaluate evaluate_cpu(const Grid& grid, const Forcing& forcing, std::vector<double> observed, unsigned threads = 0);

/// The best point of a search and what it cost.
struct Best {
  Groups groups;
  double misfit;
  std::size_t ensemble_calls, forward_runs;
};

/// All points_per_axis^3 points of a grid over the box (in each range's scale: points at
/// u = i / (K - 1), the bounds included; K = 1: the centre), evaluated in ensembles of at most
/// `max_ensemble` members (0: all in one call). Ties go to the first point (Pe slowest, Theta
/// fastest).
Best search_grid(const Evaluate& evaluate, const Groups& base, const Bounds& bounds, std::size_t points_per_axis,
                 std::size_t max_ensemble = 0);

/// `count` points drawn uniformly in the normalized coordinates (log-uniform on a log range) by
/// std::mt19937_64(seed), evaluated in ensembles of at most `max_ensemble` members (0: one call).
Best search_random(const Evaluate& evaluate, const Groups& base, const Bounds& bounds, std::size_t count,
                   std::uint64_t seed, std::size_t max_ensemble = 0);

/// One NLCG iteration (index 0: the start point, after the optional coarse grid).
struct Iteration {
  std::size_t index;
  Groups groups;
  double misfit;
  double step;        // the move, max-norm in normalized coordinates
  bool restarted;     // the direction was the steepest descent (beta = 0)
  std::size_t ensemble_calls, forward_runs;  // so far
};

/// NLCG settings. Ensembles per iteration:
///   - the gradient: 6 members, +-h per parameter (central; where u +- h would leave the box the
///     pair moves inside, -h and -2h or +h and +2h, for a second-order one-sided difference);
///   - the line search: `line_points` step lengths along the direction, geometric by line_ratio
///     from 8x the last step (or the box's edge) down; when the longest is the best and the edge
///     is further, a second ensemble of `line_points` lengths, geometric up to the edge;
///   - the refinement, if refine_points > 0: `refine_points` members, the vertex of the parabola
///     through the best and its neighbours and an even set between the neighbours;
///   - when a conjugate direction finds no lower misfit, the line search (and refinement) again
///     along the steepest descent.
/// The start is one ensemble of 1 member, or of coarse_grid^3 + 1 members (the start and the grid)
/// when coarse_grid > 0.
struct NlcgOptions {
  std::size_t max_iterations = 100;
  double misfit_tolerance = 0.0;        // stop when the misfit is at or below it
  double relative_tolerance = 1e-6;     // stop when an iteration lowers the misfit by less, relatively
  double step_tolerance = 1e-10;        // stop when an iteration moves less (max-norm in u)
  double gradient_step = 1e-4;          // h in normalized coordinates, in (0, 0.25]
  std::size_t line_points = 12;         // trial step lengths, geometric (>= 2)
  double line_ratio = 0.5;              // between consecutive trial lengths, in (0, 1)
  std::size_t refine_points = 8;        // the parabolic vertex + a finer set around the best (0: off)
  std::size_t restart_every = 3;        // steepest descent every this many iterations (3 parameters)
  bool precondition = true;             // Jacobi: the diagonal curvature from the gradient ensemble
  std::size_t coarse_grid = 0;          // K > 0: start from the best of a K^3 grid and the start
  std::function<void(const Iteration&)> progress;  // called after the start and every iteration
};

/// The outcome of an NLCG run.
struct Fit {
  Groups groups;  // the fitted Pe, St, Theta; Psi and Da of the start
  double misfit;
  std::size_t iterations, ensemble_calls, forward_runs;
  std::vector<Iteration> history;  // the start, then every iteration
  std::string stopped;             // why it stopped
};

/// Polak-Ribiere NLCG (beta = max(0, PR); restarts every `restart_every` iterations and when the
/// direction is not a descent direction or finds no lower misfit) minimizing the mean squared
/// misfit (misfit^2: smooth at a zero-misfit minimum, where the RMS misfit has a cone) in the
/// box's normalized coordinates. Jacobi-preconditioned (Shewchuk 1994, §14.3) unless
/// options.precondition is false: the diagonal curvature comes from the gradient's own points and
/// is refreshed at every restart. The gradient and direction are projected on the box's active
/// bounds; trial points are clipped to the box. Stops on misfit_tolerance, relative_tolerance,
/// step_tolerance, a zero projected gradient, no lower misfit along the steepest descent, or
/// max_iterations (Fit::stopped says which). std::invalid_argument for bad bounds or options, a
/// start outside the box, or an evaluator returning the wrong count or a non-finite or negative
/// misfit (naming the member).
Fit nlcg(const Evaluate& evaluate, const Groups& start, const Bounds& bounds = {}, const NlcgOptions& options = {});

}  // namespace cases::karst
