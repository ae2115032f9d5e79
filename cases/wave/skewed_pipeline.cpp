#include "skewed_pipeline.hpp"

#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include "coefficients.hpp"
#include "skewed_levels.hpp"

namespace cases {
namespace wave {

SkewedPipelineReport skewed_pipeline_host(const SkewedTiling& t, double courant2, const SkewedSchedule& schedule,
                                          std::vector<double>& older, std::vector<double>& current) {
  check_tiling(t);
  const std::size_t n = t.n;
  if (older.size() != n * n * n || current.size() != n * n * n || schedule.resident < 1 || schedule.slack < 0)
    throw std::invalid_argument("cases::wave::skewed_pipeline_host: arrays of " + std::to_string(older.size()) +
                                " and " + std::to_string(current.size()) + " values for " + std::to_string(n) +
                                "^3 nodes, " + std::to_string(schedule.resident) + " resident tiles, slack " +
                                std::to_string(schedule.slack));
  const long r = static_cast<long>(radius(t.order)), T = static_cast<long>(t.steps), ln = static_cast<long>(n);
  SkewedLevels levels(t, courant2, older, current);
  // Input planes p = first .. last - 1: stage l computes level l at plane p - l r, where level l
  // is needed, [-(T - l) r, n + (T - l) r).
  const long first = (2 - T) * r, last = ln + T * r;
  const std::vector<SkewedTile> tickets = skewed_tickets(t);
  std::map<SkewedTile, long> ticket_of;
  for (long q = 0; q < static_cast<long>(tickets.size()); ++q) ticket_of[tickets[static_cast<std::size_t>(q)]] = q;
  std::vector<long> done(tickets.size(), first - 1);  // the last plane each tile ran
  std::vector<long> resident;
  std::size_t started = 0, finished = 0;
  std::mt19937_64 rng(schedule.seed);
  SkewedPipelineReport report;

  const auto runnable = [&](long q) {
    const SkewedTile me = tickets[static_cast<std::size_t>(q)];
    const long p = done[static_cast<std::size_t>(q)] + 1;
    for (const SkewedTile& other : {SkewedTile{me.first - 1, me.second}, SkewedTile{me.first, me.second - 1},
                                    SkewedTile{me.first - 1, me.second - 1}}) {
      const auto it = ticket_of.find(other);
      if (it != ticket_of.end() && done[static_cast<std::size_t>(it->second)] < p - schedule.slack) return false;
    }
    return true;
  };
  const auto run_plane = [&](long q) {
    const long p = ++done[static_cast<std::size_t>(q)];
    for (long l = 1; l <= T; ++l) {
      const long z = p - l * r;
      if (!levels.needed(l, z)) continue;
      const ColumnRange f = skewed_footprint(t, tickets[static_cast<std::size_t>(q)], static_cast<std::size_t>(l));
      for (long y = f.y0; y < f.y1; ++y)
        for (long x = f.x0; x < f.x1; ++x) {
          ++report.updates;
          if (!levels.update(l, x, y, z, q, tickets, [](long, long, long, long, long) {})) ++report.broken;
        }
    }
  };

  while (finished < tickets.size()) {
    while (resident.size() < schedule.resident && started < tickets.size())
      resident.push_back(static_cast<long>(started++));
    std::vector<std::size_t> ready;
    for (std::size_t k = 0; k < resident.size(); ++k)
      if (runnable(resident[k])) ready.push_back(k);
      else ++report.waits;
    if (ready.empty()) {
      report.stalled = true;
      break;
    }
    const std::size_t pick = schedule.latest_first
                                 ? ready.back()  // resident is in ticket order
                                 : ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng)];
    const long q = resident[pick];
    run_plane(q);
    if (done[static_cast<std::size_t>(q)] == last - 1) {
      resident.erase(resident.begin() + static_cast<long>(pick));
      ++finished;
    }
  }
  levels.store(older, current);
  return report;
}

}  // namespace wave
}  // namespace cases
