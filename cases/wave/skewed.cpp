#include "skewed.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "coefficients.hpp"
#include "skewed_levels.hpp"

namespace cases {
namespace wave {

namespace {

long ceil_div(std::size_t a, std::size_t b) { return static_cast<long>((a + b - 1) / b); }

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
  SkewedLevels levels(t, courant2, older, current);
  const long T = static_cast<long>(t.steps), ln = static_cast<long>(n), r = static_cast<long>(radius(t.order));
  SkewedReport report;
  std::map<std::pair<long, long>, std::set<std::size_t>> read_by_others;  // (ticket, level): columns
  for (long q = 0; q < static_cast<long>(order.size()); ++q) {
    const SkewedTile me = order[static_cast<std::size_t>(q)];
    const auto on_read = [&](long who, long level, long x, long y, long) {
      const SkewedTile them = order[static_cast<std::size_t>(who)];
      const ColumnRange wf = skewed_footprint(t, them, static_cast<std::size_t>(level));
      if (them.first != me.first) report.edge_x = std::max(report.edge_x, wf.x1 - x);
      if (them.second != me.second) report.edge_y = std::max(report.edge_y, wf.y1 - y);
      read_by_others[{who, level}].insert(levels.cell(x, y, 0));
    };
    for (long l = 1; l <= T; ++l) {
      const ColumnRange f = skewed_footprint(t, me, static_cast<std::size_t>(l));
      const long s = (T - l) * r;  // the planes level l must have: [-s, n + s)
      for (long y = f.y0; y < f.y1; ++y)
        for (long x = f.x0; x < f.x1; ++x)
          for (long z = -s; z < ln + s; ++z) {
            ++report.updates;
            if (!levels.update(l, x, y, z, q, order, on_read)) ++report.broken;
          }
    }
  }
  for (const auto& [key, cols] : read_by_others) report.published = std::max(report.published, cols.size());
  levels.store(older, current);
  return report;
}

}  // namespace wave
}  // namespace cases
