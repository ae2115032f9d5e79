#include "diamond.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

DiamondTraffic diamond_sweep_host(double courant2, std::size_t nx, std::size_t ny, std::size_t nz, int radius,
                                  std::size_t steps, std::span<const TowerBase> order, std::span<double> even,
                                  std::span<double> odd) {
  check_radius_and_steps("diamond_sweep_host", radius, steps);
  const std::size_t columns = nx * ny;
  if (nx == 0 || ny == 0 || nz < 3 || even.size() != columns * nz || odd.size() != columns * nz)
    throw std::invalid_argument("cases::wave::diamond_sweep_host: a block of " + std::to_string(nx) + " x " +
                                std::to_string(ny) + " x " + std::to_string(nz) + " with levels of " +
                                std::to_string(even.size()) + " and " + std::to_string(odd.size()) + " values");
  const std::span<const double> c = coefficients(2);
  const double centre = 2 + 6 * c[0] * courant2, nan = std::numeric_limits<double>::quiet_NaN();
  const std::span<double> level[2] = {even, odd};
  std::vector<std::size_t> at(columns, 0);  // each column's level
  const auto inside = [&](long x, long y) { return x >= 0 && y >= 0 && x < static_cast<long>(nx) && y < static_cast<long>(ny); };
  const auto in_diamond = [&](long x, long y, long cx, long cy) { return l1(x - cx, y - cy) <= radius; };

  // Column (x, y) from level s to s + 1; NaN where the schedule does not hold. False where the
  // column or a neighbour inside the block was at another level.
  const auto update = [&](long x, long y, std::size_t s) {
    const std::size_t col = static_cast<std::size_t>(x) + nx * static_cast<std::size_t>(y);
    const std::span<double> cur = level[s % 2], next = level[(s + 1) % 2];
    const bool own = at[col] == s;
    // The neighbours' level-s values: a neighbour at level s or s + 1 holds it.
    const long nbr[4][2] = {{x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}};
    bool ready[4];
    for (int k = 0; k < 4; ++k) {
      const long u = nbr[k][0], v = nbr[k][1];
      const std::size_t l = inside(u, v) ? at[static_cast<std::size_t>(u) + nx * static_cast<std::size_t>(v)] : 0;
      ready[k] = inside(u, v) && (l == s || l == s + 1);
    }
    bool valid = own;
    for (int k = 0; k < 4; ++k) valid = valid && (ready[k] || !inside(nbr[k][0], nbr[k][1]));
    const auto value = [&](int k, std::size_t z) {
      return ready[k] ? cur[static_cast<std::size_t>(nbr[k][0]) + nx * (static_cast<std::size_t>(nbr[k][1]) + ny * z)] : nan;
    };
    for (std::size_t z = 0; z < nz; ++z) {
      const std::size_t i = col + columns * z;
      const std::size_t up = col + columns * ((z + 1) % nz), down = col + columns * ((z + nz - 1) % nz);
      // step_host's order: the pair sums of x, y, z, then the centre and the older level.
      double sum = 0;
      sum = std::fma(c[1], value(0, z) + value(1, z), sum);
      sum = std::fma(c[1], value(2, z) + value(3, z), sum);
      sum = std::fma(c[1], cur[up] + cur[down], sum);
      next[i] = own ? std::fma(courant2, sum, std::fma(centre, cur[i], -next[i])) : nan;
    }
    at[col] = s + 1;
    return valid;
  };

  DiamondTraffic traffic;
  const long r = radius;
  for (const TowerBase& b : order)
    for (std::size_t s = 0; s < steps; ++s) {
      const long cx = b.x + static_cast<long>(s), cy = b.y;
      for (long y = cy - r; y <= cy + r; ++y)
        for (long x = cx - r; x <= cx + r; ++x) {
          if (!in_diamond(x, y, cx, cy) || !inside(x, y)) continue;
          traffic.broken += update(x, y, s) ? 0 : 1;
          ++traffic.updates;
          // Traffic: a column enters the tower when the diamond before did not hold it, leaves
          // when the next one will not.
          if (s == 0 || !in_diamond(x, y, cx - 1, cy)) ++traffic.loads;
          if (s + 1 == steps || !in_diamond(x, y, cx + 1, cy)) ++traffic.stores;
        }
    }
  return traffic;
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

}  // namespace wave
}  // namespace cases
