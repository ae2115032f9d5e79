#include "skewed_pipeline.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include "coefficients.hpp"

namespace cases {
namespace wave {

namespace {

constexpr long kMemory = -2, kNone = -1;

/// Levels -1 .. T on the box [-g, n + g)^3, each cell with the ticket that wrote it.
class Box {
 public:
  Box(std::size_t n, long g, std::size_t steps) : g_(g), side_(static_cast<long>(n) + 2 * g) {
    const auto cells = static_cast<std::size_t>(side_ * side_ * side_);
    for (std::size_t l = 0; l < steps + 2; ++l) {
      values_.emplace_back(cells, std::numeric_limits<double>::quiet_NaN());
      writer_.emplace_back(cells, l < 2 ? kMemory : kNone);
    }
  }
  [[nodiscard]] bool inside(long x, long y, long z) const {
    return x >= -g_ && x < side_ - g_ && y >= -g_ && y < side_ - g_ && z >= -g_ && z < side_ - g_;
  }
  double& value(long level, long x, long y, long z) { return values_[slot(level)][cell(x, y, z)]; }
  long& writer(long level, long x, long y, long z) { return writer_[slot(level)][cell(x, y, z)]; }

 private:
  [[nodiscard]] std::size_t slot(long level) const { return static_cast<std::size_t>(level + 1); }
  [[nodiscard]] std::size_t cell(long x, long y, long z) const {
    return static_cast<std::size_t>(((z + g_) * side_ + (y + g_)) * side_ + (x + g_));
  }
  long g_, side_;
  std::vector<std::vector<double>> values_;
  std::vector<std::vector<long>> writer_;
};

}  // namespace

SkewedPipelineReport skewed_pipeline_host(const SkewedTiling& t, double courant2, const SkewedSchedule& schedule,
                                          std::vector<double>& older, std::vector<double>& current) {
  check_tiling(t);
  const std::size_t n = t.n;
  if (older.size() != n * n * n || current.size() != n * n * n || schedule.resident < 1 || schedule.slack < 0)
    throw std::invalid_argument("cases::wave::skewed_pipeline_host: arrays of " + std::to_string(older.size()) +
                                " and " + std::to_string(current.size()) + " values for " + std::to_string(n) +
                                "^3 nodes, " + std::to_string(schedule.resident) + " resident tiles, slack " +
                                std::to_string(schedule.slack));
  const std::span<const double> c = coefficients(t.order);
  const long r = static_cast<long>(c.size() - 1), T = static_cast<long>(t.steps), ln = static_cast<long>(n);
  const double centre = 2 + 6 * c[0] * courant2;
  Box box(n, T * r, t.steps);
  const auto wrap = [ln](long i) { return static_cast<std::size_t>(((i % ln) + ln) % ln); };
  for (long z = -T * r; z < ln + T * r; ++z)  // the input levels with their periodic ghosts
    for (long y = -T * r; y < ln + T * r; ++y)
      for (long x = -T * r; x < ln + T * r; ++x) {
        const std::size_t i = wrap(x) + n * (wrap(y) + n * wrap(z));
        box.value(-1, x, y, z) = older[i];
        box.value(0, x, y, z) = current[i];
      }
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
    const SkewedTile me = tickets[static_cast<std::size_t>(q)];
    const long p = ++done[static_cast<std::size_t>(q)];
    for (long l = 1; l <= T; ++l) {
      const long z = p - l * r, s = (T - l) * r;
      if (z < -s || z >= ln + s) continue;
      const ColumnRange f = skewed_footprint(t, me, static_cast<std::size_t>(l));
      for (long y = f.y0; y < f.y1; ++y)
        for (long x = f.x0; x < f.x1; ++x) {
          bool broken = box.writer(l, x, y, z) != kNone;  // written twice
          const auto read = [&](long level, long cx, long cy, long cz) {
            if (!box.inside(cx, cy, cz)) return void(broken = true);
            const long who = box.writer(level, cx, cy, cz);
            if (who == kMemory || who == q) return;
            if (who == kNone || !skewed_reads_from(me, tickets[static_cast<std::size_t>(who)])) broken = true;
          };
          read(l - 2, x, y, z);
          read(l - 1, x, y, z);
          for (long k = 1; k <= r; ++k)
            for (const auto& [dx, dy, dz] : {std::array<long, 3>{k, 0, 0}, std::array<long, 3>{-k, 0, 0},
                                             std::array<long, 3>{0, k, 0}, std::array<long, 3>{0, -k, 0},
                                             std::array<long, 3>{0, 0, k}, std::array<long, 3>{0, 0, -k}})
              read(l - 1, x + dx, y + dy, z + dz);
          ++report.updates;
          box.writer(l, x, y, z) = q;
          if (broken) {
            ++report.broken;
            box.value(l, x, y, z) = std::numeric_limits<double>::quiet_NaN();
            continue;
          }
          double sum = 0;  // step_host's chain of FMAs
          for (long k = 1; k <= r; ++k) {
            const double ck = c[static_cast<std::size_t>(k)];
            sum = std::fma(ck, box.value(l - 1, x + k, y, z) + box.value(l - 1, x - k, y, z), sum);
            sum = std::fma(ck, box.value(l - 1, x, y + k, z) + box.value(l - 1, x, y - k, z), sum);
            sum = std::fma(ck, box.value(l - 1, x, y, z + k) + box.value(l - 1, x, y, z - k), sum);
          }
          box.value(l, x, y, z) =
              std::fma(courant2, sum, std::fma(centre, box.value(l - 1, x, y, z), -box.value(l - 2, x, y, z)));
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
  for (long z = 0; z < ln; ++z)  // the owned cells of the last two levels
    for (long y = 0; y < ln; ++y)
      for (long x = 0; x < ln; ++x) {
        const std::size_t i = static_cast<std::size_t>(x + ln * (y + ln * z));
        older[i] = box.value(T - 1, x, y, z);
        current[i] = box.value(T, x, y, z);
      }
  return report;
}

}  // namespace wave
}  // namespace cases
