#include "diamond.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <utility>
#include <stdexcept>
#include <string>

#include "coefficients.hpp"

namespace cases {
namespace wave {
namespace {

long l1(long dx, long dy) { return std::labs(dx) + std::labs(dy); }

long floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The distance from (x, y) to the nx x ny block, in the L1 norm.
long distance_to_block(long x, long y, std::size_t nx, std::size_t ny) {
  const long dx = std::max({0L, -x, x - static_cast<long>(nx) + 1});
  const long dy = std::max({0L, -y, y - static_cast<long>(ny) + 1});
  return dx + dy;
}

void check_radius_and_steps(const char* where, int radius, std::size_t steps) {
  if (radius < 1 || steps < 1)
    throw std::invalid_argument(std::string("cases::wave::") + where + ": diamond radius " + std::to_string(radius) +
                                " and " + std::to_string(steps) + " steps (at least 1 each)");
}

}  // namespace

TowerBase diamond_tile(long x, long y, int radius) {
  if (radius < 1) throw std::invalid_argument("cases::wave::diamond_tile: radius " + std::to_string(radius) + " (at least 1)");
  // (x, y) = i (R, R + 1) + j (R + 1, -R) + d, |d| <= R: i and j from the inverse of the lattice
  // matrix (determinant -(2R^2 + 2R + 1)), then the one of the nearby lattice points that holds it.
  const long r = radius, cells = 2 * r * r + 2 * r + 1;
  const long i0 = floor_div(r * x + (r + 1) * y, cells), j0 = floor_div((r + 1) * x - r * y, cells);
  for (long i = i0 - 1; i <= i0 + 2; ++i)
    for (long j = j0 - 1; j <= j0 + 2; ++j) {
      const TowerBase b{i * r + j * (r + 1), i * (r + 1) - j * r};
      if (l1(x - b.x, y - b.y) <= r) return b;
    }
  throw std::logic_error("cases::wave::diamond_tile: no tile holds (" + std::to_string(x) + ", " + std::to_string(y) + ")");
}

std::vector<TowerBase> diamond_towers(std::size_t nx, std::size_t ny, int radius, std::size_t steps) {
  check_radius_and_steps("diamond_towers", radius, steps);
  if (nx == 0 || ny == 0) throw std::invalid_argument("cases::wave::diamond_towers: an empty block");
  // A prism meets the block where one of its diamonds, centred at b + (s, 0), comes within R of it:
  // the tiles of the columns the block's R-neighbourhood holds, shifted back by 0 .. steps - 1.
  const long r = radius, t = static_cast<long>(steps);
  std::vector<TowerBase> towers;
  for (long y = -r; y < static_cast<long>(ny) + r; ++y)
    for (long x = -r - t + 1; x < static_cast<long>(nx) + r; ++x) {
      const TowerBase b = diamond_tile(x, y, radius);
      for (long s = 0; s < t; ++s)
        if (distance_to_block(b.x + s, b.y, nx, ny) <= r) {
          towers.push_back(b);
          break;
        }
    }
  std::sort(towers.begin(), towers.end(), [](TowerBase a, TowerBase b) { return a.x != b.x ? a.x > b.x : a.y < b.y; });
  towers.erase(std::unique(towers.begin(), towers.end(), [](TowerBase a, TowerBase b) { return a.x == b.x && a.y == b.y; }),
               towers.end());
  return towers;
}

namespace {

// A sweep in progress on host arrays: the levels of every column, and one tower's step at a time.
class Sweep {
 public:
  Sweep(double courant2, std::size_t nx, std::size_t ny, std::size_t nz, int radius, std::size_t steps,
        std::span<double> even, std::span<double> odd)
      : nx_(nx), ny_(ny), nz_(nz), radius_(radius), steps_(steps), courant2_(courant2), level_{even, odd}, at_(nx * ny, 0) {
    check_radius_and_steps("diamond_sweep_host", radius, steps);
    if (nx == 0 || ny == 0 || nz < 3 || even.size() != nx * ny * nz || odd.size() != nx * ny * nz)
      throw std::invalid_argument("cases::wave::diamond_sweep_host: a block of " + std::to_string(nx) + " x " +
                                  std::to_string(ny) + " x " + std::to_string(nz) + " with levels of " +
                                  std::to_string(even.size()) + " and " + std::to_string(odd.size()) + " values");
    const std::span<const double> c = coefficients(2);
    c1_ = c[1];
    centre_ = 2 + 6 * c[0] * courant2;
  }

