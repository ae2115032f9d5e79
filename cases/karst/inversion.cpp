// The inversion of the karst heat model: the box and its normalized coordinates, the checked and
// counted ensemble evaluator, grid and random search, and Polak-Ribiere NLCG (inversion.hpp).
#include "inversion.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace cases::karst {

namespace {

using Point = std::array<double, 3>;  // normalized coordinates u in [0, 1]^3: Pe, St, Theta
constexpr std::array<const char*, 3> kNames = {"Pe", "St", "Theta"};

std::string describe(const Groups& g) {
  std::ostringstream s;
  s.precision(10);
  s << "Pe = " << g.pe << ", St = " << g.st << ", Theta = " << g.theta;
  return s.str();
}

// The box: maps normalized coordinates to groups (Psi and Da from the base) and back.
class Box {
 public:
  Box(const Bounds& bounds, const Groups& base) : ranges_{bounds.pe, bounds.st, bounds.theta}, base_(base) {
    check_bounds(bounds);
  }

  Groups groups(const Point& u) const {
    Groups g = base_;
    g.pe = value(0, u[0]);
    g.st = value(1, u[1]);
    g.theta = value(2, u[2]);
    return g;
  }

  // std::invalid_argument if g lies outside the box.
  Point point(const Groups& g) const {
    const std::array<double, 3> p = {g.pe, g.st, g.theta};
    Point u{};
    for (std::size_t i = 0; i < 3; ++i) {
      const Range& r = ranges_[i];
      if (!(p[i] >= r.lo && p[i] <= r.hi))
        throw std::invalid_argument("cases::karst: the start " + std::string(kNames[i]) + " = " +
                                    std::to_string(p[i]) + " is outside its bounds [" + std::to_string(r.lo) + ", " +
                                    std::to_string(r.hi) + "]");
      u[i] = r.scale == Scale::log ? std::log(p[i] / r.lo) / std::log(r.hi / r.lo) : (p[i] - r.lo) / (r.hi - r.lo);
      u[i] = std::clamp(u[i], 0.0, 1.0);
    }
    return u;
  }

 private:
  // Clamped to the range: lo (hi / lo)^1 may round past hi, and a member just outside the box
  // could break the caller's stability margin.
  double value(std::size_t i, double u) const {
    const Range& r = ranges_[i];
    const double p = r.scale == Scale::log ? r.lo * std::pow(r.hi / r.lo, u) : r.lo + u * (r.hi - r.lo);
    return std::clamp(p, r.lo, r.hi);
  }

  std::array<Range, 3> ranges_;
  Groups base_;
};

// The caller's evaluator, checked (one finite, non-negative misfit per member) and counted.
class Ensemble {
 public:
  Ensemble(const Evaluate& evaluate, const Box& box) : evaluate_(evaluate), box_(box) {
    if (!evaluate_) throw std::invalid_argument("cases::karst: no evaluator given");
  }

  std::vector<double> operator()(std::span<const Point> points) {
    std::vector<Groups> members;
    members.reserve(points.size());
    for (const Point& u : points) members.push_back(box_.groups(u));
    std::vector<double> misfits = evaluate_(members);
    ++calls;
    runs += members.size();
    if (misfits.size() != members.size())
      throw std::invalid_argument("cases::karst: the evaluator returned " + std::to_string(misfits.size()) +
                                  " misfits for an ensemble of " + std::to_string(members.size()) + " members");
    for (std::size_t k = 0; k < misfits.size(); ++k)
      if (!std::isfinite(misfits[k]) || misfits[k] < 0.0)
        throw std::invalid_argument("cases::karst: the evaluator returned misfit " + std::to_string(misfits[k]) +
                                    " for member " + std::to_string(k) + " of " + std::to_string(members.size()) +
                                    " (" + describe(members[k]) + "); a misfit must be finite and >= 0");
    return misfits;
  }

  std::size_t calls = 0, runs = 0;

