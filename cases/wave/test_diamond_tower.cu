// Case "wave": the GPU kernel's work for a tower (diamond_tower.cuh) played on the host, every z
// node of a tower a "thread" stepping in lockstep between the barriers, stage after stage of
// diamond_stages, against the host model's sweep (diamond.hpp) bit for bit over the whole block
// (NaN, at the edges, against NaN). No GPU needed: the same functions the kernel runs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

#include "coefficients.hpp"
#include "diamond.hpp"
#include "diamond_tower.cuh"

namespace wv = cases::wave;
namespace tw = cases::wave::tower;

namespace {

/// The towers of `stages` run as the kernel runs them, one tower at a time (towers of a stage are
/// independent), its nz threads a phase at a time. `reverse`: each stage's towers in reverse.
/// `ahead`: the vertices' neighbours read a step ahead (DiamondVertices::step_ahead), as the
/// kernel's tower_step does.
template <int R>
void emulate(const std::vector<std::vector<wv::TowerBase>>& stages, int steps, tw::Block b, std::vector<double>& even,
             std::vector<double>& odd, tw::Coefficients k, bool reverse, bool ahead) {
  using S = tw::Shape<R>;
  const int nz = b.z;
  struct Thread {
    double a[S::kSlots], o[S::kSlots];
    double top = 0, bottom = 0, next_top = 0, next_bottom = 0;
  };
  std::vector<Thread> threads(static_cast<std::size_t>(nz));
  std::vector<double> planes(2 * static_cast<std::size_t>(S::kCells) * nz);
  for (const auto& stage : stages)
    for (std::size_t t = 0; t < stage.size(); ++t) {
      const wv::TowerBase base = stage[reverse ? stage.size() - 1 - t : t];
      const int bx = static_cast<int>(base.x), by = static_cast<int>(base.y);
      for (int z = 0; z < nz; ++z) {
        tw::start<R>(threads[z].a, threads[z].o, bx, by, b, even.data(), odd.data(), z);
        if (ahead) tw::vertices<R>(even.data(), b, bx, by, z, threads[z].top, threads[z].bottom);
      }
      for (int s = 0; s < steps; ++s) {
        double* const here = s & 1 ? odd.data() : even.data();
        double* const older = s & 1 ? even.data() : odd.data();
        double* const plane = planes.data() + (s & 1) * S::kCells * nz;
        for (int z = 0; z < nz; ++z) {
          Thread& t = threads[z];
          if (ahead && s + 1 < steps) tw::vertices<R>(older, b, bx + s + 1, by, z, t.next_top, t.next_bottom);
          tw::publish<R>(s & 1 ? t.o : t.a, plane, z, nz);
        }
        // -- barrier --
        for (int z = 0; z < nz; ++z) {
          Thread& t = threads[z];
          if (!ahead) tw::vertices<R>(here, b, bx + s, by, z, t.top, t.bottom);
          tw::update<R>(s & 1 ? t.o : t.a, s & 1 ? t.a : t.o, plane, z, nz, t.top, t.bottom, k);
        }
        for (int z = 0; z < nz; ++z) {
          Thread& t = threads[z];
          tw::move<R>(s & 1 ? t.o : t.a, s & 1 ? t.a : t.o, s, steps, bx + s, by, b, here, older, z);
          if (ahead) {
            t.top = t.next_top;
            t.bottom = t.next_bottom;
          }
        }
      }
    }
}

template <int R>
void check_radius(std::mt19937_64& rng, int trials) {
  std::uniform_int_distribution<int> side(1, 15), depth(3, 9), steps_of(1, 7);
  std::uniform_real_distribution<double> u(-1, 1), courant(0.05, 0.57);
  const auto c = wv::coefficients(2);
  for (int trial = 0; trial < trials; ++trial) {
    // T ghost columns a side around an inside that must come out finite.
    const int steps = steps_of(rng), nx = side(rng) + 2 * steps, ny = side(rng) + 2 * steps, nz = depth(rng);
    const double c2 = std::pow(courant(rng), 2);
    const tw::Coefficients k{c[1], c2, 2 + 6 * c[0] * c2};
    const tw::Block b{nx, ny, nz};
    const std::size_t cells = static_cast<std::size_t>(nx) * ny * nz;
    // The host model's arrays are x fastest, the kernel's z fastest.
    std::vector<double> even(cells), odd(cells);
    for (std::size_t i = 0; i < cells; ++i) {
      even[i] = u(rng);
      odd[i] = u(rng);
    }
    const std::vector<double> ze = wv::z_fastest(even, nx, ny, nz), zo = wv::z_fastest(odd, nx, ny, nz);
    ASSERT_EQ(wv::diamond_sweep_host(c2, nx, ny, nz, R, steps, wv::diamond_towers(nx, ny, R, steps), even, odd).broken, 0u);
    const auto stages = wv::diamond_stages(nx, ny, R, steps);
    for (const auto& [reverse, ahead] :
         std::initializer_list<std::pair<bool, bool>>{{false, false}, {true, false}, {false, true}, {true, true}}) {
      std::vector<double> ge = ze, go = zo;
      emulate<R>(stages, steps, b, ge, go, k, reverse, ahead);
      ge = wv::x_fastest(ge, nx, ny, nz);
      go = wv::x_fastest(go, nx, ny, nz);
      const wv::BlockComparison cmp = wv::compare_blocks(ge, go, even, odd, nx, ny, nz, steps);
      EXPECT_EQ(cmp.differing, 0) << "radius " << R << ", " << nx << " x " << ny << " x " << nz << ", " << steps << " steps"
                        << (reverse ? ", stages reversed" : "") << (ahead ? ", vertices a step ahead" : "");
      // The comparison is not of NaN against NaN alone: inside the T ghost columns all is finite.
      EXPECT_EQ(cmp.inside_not_finite, 0) << "radius " << R;
    }
  }
}

}  // namespace

TEST(WaveDiamondTower, TheKernelsWorkEqualsTheHostModel) {
  std::mt19937_64 rng(404);
  check_radius<1>(rng, 12);
  check_radius<2>(rng, 12);
  check_radius<3>(rng, 8);
  check_radius<4>(rng, 6);
}

// One tower alone on a quiet block: what it writes back is its prism's top, and nothing outside
// the columns it passed (its left slot's first column, another tower's, stays as it was).
TEST(WaveDiamondTower, ATowerWritesOnlyTheColumnsItPassed) {
  constexpr int R = 2;
  const tw::Block b{30, 20, 4};
  const auto c = wv::coefficients(2);
  const tw::Coefficients k{c[1], 0.09, 2 + 6 * c[0] * 0.09};
  const std::size_t cells = static_cast<std::size_t>(b.x) * b.y * b.z;
  std::vector<double> even(cells, 0.25), odd(cells, 0.25);
  const std::vector<double> even0 = even, odd0 = odd;
  const int steps = 5;
  const wv::TowerBase base = wv::diamond_tile(10, 10, R);
  emulate<R>({{base}}, steps, b, even, odd, k, false, false);
  for (int y = 0; y < b.y; ++y)
    for (int x = 0; x < b.x; ++x) {
      bool passed = false;
      for (int s = 0; s < steps; ++s)
        passed = passed || std::abs(x - static_cast<int>(base.x) - s) + std::abs(y - static_cast<int>(base.y)) <= R;
      for (int z = 0; z < b.z; ++z) {
        const bool changed = even[b.at(x, y, z)] != even0[b.at(x, y, z)] || odd[b.at(x, y, z)] != odd0[b.at(x, y, z)];
        if (!passed) EXPECT_FALSE(changed) << "(" << x << ", " << y << ")";
      }
    }
}