  // Step s of the tower of the tile centred at b: its diamond centred at b + (s, 0).
  void step(TowerBase b, std::size_t s) {
    const long r = radius_, cx = b.x + static_cast<long>(s), cy = b.y;
    for (long y = cy - r; y <= cy + r; ++y)
      for (long x = cx - r; x <= cx + r; ++x) {
        if (l1(x - cx, y - cy) > r || !inside(x, y)) continue;
        traffic_.broken += update(x, y, s) ? 0 : 1;
        ++traffic_.updates;
        // A column enters the tower when the diamond before did not hold it, leaves when the
        // next one will not.
        if (s == 0 || l1(x - cx + 1, y - cy) > r) ++traffic_.loads;
        if (s + 1 == steps_ || l1(x - cx - 1, y - cy) > r) ++traffic_.stores;
      }
  }

  [[nodiscard]] std::size_t steps() const { return steps_; }
  [[nodiscard]] DiamondTraffic traffic() const { return traffic_; }

 private:
  [[nodiscard]] bool inside(long x, long y) const {
    return x >= 0 && y >= 0 && x < static_cast<long>(nx_) && y < static_cast<long>(ny_);
  }

  // Column (x, y) from level s to s + 1; NaN where the schedule does not hold. False where the
  // column or a neighbour inside the block was at another level.
  bool update(long x, long y, std::size_t s) {
    const std::size_t columns = nx_ * ny_, col = static_cast<std::size_t>(x) + nx_ * static_cast<std::size_t>(y);
    const std::span<double> cur = level_[s % 2], next = level_[(s + 1) % 2];
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const bool own = at_[col] == s;
    // The neighbours' level-s values: a neighbour at level s or s + 1 holds it.
    const long nbr[4][2] = {{x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}};
    bool ready[4], valid = own;
    for (int k = 0; k < 4; ++k) {
      const long u = nbr[k][0], v = nbr[k][1];
      const std::size_t l = inside(u, v) ? at_[static_cast<std::size_t>(u) + nx_ * static_cast<std::size_t>(v)] : 0;
      ready[k] = inside(u, v) && (l == s || l == s + 1);
      valid = valid && (ready[k] || !inside(u, v));
    }
    const auto value = [&](int k, std::size_t z) {
      return ready[k] ? cur[static_cast<std::size_t>(nbr[k][0]) + nx_ * (static_cast<std::size_t>(nbr[k][1]) + ny_ * z)] : nan;
    };
    for (std::size_t z = 0; z < nz_; ++z) {
      const std::size_t i = col + columns * z;
      const std::size_t up = col + columns * ((z + 1) % nz_), down = col + columns * ((z + nz_ - 1) % nz_);
      // step_host's order: the pair sums of x, y, z, then the centre and the older level.
      double sum = 0;
      sum = std::fma(c1_, value(0, z) + value(1, z), sum);
      sum = std::fma(c1_, value(2, z) + value(3, z), sum);
      sum = std::fma(c1_, cur[up] + cur[down], sum);
      next[i] = own ? std::fma(courant2_, sum, std::fma(centre_, cur[i], -next[i])) : nan;
    }
    at_[col] = s + 1;
    return valid;
  }