 private:
  const Evaluate& evaluate_;
  const Box& box_;
};

// The best of `points`, evaluated in ensembles of at most max_ensemble members (0: one call).
Best search_points(const Evaluate& evaluate, const Box& box, const std::vector<Point>& points,
                   std::size_t max_ensemble) {
  if (points.empty()) throw std::invalid_argument("cases::karst: a search needs at least one point");
  Ensemble ensemble(evaluate, box);
  const std::size_t chunk = max_ensemble == 0 ? points.size() : max_ensemble;
  std::size_t best = 0;
  double best_misfit = std::numeric_limits<double>::infinity();
  for (std::size_t first = 0; first < points.size(); first += chunk) {
    const std::size_t count = std::min(chunk, points.size() - first);
    const std::vector<double> misfits = ensemble(std::span<const Point>(points).subspan(first, count));
    for (std::size_t k = 0; k < count; ++k)
      if (misfits[k] < best_misfit) {
        best_misfit = misfits[k];
        best = first + k;
      }
  }
  return {box.groups(points[best]), best_misfit, ensemble.calls, ensemble.runs};
}

std::vector<Point> grid_points(std::size_t per_axis) {
  if (per_axis == 0) throw std::invalid_argument("cases::karst: a grid search needs at least 1 point per axis");
  std::vector<double> axis(per_axis, 0.5);
  for (std::size_t i = 0; per_axis > 1 && i < per_axis; ++i)
    axis[i] = static_cast<double>(i) / static_cast<double>(per_axis - 1);
  std::vector<Point> points;
  points.reserve(per_axis * per_axis * per_axis);
  for (double a : axis)
    for (double b : axis)
      for (double c : axis) points.push_back({a, b, c});
  return points;
}

}  // namespace

void check_bounds(const Bounds& bounds) {
  const std::array<Range, 3> ranges = {bounds.pe, bounds.st, bounds.theta};
  for (std::size_t i = 0; i < 3; ++i) {
    const Range& r = ranges[i];
    if (!(r.lo > 0.0) || !std::isfinite(r.hi) || !(r.lo < r.hi))
      throw std::invalid_argument("cases::karst: bounds of " + std::string(kNames[i]) + " are [" +
                                  std::to_string(r.lo) + ", " + std::to_string(r.hi) +
                                  "]; they need 0 < lo < hi, finite");
  }
}

Groups table_7_3_start(const Groups& base) {
  Groups g = base;
  g.pe = 2000.0;
  g.st = 10.0;
  g.theta = 4.5;
  return g;
}

double rms_misfit(std::span<const double> curve, std::span<const double> observed) {
  if (curve.size() != observed.size() || curve.empty())
    throw std::invalid_argument("cases::karst: a misfit needs two curves of one non-zero length, got " +
                                std::to_string(curve.size()) + " and " + std::to_string(observed.size()) + " values");
  double sum = 0.0;
  for (std::size_t s = 0; s < curve.size(); ++s) sum += (curve[s] - observed[s]) * (curve[s] - observed[s]);
  return std::sqrt(sum / static_cast<double>(curve.size()));
}

Evaluate evaluate_cpu(const Grid& grid, const Forcing& forcing, std::vector<double> observed, unsigned threads) {
  if (observed.size() != forcing.steps() || observed.empty())
    throw std::invalid_argument("cases::karst: the observed curve has " + std::to_string(observed.size()) +
                                " values for a forcing of " + std::to_string(forcing.steps()) +
                                " steps; it needs one per step");
  struct Data {
    Grid grid;
    Forcing forcing;
    std::vector<double> observed;
  };
  // Shared: std::function copies its target, and the forcing can be long.
  auto data = std::make_shared<const Data>(Data{grid, forcing, std::move(observed)});
  return [data, threads](std::span<const Groups> members) {
    std::vector<double> misfits;
    if (members.empty()) return misfits;
    const std::vector<double> curves =
        forward_cpu(Model::heat, data->grid, data->forcing, members, Outlet::advective, threads);
    const std::size_t steps = data->observed.size();
    for (std::size_t k = 0; k < members.size(); ++k)
      misfits.push_back(rms_misfit(std::span<const double>(curves).subspan(k * steps, steps), data->observed));
    return misfits;
  };
}

