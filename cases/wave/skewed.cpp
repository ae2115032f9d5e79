#include "skewed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "coefficients.hpp"

namespace cases {
namespace wave {

namespace {

long ceil_div(std::size_t a, std::size_t b) { return static_cast<long>((a + b - 1) / b); }

/// The levels -1 .. T of the block [-g, n + g)^2 of columns, each column n values in z, and which
/// ticket wrote each column of each level.
class Levels {
 public:
  static constexpr long kMemory = -2, kNone = -1;
  Levels(std::size_t n, long g, std::size_t steps)
      : n_(n), g_(g), pitch_(static_cast<long>(n) + 2 * g), columns_(static_cast<std::size_t>(pitch_ * pitch_)) {
    for (std::size_t l = 0; l < steps + 2; ++l) {
      values_.emplace_back(columns_ * n, std::numeric_limits<double>::quiet_NaN());
      writer_.emplace_back(columns_, l < 2 ? kMemory : kNone);
    }
  }
  [[nodiscard]] bool inside(long x, long y) const { return x >= -g_ && x < pitch_ - g_ && y >= -g_ && y < pitch_ - g_; }
  [[nodiscard]] std::size_t column(long x, long y) const {
    return static_cast<std::size_t>((y + g_) * pitch_ + (x + g_));
  }
  double* at(long level, long x, long y) { return &values_[static_cast<std::size_t>(level + 1)][column(x, y) * n_]; }
  long& writer(long level, long x, long y) { return writer_[static_cast<std::size_t>(level + 1)][column(x, y)]; }
  [[nodiscard]] long g() const { return g_; }