  std::size_t nx_, ny_, nz_;
  int radius_;
  std::size_t steps_;
  double courant2_, c1_ = 0, centre_ = 0;
  std::span<double> level_[2];
  std::vector<std::size_t> at_;  // each column's level
  DiamondTraffic traffic_;
};

}  // namespace

DiamondTraffic diamond_sweep_host(double courant2, std::size_t nx, std::size_t ny, std::size_t nz, int radius,
                                  std::size_t steps, std::span<const TowerBase> order, std::span<double> even,
                                  std::span<double> odd) {
  Sweep sweep(courant2, nx, ny, nz, radius, steps, even, odd);
  for (const TowerBase& b : order)
    for (std::size_t s = 0; s < steps; ++s) sweep.step(b, s);
  return sweep.traffic();
}

DiamondTraffic diamond_stages_sweep_host(double courant2, std::size_t nx, std::size_t ny, std::size_t nz, int radius,
                                         std::size_t steps, std::span<const std::vector<TowerBase>> stages,
                                         DiamondInterleave how, std::span<double> even, std::span<double> odd) {
  Sweep sweep(courant2, nx, ny, nz, radius, steps, even, odd);
  for (const std::vector<TowerBase>& stage : stages) {
    if (how == DiamondInterleave::steps_together) {
      for (std::size_t s = 0; s < steps; ++s)
        for (const TowerBase& b : stage) sweep.step(b, s);
      continue;
    }
    const auto tower = [&](const TowerBase& b) {
      for (std::size_t s = 0; s < steps; ++s) sweep.step(b, s);
    };
    if (how == DiamondInterleave::towers_in_turn)
      std::for_each(stage.begin(), stage.end(), tower);
    else
      std::for_each(stage.rbegin(), stage.rend(), tower);
  }
  return sweep.traffic();
}

std::vector<std::vector<TowerBase>> diamond_stages(std::size_t nx, std::size_t ny, int radius, std::size_t steps) {
  const std::vector<TowerBase> order = diamond_towers(nx, ny, radius, steps);
  std::map<std::pair<long, long>, std::size_t> stage_of;
  std::vector<std::vector<TowerBase>> stages;
  const long r = radius;
  const auto inside = [&](long x, long y) { return x >= 0 && y >= 0 && x < static_cast<long>(nx) && y < static_cast<long>(ny); };
  for (const TowerBase& a : order) {
    // The towers that wrote what a's updates read, or read what they overwrite: for the update of
    // column p from level s to s + 1 (s >= 1), the towers of p and its neighbours at level s - 1
    // (those made their level s, and read p's level s - 1, which this update overwrites).
    std::size_t stage = 0;
    for (std::size_t s = 1; s < steps; ++s) {
      const long cx = a.x + static_cast<long>(s), cy = a.y;
      for (long y = cy - r; y <= cy + r; ++y)
        for (long x = cx - r; x <= cx + r; ++x) {
          if (l1(x - cx, y - cy) > r || !inside(x, y)) continue;
          const long around[5][2] = {{x, y}, {x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}};
          for (const auto& q : around) {
            if (!inside(q[0], q[1])) continue;
            const TowerBase b = diamond_tile(q[0] - static_cast<long>(s) + 1, q[1], radius);
            if (b.x == a.x && b.y == a.y) continue;
            const auto found = stage_of.find({b.x, b.y});
            if (found == stage_of.end())
              throw std::logic_error("cases::wave::diamond_stages: a tower depends on one that runs after it");
            stage = std::max(stage, found->second + 1);
          }
        }
    }
    stage_of[{a.x, a.y}] = stage;
    if (stages.size() <= stage) stages.resize(stage + 1);
    stages[stage].push_back(a);
  }
  return stages;
}

DiamondTraffic diamond_steps_host(double courant2, std::size_t n, int radius, std::size_t steps,
                                  std::vector<double>& older, std::vector<double>& current) {
  check_radius_and_steps("diamond_steps_host", radius, steps);
  if (n < 3 || older.size() != n * n * n || current.size() != n * n * n)
    throw std::invalid_argument("cases::wave::diamond_steps_host: " + std::to_string(n) + "^3 nodes with levels of " +
                                std::to_string(older.size()) + " and " + std::to_string(current.size()) + " values");
  // The block: the grid with `steps` ghost columns on each side in x and y, filled periodically.
  const std::size_t g = steps, nx = n + 2 * g, ny = n + 2 * g;
  std::vector<double> even(nx * ny * n), odd(nx * ny * n);
  const auto block = [&](std::size_t x, std::size_t y, std::size_t z) { return x + nx * (y + ny * z); };
  const auto grid = [&](std::size_t x, std::size_t y, std::size_t z) { return x + n * (y + n * z); };
  for (std::size_t z = 0; z < n; ++z)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) {
        const std::size_t from = grid((x + n * g - g) % n, (y + n * g - g) % n, z);
        even[block(x, y, z)] = current[from];
        odd[block(x, y, z)] = older[from];
      }
  const std::vector<TowerBase> order = diamond_towers(nx, ny, radius, steps);
  const DiamondTraffic traffic = diamond_sweep_host(courant2, nx, ny, n, radius, steps, order, even, odd);
  const std::vector<double>& last = steps % 2 == 0 ? even : odd;
  const std::vector<double>& before = steps % 2 == 0 ? odd : even;
  for (std::size_t z = 0; z < n; ++z)
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        current[grid(x, y, z)] = last[block(x + g, y + g, z)];
        older[grid(x, y, z)] = before[block(x + g, y + g, z)];
      }
  return traffic;
}