Best search_grid(const Evaluate& evaluate, const Groups& base, const Bounds& bounds, std::size_t points_per_axis,
                 std::size_t max_ensemble) {
  const Box box(bounds, base);
  return search_points(evaluate, box, grid_points(points_per_axis), max_ensemble);
}

Best search_random(const Evaluate& evaluate, const Groups& base, const Bounds& bounds, std::size_t count,
                   std::uint64_t seed, std::size_t max_ensemble) {
  const Box box(bounds, base);
  if (count == 0) throw std::invalid_argument("cases::karst: a random search needs at least one point");
  std::mt19937_64 random(seed);
  // 53 random bits to [0, 1) by hand: std::uniform_real_distribution differs between libraries.
  const auto uniform = [&random] { return static_cast<double>(random() >> 11) * 0x1.0p-53; };
  std::vector<Point> points(count);
  for (Point& u : points)
    for (double& x : u) x = uniform();
  return search_points(evaluate, box, points, max_ensemble);
}

// ---- NLCG ----------------------------------------------------------------------------------------

namespace {

void check_options(const NlcgOptions& o) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("cases::karst: NLCG option " + what); };
  if (!(o.gradient_step > 0.0 && o.gradient_step <= 0.25)) fail("gradient_step must lie in (0, 0.25]");
  if (o.line_points < 2) fail("line_points must be at least 2");
  if (!(o.line_ratio > 0.0 && o.line_ratio < 1.0)) fail("line_ratio must lie in (0, 1)");
  if (o.restart_every < 1) fail("restart_every must be at least 1");
  for (double t : {o.misfit_tolerance, o.relative_tolerance, o.step_tolerance})
    if (!(t >= 0.0) || !std::isfinite(t)) fail("tolerances must be finite and >= 0");
}

