#pragma once
// Case "wave": what the skewed tiling's two host models (skewed.cpp, whole tiles; skewed_pipeline.cpp,
// plane by plane) share: the levels -1 .. T of the grid with its periodic ghosts T r deep on every
// side, which ticket wrote each cell, and one checked leapfrog update of a cell (step_host's
// arithmetic).

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "coefficients.hpp"
#include "skewed.hpp"

namespace cases {
namespace wave {

class SkewedLevels {
 public:
  static constexpr long kMemory = -2, kNone = -1;  // a cell's writer: the input levels, or no one yet

  /// Levels -1 and 0 from `older` and `current` (n^3, x fastest), ghosts included; the others NaN.
  SkewedLevels(const SkewedTiling& t, double courant2, const std::vector<double>& older,
               const std::vector<double>& current)
      : c_(coefficients(t.order)), r_(static_cast<long>(c_.size() - 1)), n_(static_cast<long>(t.n)),
        g_(static_cast<long>(t.steps) * r_), side_(n_ + 2 * g_), steps_(static_cast<long>(t.steps)),
        courant2_(courant2), centre_(2 + 6 * c_[0] * courant2) {
    const auto cells = static_cast<std::size_t>(side_ * side_ * side_);
    for (long l = -1; l <= steps_; ++l) {
      values_.emplace_back(cells, std::numeric_limits<double>::quiet_NaN());
      writer_.emplace_back(cells, l <= 0 ? kMemory : kNone);
    }
    for (long z = -g_; z < n_ + g_; ++z)
      for (long y = -g_; y < n_ + g_; ++y)
        for (long x = -g_; x < n_ + g_; ++x) {
          const std::size_t i = wrap(x) + static_cast<std::size_t>(n_) * (wrap(y) + static_cast<std::size_t>(n_) * wrap(z));
          value(-1, x, y, z) = older[i];
          value(0, x, y, z) = current[i];
        }
  }

  /// Whether plane z of level l is one the level must have: [-(T - l) r, n + (T - l) r).
  [[nodiscard]] bool needed(long l, long z) const { return z >= -(steps_ - l) * r_ && z < n_ + (steps_ - l) * r_; }

  /// Cell (x, y, z) of level l computed for ticket q (tile tickets[q]), each read checked: a cell
  /// outside the box, not written yet, or written by a tile q may not read (skewed_reads_from)
  /// breaks it, and so does a cell written before. `on_read(who, level, x, y, z)` sees each read of
  /// another tile's cell. Returns false, and writes NaN, where the update broke.
  template <class OnRead>
  bool update(long l, long x, long y, long z, long q, std::span<const SkewedTile> tickets, OnRead&& on_read) {
    bool ok = inside(x, y, z) && writer(l, x, y, z) == kNone;
    const auto read = [&](long level, long cx, long cy, long cz) {
      if (!inside(cx, cy, cz)) return void(ok = false);
      const long who = writer(level, cx, cy, cz);
      if (who == kMemory || who == q) return;
      if (who == kNone || !skewed_reads_from(tickets[static_cast<std::size_t>(q)], tickets[static_cast<std::size_t>(who)]))
        return void(ok = false);
      on_read(who, level, cx, cy, cz);
    };
    read(l - 2, x, y, z);
    read(l - 1, x, y, z);
    for (long k = 1; k <= r_; ++k)
      for (const auto& [dx, dy, dz] : {std::array<long, 3>{k, 0, 0}, std::array<long, 3>{-k, 0, 0},
                                       std::array<long, 3>{0, k, 0}, std::array<long, 3>{0, -k, 0},
                                       std::array<long, 3>{0, 0, k}, std::array<long, 3>{0, 0, -k}})
        read(l - 1, x + dx, y + dy, z + dz);
    if (!inside(x, y, z)) return false;
    writer(l, x, y, z) = q;
    if (!ok) {
      value(l, x, y, z) = std::numeric_limits<double>::quiet_NaN();
      return false;
    }
    double sum = 0;  // step_host's chain of FMAs
    for (long k = 1; k <= r_; ++k) {
      const double ck = c_[static_cast<std::size_t>(k)];
      sum = std::fma(ck, value(l - 1, x + k, y, z) + value(l - 1, x - k, y, z), sum);
      sum = std::fma(ck, value(l - 1, x, y + k, z) + value(l - 1, x, y - k, z), sum);
      sum = std::fma(ck, value(l - 1, x, y, z + k) + value(l - 1, x, y, z - k), sum);
    }
    value(l, x, y, z) = std::fma(courant2_, sum, std::fma(centre_, value(l - 1, x, y, z), -value(l - 2, x, y, z)));
    return true;
  }

  /// The owned cells of levels T - 1 and T into `older` and `current` (NaN where never computed).
  void store(std::vector<double>& older, std::vector<double>& current) {
    for (long z = 0; z < n_; ++z)
      for (long y = 0; y < n_; ++y)
        for (long x = 0; x < n_; ++x) {
          const auto i = static_cast<std::size_t>(x + n_ * (y + n_ * z));
          older[i] = value(steps_ - 1, x, y, z);
          current[i] = value(steps_, x, y, z);
        }
  }

  /// A cell's place in one level, for sets of cells.
  [[nodiscard]] std::size_t cell(long x, long y, long z) const {
    return static_cast<std::size_t>(((z + g_) * side_ + (y + g_)) * side_ + (x + g_));
  }

 private:
  [[nodiscard]] bool inside(long x, long y, long z) const {
    return x >= -g_ && x < n_ + g_ && y >= -g_ && y < n_ + g_ && z >= -g_ && z < n_ + g_;
  }
  [[nodiscard]] std::size_t wrap(long i) const { return static_cast<std::size_t>(((i % n_) + n_) % n_); }
  double& value(long level, long x, long y, long z) { return values_[static_cast<std::size_t>(level + 1)][cell(x, y, z)]; }
  long& writer(long level, long x, long y, long z) { return writer_[static_cast<std::size_t>(level + 1)][cell(x, y, z)]; }

  std::span<const double> c_;
  long r_, n_, g_, side_, steps_;
  double courant2_, centre_;
  std::vector<std::vector<double>> values_;
  std::vector<std::vector<long>> writer_;
};

}  // namespace wave
}  // namespace cases