namespace {

// `block` from one layout into the other: to_z (x fastest into z fastest) or back.
std::vector<double> relayout(std::span<const double> block, std::size_t nx, std::size_t ny, std::size_t nz, bool to_z) {
  if (block.size() != nx * ny * nz)
    throw std::invalid_argument("cases::wave: a block of " + std::to_string(nx) + " x " + std::to_string(ny) + " x " +
                                std::to_string(nz) + " nodes given " + std::to_string(block.size()) + " values");
  std::vector<double> out(block.size());
  for (std::size_t z = 0; z < nz; ++z)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) {
        const std::size_t xf = x + nx * (y + ny * z), zf = z + nz * (x + nx * y);
        if (to_z)
          out[zf] = block[xf];
        else
          out[xf] = block[zf];
      }
  return out;
}

}  // namespace

std::vector<double> z_fastest(std::span<const double> block, std::size_t nx, std::size_t ny, std::size_t nz) {
  return relayout(block, nx, ny, nz, true);
}

std::vector<double> x_fastest(std::span<const double> block, std::size_t nx, std::size_t ny, std::size_t nz) {
  return relayout(block, nx, ny, nz, false);
}

BlockComparison compare_blocks(std::span<const double> got_even, std::span<const double> got_odd,
                               std::span<const double> want_even, std::span<const double> want_odd, std::size_t nx,
                               std::size_t ny, std::size_t nz, std::size_t margin) {
  const std::size_t cells = nx * ny * nz;
  if (got_even.size() != cells || got_odd.size() != cells || want_even.size() != cells || want_odd.size() != cells)
    throw std::invalid_argument("cases::wave::compare_blocks: levels of another size than " + std::to_string(nx) + " x " +
                                std::to_string(ny) + " x " + std::to_string(nz));
  const auto same = [](double p, double q) { return (std::isnan(p) && std::isnan(q)) || std::memcmp(&p, &q, sizeof(double)) == 0; };
  BlockComparison c;
  for (std::size_t z = 0; z < nz; ++z)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) {
        const std::size_t i = x + nx * (y + ny * z);
        c.differing += !same(got_even[i], want_even[i]) || !same(got_odd[i], want_odd[i]) ? 1 : 0;
        const bool inside = x >= margin && y >= margin && x + margin < nx && y + margin < ny;
        c.inside_not_finite += inside && !(std::isfinite(got_even[i]) && std::isfinite(got_odd[i])) ? 1 : 0;
      }
  return c;
}

DiamondChunks diamond_chunks(std::size_t nz, std::size_t chunks, std::size_t max_lanes, std::size_t max_chunks) {
  const auto refuse = [&](const std::string& why) {
    return std::invalid_argument("cases::wave::diamond_chunks: a column of " + std::to_string(nz) + " nodes in " +
                                 (chunks == 0 ? std::string("blocks of at most ") + std::to_string(max_lanes) + " threads"
                                              : std::to_string(chunks) + " blocks") +
                                 " (at most " + std::to_string(max_chunks) + " a tower): " + why);
  };
  if (nz < 3) throw refuse("want at least 3 nodes");
  if (chunks == 0) {
    for (std::size_t c = 1; c <= max_chunks; ++c)
      if (nz % c == 0 && nz / c <= max_lanes) return {static_cast<int>(c), static_cast<int>(nz / c)};
    throw refuse("no number of blocks divides it into blocks that small");
  }
  if (chunks > max_chunks) throw refuse("too many blocks");
  if (nz % chunks != 0) throw refuse("the blocks must divide the column");
  if (nz / chunks > max_lanes) throw refuse("too many threads a block");
  return {static_cast<int>(chunks), static_cast<int>(nz / chunks)};
}

}  // namespace wave
}  // namespace cases