double dot(const Point& a, const Point& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double max_norm(const Point& a) { return std::max({std::abs(a[0]), std::abs(a[1]), std::abs(a[2])}); }

// u + alpha d, clipped to the box (the projected path: a coordinate at a bound stays there).
Point along(const Point& u, const Point& d, double alpha) {
  Point p{};
  for (std::size_t i = 0; i < 3; ++i) p[i] = std::clamp(u[i] + alpha * d[i], 0.0, 1.0);
  return p;
}

// The step length beyond which no coordinate of along(u, d, .) moves any more.
double full_length(const Point& u, const Point& d) {
  double full = 0.0;
  for (std::size_t i = 0; i < 3; ++i)
    if (d[i] != 0.0) full = std::max(full, d[i] > 0.0 ? (1.0 - u[i]) / d[i] : -u[i] / d[i]);
  return full;
}

// The vertex of the parabola through (a, fa), (b, fb), (c, fc) with a < b < c, if it is a
// minimum strictly inside (a, c); NaN otherwise.
double parabola_vertex(double a, double fa, double b, double fb, double c, double fc) {
  const double p = (b - a) * (fb - fc), q = (b - c) * (fb - fa);
  const double den = p - q;
  if (!(den < 0.0)) return std::numeric_limits<double>::quiet_NaN();  // not convex (den < 0 <=> curvature > 0)
  const double x = b - 0.5 * ((b - a) * p - (b - c) * q) / den;
  return x > a && x < c ? x : std::numeric_limits<double>::quiet_NaN();
}

struct Trial {
  double alpha, f;  // f: the objective, misfit^2
  Point u;
};

class Nlcg {
 public:
  Nlcg(const Evaluate& evaluate, const Groups& start, const Bounds& bounds, const NlcgOptions& options)
      : box_(bounds, start), ensemble_(evaluate, box_), o_(options), u_(box_.point(start)) {
    check_options(o_);
  }

  Fit run() {
    begin();
    std::size_t since_restart = 0;
    while (fit_.stopped.empty()) {
      if (fit_.iterations >= o_.max_iterations) {
        fit_.stopped = "maximum iterations (" + std::to_string(o_.max_iterations) + ")";
        break;
      }
      iterate(since_restart);
    }
    fit_.groups = box_.groups(u_);
    fit_.misfit = std::sqrt(f_);
    fit_.ensemble_calls = ensemble_.calls;
    fit_.forward_runs = ensemble_.runs;
    return fit_;
  }

 private:
  // The start, or the best of the coarse grid and the start (one ensemble, the start first so that
  // it wins a tie).
  void begin() {
    std::vector<Point> points = {u_};
    if (o_.coarse_grid > 0) {
      const std::vector<Point> grid = grid_points(o_.coarse_grid);
      points.insert(points.end(), grid.begin(), grid.end());
    }
    const std::vector<double> misfits = ensemble_(points);
    const auto best = static_cast<std::size_t>(std::min_element(misfits.begin(), misfits.end()) - misfits.begin());
    u_ = points[best];
    f_ = misfits[best] * misfits[best];
    record(0.0, false);
    if (std::sqrt(f_) <= o_.misfit_tolerance) fit_.stopped = "misfit at or below the tolerance";
  }

  // One iteration: the gradient ensemble, the (preconditioned) PR direction, the line search.
  void iterate(std::size_t& since_restart) {
    const Derivatives dv = derivatives();
    const Point r = project(Point{-dv.gradient[0], -dv.gradient[1], -dv.gradient[2]});  // steepest descent
    if (max_norm(r) == 0.0) {
      fit_.stopped = "the projected gradient is zero";
      return;
    }
    bool restart = since_restart == 0 || since_restart >= o_.restart_every;
    // A restart refreshes the preconditioner from this point's curvature; within a cycle it stays
    // fixed, so that the directions of the cycle stay conjugate.
    const auto steepest = [&] {
      precondition(dv.curvature);
      return solve(r);
    };
    Point s = restart ? steepest() : solve(r), d = s;
    if (!restart) {
      const double beta = std::max(0.0, (dot(r, s) - dot(r, s_prev_)) / dot(r_prev_, s_prev_));  // PR
      for (std::size_t i = 0; i < 3; ++i) d[i] = s[i] + beta * d_prev_[i];
      d = project(d);
      restart = beta == 0.0 || !(dot(d, r) > 0.0);  // PR < 0, or not a descent direction
      if (restart) d = s = steepest();
    }
    Trial best = line_search(d);
    if (!(best.f < f_) && !restart) {  // the conjugate direction failed: try the steepest descent
      restart = true;
      d = s = steepest();
      best = line_search(d);
    }
    if (!(best.f < f_)) {
      fit_.stopped = "no lower misfit along the steepest descent";
      return;
    }
    since_restart = restart ? 1 : since_restart + 1;
    d_prev_ = d;
    r_prev_ = r;
    s_prev_ = s;
    accept(best, restart);
  }

  void accept(const Trial& best, bool restart) {
    const double step = max_norm(Point{best.u[0] - u_[0], best.u[1] - u_[1], best.u[2] - u_[2]});
    const double old_misfit = std::sqrt(f_);
    u_ = best.u;
    f_ = best.f;
    scale_ = 8.0 * best.alpha;  // the next line search starts at 8x this step
    ++fit_.iterations;
    record(step, restart);
    const double misfit = std::sqrt(f_);
    if (misfit <= o_.misfit_tolerance)
      fit_.stopped = "misfit at or below the tolerance";
    else if (step < o_.step_tolerance)
      fit_.stopped = "step below the tolerance";
    else if (old_misfit - misfit < o_.relative_tolerance * old_misfit)
      fit_.stopped = "relative improvement below the tolerance";
  }

  struct Derivatives {
    Point gradient, curvature;  // of f = misfit^2; curvature: the Hessian's diagonal
  };

  // Central differences of f (6 members, one ensemble); where u -+ h leaves the box the pair moves
  // inside (u + h, u + 2h or u - h, u - 2h) and second-order one-sided differences with f(u) are
  // used. The same points give the diagonal curvature for the preconditioner at no extra cost.
  Derivatives derivatives() {
    const double h = o_.gradient_step;
    std::array<double, 3> sign{};  // 0: central, +1: pair u + h, u + 2h; -1: pair u - h, u - 2h
    std::vector<Point> points;
    for (std::size_t i = 0; i < 3; ++i) {
      sign[i] = u_[i] - h < 0.0 ? 1.0 : (u_[i] + h > 1.0 ? -1.0 : 0.0);
      Point a = u_, b = u_;
      if (sign[i] == 0.0) {
        a[i] += h;
        b[i] -= h;
      } else {
        a[i] += sign[i] * h;
        b[i] += sign[i] * 2.0 * h;
      }
      points.push_back(a);
      points.push_back(b);
    }
    const std::vector<double> m = ensemble_(points);
    Derivatives dv{};
    for (std::size_t i = 0; i < 3; ++i) {
      const double fa = m[2 * i] * m[2 * i], fb = m[2 * i + 1] * m[2 * i + 1];
      if (sign[i] == 0.0) {
        dv.gradient[i] = (fa - fb) / (2.0 * h);
        dv.curvature[i] = (fa - 2.0 * f_ + fb) / (h * h);
      } else {
        dv.gradient[i] = sign[i] * (-3.0 * f_ + 4.0 * fa - fb) / (2.0 * h);
        dv.curvature[i] = (f_ - 2.0 * fa + fb) / (h * h);
      }
    }
    return dv;
  }

  // The Jacobi preconditioner: the diagonal curvature, floored at 1e-8 of the largest (a flat or
  // concave coordinate must not get an unbounded weight); the identity where none is positive or
  // preconditioning is off. Why: with the box mapped to [0, 1]^3 the misfit can still be far more
  // sensitive to one parameter than another (the Pe box is narrow: on the twin's grid the
  // curvatures differ by ~1e6), and PR-NLCG then crawls along the flat valley.
  void precondition(const Point& curvature) {
    const double top = std::max({curvature[0], curvature[1], curvature[2]});
    for (std::size_t i = 0; i < 3; ++i)
      diagonal_[i] = o_.precondition && top > 0.0 ? std::max(curvature[i], 1e-8 * top) : 1.0;
  }

  Point solve(const Point& r) const { return {r[0] / diagonal_[0], r[1] / diagonal_[1], r[2] / diagonal_[2]}; }

  Point project(Point d) const {
    for (std::size_t i = 0; i < 3; ++i)
      if ((u_[i] <= 0.0 && d[i] < 0.0) || (u_[i] >= 1.0 && d[i] > 0.0)) d[i] = 0.0;
    return d;
  }

  // Along d (normalized to max-norm 1): one ensemble of line_points geometric step lengths from
  // min(scale, the full length) down. If the longest is the best and shorter than the full length,
  // one more ensemble of line_points lengths, geometric from it to the full length: a conjugate
  // direction can need a step many times the last one (a long, flat valley), and the previous step
  // only sets where the search starts. Then, if refine_points > 0, one ensemble of the parabolic
  // vertex and a finer, even set between the best one's neighbours (or, if none improved, smaller
  // steps still). Returns the best trial.
  Trial line_search(Point d) {
    const double norm = max_norm(d);
    for (double& x : d) x /= norm;
    const double full = full_length(u_, d);
    const double top = std::min(scale_, full);
    std::vector<double> alphas;
    for (double a = top; alphas.size() < o_.line_points; a *= o_.line_ratio) alphas.push_back(a);
    std::vector<Trial> trials = evaluate(d, alphas);  // alpha descending
    if (top < full && std::min_element(trials.begin(), trials.end(), by_f)->alpha == top) {
      alphas.clear();
      const double ratio = std::pow(full / top, 1.0 / static_cast<double>(o_.line_points));
      for (std::size_t k = 1; k < o_.line_points; ++k) alphas.push_back(top * std::pow(ratio, static_cast<double>(k)));
      alphas.push_back(full);
      const std::vector<Trial> longer = evaluate(d, alphas);
      trials.insert(trials.end(), longer.begin(), longer.end());
    }
    std::sort(trials.begin(), trials.end(), [](const Trial& a, const Trial& b) { return a.alpha < b.alpha; });
    const auto best = static_cast<std::size_t>(std::min_element(trials.begin(), trials.end(), by_f) - trials.begin());
    if (o_.refine_points == 0) return trials[best];
    std::vector<Trial> refined = evaluate(d, refinement(trials, best, full));
    refined.push_back(trials[best]);
    return *std::min_element(refined.begin(), refined.end(), by_f);
  }

  static bool by_f(const Trial& a, const Trial& b) { return a.f < b.f; }

  // The refinement's step lengths (refine_points of them) around trials[best] (alpha ascending).
  std::vector<double> refinement(const std::vector<Trial>& trials, std::size_t best, double full) const {
    const std::size_t count = o_.refine_points;
    std::vector<double> alphas;
    if (!(trials[best].f < f_)) {  // nothing improved: smaller steps still
      for (double a = trials[0].alpha * o_.line_ratio; alphas.size() < count; a *= o_.line_ratio) alphas.push_back(a);
      return alphas;
    }
    const double lo_alpha = best == 0 ? 0.0 : trials[best - 1].alpha;
    const double lo_f = best == 0 ? f_ : trials[best - 1].f;
    const bool top = best + 1 == trials.size();
    const double hi_alpha = top ? std::min(full, trials[best].alpha / o_.line_ratio) : trials[best + 1].alpha;
    if (!top) {
      const Trial& b = trials[best];
      const double v = parabola_vertex(lo_alpha, lo_f, b.alpha, b.f, hi_alpha, trials[best + 1].f);
      if (std::isfinite(v)) alphas.push_back(v);
    }
    const std::size_t even = count - alphas.size();
    for (std::size_t j = 1; j <= even; ++j)
      alphas.push_back(lo_alpha + (hi_alpha - lo_alpha) * static_cast<double>(j) / static_cast<double>(even + 1));
    return alphas;
  }

  std::vector<Trial> evaluate(const Point& d, const std::vector<double>& alphas) {
    std::vector<Point> points;
    for (double a : alphas) points.push_back(along(u_, d, a));
    const std::vector<double> m = ensemble_(points);
    std::vector<Trial> trials;
    for (std::size_t k = 0; k < alphas.size(); ++k) trials.push_back({alphas[k], m[k] * m[k], points[k]});
    return trials;
  }

  void record(double step, bool restarted) {
    const Iteration it{fit_.iterations, box_.groups(u_), std::sqrt(f_), step, restarted, ensemble_.calls,
                       ensemble_.runs};
    fit_.history.push_back(it);
    if (o_.progress) o_.progress(it);
  }

  Box box_;
  Ensemble ensemble_;
  const NlcgOptions& o_;
  Point u_;
  double f_ = 0.0;      // misfit^2 at u_
  double scale_ = 1.0;  // the line search's largest trial step (max-norm in u)
  Point d_prev_{}, r_prev_{}, s_prev_{};  // the last direction, steepest descent, preconditioned one
  Point diagonal_{1.0, 1.0, 1.0};         // the preconditioner
  Fit fit_{};
};

}  // namespace

Fit nlcg(const Evaluate& evaluate, const Groups& start, const Bounds& bounds, const NlcgOptions& options) {
  return Nlcg(evaluate, start, bounds, options).run();
}

}  // namespace cases::karst
