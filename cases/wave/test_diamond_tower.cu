// Case "wave": the GPU kernel's work for a tower (diamond_tower.cuh) played on the host, every z
// node of a tower a "thread" stepping in lockstep between the barriers, stage after stage of
// diamond_stages, against the host model's sweep (diamond.hpp) bit for bit over the whole block
// (NaN, at the edges, against NaN). No GPU needed: the same functions the kernel runs.

#include <gtest/gtest.h>

// The emulation hands host lambdas to the kernel's __host__ __device__ functions and runs them on
// the host only; nvcc's note that their device side would call a host function is moot here.
#pragma nv_diag_suppress 20013, 20015

#include <cmath>
#include <cstring>
#include <algorithm>
#include <initializer_list>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "coefficients.hpp"
#include "diamond.hpp"
#include "diamond_ghosts.cuh"
#include "diamond_tower.cuh"

namespace wv = cases::wave;
namespace tw = cases::wave::tower;

namespace {

/// Block `chunk`'s plane of step s's parity among the emulated blocks' planes (two a block, `size`
/// doubles each), as publish_with_halos asks for it.
struct PlaneOf {
  double* planes;
  int size, s;
  __host__ __device__ double* operator()(int chunk) const {
    return planes + (static_cast<std::size_t>(chunk) * 2 + (s & 1)) * static_cast<std::size_t>(size);
  }
};

/// When the emulated tower reads the columns it does not keep (DiamondReads in diamond_kernel.hpp):
/// the vertices in the step or a step ahead, or everything a step reads `prefetch` steps ahead
/// into a ring per thread (as the kernel's shared memory holds it), read from the arrays at the
/// moment the kernel starts its copies.
enum class Reads { in_step, step_ahead, prefetched };

/// The towers of `stages` run as the kernel runs them, one tower at a time (towers of a stage are
/// independent), its threads a phase at a time: `ch.chunks` blocks of `ch.lanes` lanes stepping
/// together (diamond_chunks; block b holds nodes b lanes .. (b + 1) lanes - 1), each block's end
/// lanes publishing into the halo slots of the blocks beside it, as the kernel's tower_step does.
/// `reverse`: each stage's towers in reverse.
template <int R>
void emulate(const std::vector<std::vector<wv::TowerBase>>& stages, int steps, tw::Block b, std::vector<double>& even,
             std::vector<double>& odd, tw::Coefficients k, bool reverse, Reads reads, const wv::DiamondChunks& ch,
             int prefetch = 4) {
  using S = tw::Shape<R>;
  constexpr int kValues = tw::StepReads<R>::kValues;
  const int lanes = ch.lanes, chunks = ch.chunks, stride = lanes + 2;
  const bool ahead = reads == Reads::step_ahead, early = reads == Reads::prefetched;
  struct Thread {
    double a[S::kSlots], o[S::kSlots];
    double top = 0, bottom = 0, next_top = 0, next_bottom = 0;
    int chunk = 0, lane = 0, z = 0;
    std::vector<double> ring;  // prefetched: `prefetch` steps' reads
  };
  std::vector<Thread> threads(static_cast<std::size_t>(chunks) * lanes);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    threads[i].chunk = static_cast<int>(i) / lanes;
    threads[i].lane = static_cast<int>(i) % lanes;
    threads[i].z = static_cast<int>(i);
    threads[i].ring.assign(static_cast<std::size_t>(prefetch) * kValues, 0.0);
  }
  // Step t's reads into its slot of the thread's ring, read now.
  const auto request = [&](Thread& t, int step, int bx, int by) {
    if (step >= steps) return;
    double* const to = t.ring.data() + static_cast<std::size_t>(step % prefetch) * kValues;
    tw::step_reads<R>(step, steps, bx, by, b, even.data(), odd.data(), t.z,
                      [&](int i, const double* from) { to[i] = from ? *from : tw::nan_value(); });
  };
  const auto fetched = [&](const Thread& t, int step) { return t.ring.data() + static_cast<std::size_t>(step % prefetch) * kValues; };
  // Each block's two planes by step parity, stride slots a column.
  std::vector<double> planes(static_cast<std::size_t>(chunks) * 2 * S::kCells * stride);
  const auto plane = [&](int chunk, int s) { return PlaneOf{planes.data(), S::kCells * stride, s}(chunk); };
  for (const auto& stage : stages)
    for (std::size_t i = 0; i < stage.size(); ++i) {
      const wv::TowerBase base = stage[reverse ? stage.size() - 1 - i : i];
      const int bx = static_cast<int>(base.x), by = static_cast<int>(base.y);
      for (Thread& t : threads) {
        if (early)
          for (int step = 0; step < prefetch; ++step) request(t, step, bx, by);
        tw::start<R>(t.a, t.o, bx, by, b, even.data(), odd.data(), t.z);
        if (ahead) tw::vertices<R>(even.data(), b, bx, by, t.z, t.top, t.bottom);
      }
      for (int s = 0; s < steps; ++s) {
        double* const here = s & 1 ? odd.data() : even.data();
        double* const older = s & 1 ? even.data() : odd.data();
        for (Thread& t : threads) {
          if (ahead && s + 1 < steps) tw::vertices<R>(older, b, bx + s + 1, by, t.z, t.next_top, t.next_bottom);
          tw::publish_with_halos<R>(s & 1 ? t.o : t.a, t.chunk, chunks, t.lane, lanes, PlaneOf{planes.data(), S::kCells * stride, s});
        }
        // -- the cluster's barrier --
        for (Thread& t : threads) {
          if (reads == Reads::in_step) tw::vertices<R>(here, b, bx + s, by, t.z, t.top, t.bottom);
          if (early) {
            t.top = fetched(t, s)[0];
            t.bottom = fetched(t, s)[1];
          }
          tw::update<R>(s & 1 ? t.o : t.a, s & 1 ? t.a : t.o, plane(t.chunk, s), t.lane + 1, stride, t.top, t.bottom, k);
        }
        for (Thread& t : threads) {
          if (early) {
            const double* const in = fetched(t, s);
            tw::move<R>(s & 1 ? t.o : t.a, s & 1 ? t.a : t.o, s, steps, bx + s, by, b, here, older, t.z,
                        [&](int r, double& cur_value, double& nxt_value) {
                          cur_value = in[2 + 2 * r];
                          nxt_value = in[3 + 2 * r];
                        });
            request(t, s + prefetch, bx, by);  // into the slot just used
          } else {
            tw::move<R>(s & 1 ? t.o : t.a, s & 1 ? t.a : t.o, s, steps, bx + s, by, b, here, older, t.z);
          }
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
  std::uniform_int_distribution<int> side(1, 15), depth(3, 12), steps_of(1, 7);
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
    // The column in one block, and in a cluster of 2 .. 8 blocks: a random divisor of nz.
    const wv::DiamondChunks whole = wv::diamond_chunks(nz);
    std::vector<std::size_t> divisors;
    for (int d = 2; d <= std::min(nz, 8); ++d)
      if (nz % d == 0) divisors.push_back(static_cast<std::size_t>(d));
    const wv::DiamondChunks chunked = wv::diamond_chunks(
        nz, divisors.empty() ? 1 : divisors[std::uniform_int_distribution<std::size_t>(0, divisors.size() - 1)(rng)]);
    // The prefetch ring as deep as the kernel's (3 or 4 steps), and 1, 2 steps.
    const int depth = std::uniform_int_distribution<int>(1, 4)(rng);
    for (const auto& [reverse, reads, ch] : std::initializer_list<std::tuple<bool, Reads, wv::DiamondChunks>>{
             {false, Reads::in_step, whole},
             {true, Reads::in_step, whole},
             {false, Reads::step_ahead, whole},
             {true, Reads::step_ahead, chunked},
             {false, Reads::in_step, chunked},
             {false, Reads::prefetched, whole},
             {true, Reads::prefetched, chunked}}) {
      std::vector<double> ge = ze, go = zo;
      emulate<R>(stages, steps, b, ge, go, k, reverse, reads, ch, depth);
      ge = wv::x_fastest(ge, nx, ny, nz);
      go = wv::x_fastest(go, nx, ny, nz);
      const wv::BlockComparison cmp = wv::compare_blocks(ge, go, even, odd, nx, ny, nz, steps);
      EXPECT_EQ(cmp.differing, 0) << "radius " << R << ", " << nx << " x " << ny << " x " << nz << ", " << steps << " steps"
                        << (reverse ? ", stages reversed" : "")
                        << (reads == Reads::step_ahead ? ", vertices a step ahead" : "")
                        << (reads == Reads::prefetched ? ", prefetched " + std::to_string(depth) + " steps ahead" : "") << ", "
                        << ch.chunks << " blocks of " << ch.lanes << " lanes";
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
  emulate<R>({{base}}, steps, b, even, odd, k, false, Reads::in_step, wv::diamond_chunks(b.z));
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

// The DiamondTorre variant's ghost columns (diamond_ghosts.cuh): every column of the block outside
// the grid's n^2 is enumerated once, and stands for the grid column its periodic image names.
TEST(WaveDiamondTower, GhostColumnsCoverTheBlockOnceAndPointAtTheirImages) {
  for (long n : {3L, 4L, 7L, 10L})
    for (long t : {1L, 2L, 3L, 9L}) {
      const long side = n + 2 * t;
      std::vector<int> seen(static_cast<std::size_t>(side * side), 0);
      for (long g = 0; g < cases::wave::ghosts::count(n, t); ++g) {
        const auto c = cases::wave::ghosts::column(g, n, t);
        ASSERT_TRUE(c.x >= 0 && c.x < side && c.y >= 0 && c.y < side) << "n " << n << ", T " << t << ", g " << g;
        ++seen[static_cast<std::size_t>(c.x + side * c.y)];
        // The image is inside the grid, congruent mod n.
        EXPECT_TRUE(c.sx >= t && c.sx < n + t && c.sy >= t && c.sy < n + t);
        EXPECT_EQ(((c.sx - c.x) % n + n) % n, 0);
        EXPECT_EQ(((c.sy - c.y) % n + n) % n, 0);
      }
      for (long y = 0; y < side; ++y)
        for (long x = 0; x < side; ++x) {
          const bool inside = x >= t && x < n + t && y >= t && y < n + t;
          EXPECT_EQ(seen[static_cast<std::size_t>(x + side * y)], inside ? 0 : 1) << "n " << n << ", T " << t << ", (" << x << ", " << y << ")";
        }
    }
}