 private:
  std::size_t n_;
  long g_, pitch_;
  std::size_t columns_;
  std::vector<std::vector<double>> values_;
  std::vector<std::vector<long>> writer_;
};

}  // namespace

bool skewed_reads_from(SkewedTile reader, SkewedTile writer) {
  const long dx = reader.first - writer.first, dy = reader.second - writer.second;
  return (dx == 0 || dx == 1) && (dy == 0 || dy == 1);
}

void check_tiling(const SkewedTiling& t) {
  const std::size_t r = radius(t.order);  // throws for an unknown order
  const std::size_t least = std::max<std::size_t>(1, 2 * (t.steps > 0 ? t.steps - 1 : 0) * r);
  if (t.n <= static_cast<std::size_t>(t.order) || t.steps < 1 || t.w < least || t.h < least)
    throw std::invalid_argument("cases::wave::check_tiling: n " + std::to_string(t.n) + " at order " +
                                std::to_string(t.order) + ", " + std::to_string(t.steps) + " steps, tiles " +
                                std::to_string(t.w) + " x " + std::to_string(t.h) +
                                " (want n > order, steps >= 1 and tiles of at least " + std::to_string(least) +
                                " = 2 (steps - 1) r columns a side)");
}

ColumnRange skewed_footprint(const SkewedTiling& t, SkewedTile tile, std::size_t level) {
  check_tiling(t);
  if (level < 1 || level > t.steps)
    throw std::invalid_argument("cases::wave::skewed_footprint: level " + std::to_string(level) + " of " +
                                std::to_string(t.steps));
  const long r = static_cast<long>(radius(t.order)), n = static_cast<long>(t.n);
  const long shift = static_cast<long>(t.steps - level) * r;
  const long w = static_cast<long>(t.w), h = static_cast<long>(t.h);
  const auto clip = [&](long v) { return std::clamp(v, -shift, n + shift); };
  return {clip(tile.first * w + shift), clip((tile.first + 1) * w + shift), clip(tile.second * h + shift),
          clip((tile.second + 1) * h + shift)};
}

std::vector<SkewedTile> skewed_tickets(const SkewedTiling& t) {
  check_tiling(t);
  std::vector<SkewedTile> order;
  for (long j = -1; j < ceil_div(t.n, t.h); ++j)
    for (long i = -1; i < ceil_div(t.n, t.w); ++i) order.emplace_back(i, j);
  return order;
}

SkewedReport skewed_steps_host(const SkewedTiling& t, double courant2, std::span<const SkewedTile> order,
                               std::vector<double>& older, std::vector<double>& current) {
  check_tiling(t);
  const std::size_t n = t.n;
  if (older.size() != n * n * n || current.size() != n * n * n)
    throw std::invalid_argument("cases::wave::skewed_steps_host: arrays of " + std::to_string(older.size()) + " and " +
                                std::to_string(current.size()) + " values for " + std::to_string(n) + "^3 nodes");
  const std::span<const double> c = coefficients(t.order);
  const long r = static_cast<long>(c.size() - 1), T = static_cast<long>(t.steps), ln = static_cast<long>(n);
  const double centre = 2 + 6 * c[0] * courant2;
  Levels lv(n, T * r, t.steps);
  const auto wrap = [ln](long i) { return static_cast<std::size_t>(((i % ln) + ln) % ln); };
  for (long y = -lv.g(); y < ln + lv.g(); ++y)  // the input levels with their periodic ghosts
    for (long x = -lv.g(); x < ln + lv.g(); ++x)
      for (std::size_t z = 0; z < n; ++z) {
        const std::size_t i = wrap(x) + n * (wrap(y) + n * z);
        lv.at(-1, x, y)[z] = older[i];
        lv.at(0, x, y)[z] = current[i];
      }
  SkewedReport report;
  std::map<std::pair<long, long>, std::set<std::size_t>> read_by_others;  // (ticket, level): columns
  for (long q = 0; q < static_cast<long>(order.size()); ++q) {
    const SkewedTile me = order[static_cast<std::size_t>(q)];
    for (long l = 1; l <= T; ++l) {
      const ColumnRange f = skewed_footprint(t, me, static_cast<std::size_t>(l));
      for (long y = f.y0; y < f.y1; ++y)
        for (long x = f.x0; x < f.x1; ++x) {
          bool broken = !lv.inside(x, y) || lv.writer(l, x, y) != Levels::kNone;  // outside, or a second write
          const auto read = [&](long level, long cx, long cy) {
            if (!lv.inside(cx, cy)) return void(broken = true);
            const long who = lv.writer(level, cx, cy);
            if (who == Levels::kMemory || who == q) return;
            if (who == Levels::kNone || !skewed_reads_from(me, order[static_cast<std::size_t>(who)])) return void(broken = true);
            const SkewedTile them = order[static_cast<std::size_t>(who)];
            const ColumnRange wf = skewed_footprint(t, them, static_cast<std::size_t>(level));
            if (them.first != me.first) report.edge_x = std::max(report.edge_x, wf.x1 - cx);
            if (them.second != me.second) report.edge_y = std::max(report.edge_y, wf.y1 - cy);
            read_by_others[{who, level}].insert(lv.column(cx, cy));
          };
          read(l - 2, x, y);
          read(l - 1, x, y);
          for (long k = 1; k <= r; ++k) {
            read(l - 1, x + k, y);
            read(l - 1, x - k, y);
            read(l - 1, x, y + k);
            read(l - 1, x, y - k);
          }
          ++report.updates;
          if (broken) {
            ++report.broken;
            if (!lv.inside(x, y)) continue;
          }
          lv.writer(l, x, y) = q;
          double* out = lv.at(l, x, y);
          const double* prev = lv.at(l - 2, x, y);
          const double* cur = lv.at(l - 1, x, y);
          const double *xp[8], *xm[8], *yp[8], *ym[8];
          for (long k = 1; k <= r && !broken; ++k) {
            xp[k - 1] = lv.at(l - 1, x + k, y);
            xm[k - 1] = lv.at(l - 1, x - k, y);
            yp[k - 1] = lv.at(l - 1, x, y + k);
            ym[k - 1] = lv.at(l - 1, x, y - k);
          }
          for (std::size_t z = 0; z < n; ++z) {
            if (broken) {
              out[z] = std::numeric_limits<double>::quiet_NaN();
              continue;
            }
            double sum = 0;  // step_host's chain of FMAs
            for (long k = 1; k <= r; ++k) {
              const std::size_t k_ = static_cast<std::size_t>(k);
              sum = std::fma(c[k_], xp[k - 1][z] + xm[k - 1][z], sum);
              sum = std::fma(c[k_], yp[k - 1][z] + ym[k - 1][z], sum);
              sum = std::fma(c[k_], cur[wrap(static_cast<long>(z) + k)] + cur[wrap(static_cast<long>(z) - k)], sum);
            }
            out[z] = std::fma(courant2, sum, std::fma(centre, cur[z], -prev[z]));
          }
        }
    }
  }
  for (const auto& [key, cols] : read_by_others) report.published = std::max(report.published, cols.size());
  for (long y = 0; y < ln; ++y)  // the owned columns of the last two levels (NaN where never computed)
    for (long x = 0; x < ln; ++x)
      for (std::size_t z = 0; z < n; ++z) {
        const std::size_t i = static_cast<std::size_t>(x) + n * (static_cast<std::size_t>(y) + n * z);
        older[i] = lv.at(T - 1, x, y)[z];
        current[i] = lv.at(T, x, y)[z];
      }
  return report;
}

}  // namespace wave
}  // namespace cases
