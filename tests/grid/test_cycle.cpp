// Multi-step cycles (cush/cycle.hpp) run on host arrays: random grids, radii, cycle lengths,
// fused or not, bulk or overlapped, periodic or not, step counts that are not multiples of the
// length; after every program the blocks' owned cells equal plain one-step stepping of the
// global array bit for bit. Ghosts the exchange has not filled yet hold NaN (while an overlapped
// exchange is in flight, the ghosts it writes after exchange_start() returns are NaN again), so
// an update that reads one shows.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cush/cycle.hpp"
#include "cush/error.hpp"
#include "cush/grid.hpp"
#include "support/grids.hpp"
#include "support/host_exchange.hpp"

namespace {

using cush::Box;
using cush::CycleOptions;
using cush::CycleStep;
using cush::Decomposition;
using cush_test::for_each_cell;
using cush_test::Point;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// A cross stencil of radius r: the centre, then per axis the offsets -r..r but 0, in that order.
struct Stencil {
  std::size_t r = 1;
  std::size_t dims = 1;
  std::vector<double> w;  // centre, then per axis 2 r weights
  template <class Read>
  double apply(const Point& p, Read&& read) const {
    double sum = w[0] * read(p);
    std::size_t k = 1;
    for (std::size_t a = 0; a < dims; ++a)
      for (auto d = -static_cast<std::ptrdiff_t>(r); d <= static_cast<std::ptrdiff_t>(r); ++d) {
        if (d == 0) continue;
        Point q = p;
        q[a] += d;
        sum += w[k++] * read(q);
      }
    return sum;
  }
};

// The value a cell outside a non-periodic edge holds (global coordinates, not wrapped).
double edge_value(const Point& q) { return 0.25 + 0.001 * static_cast<double>(q[0] * 7 + q[1] * 13 + q[2] * 17); }

// Global coordinates wrapped around every periodic axis; false if outside a non-periodic edge
// (then `q` names the cell beyond the edge whose value edge_value gives: a corner ghost of a
// periodic axis and a wall stands for the wrapped cell's).
bool inside(const Decomposition& g, Point& q) {
  bool in = true;
  for (std::size_t a = 0; a < 3; ++a) {
    const auto n = static_cast<std::ptrdiff_t>(g.extent()[a]);
    if (q[a] >= 0 && q[a] < n) continue;
    if (g.periodic(a)) {
      q[a] = (q[a] % n + n) % n;
    } else {
      in = false;
    }
  }
  return in;
}

std::size_t global_index(const Decomposition& g, const Point& q) {
  return static_cast<std::size_t>(q[0]) + g.extent()[0] * (static_cast<std::size_t>(q[1]) + g.extent()[1] * static_cast<std::size_t>(q[2]));
}

std::vector<double> reference(const Decomposition& g, std::vector<double> u, const Stencil& st, std::size_t steps) {
  std::vector<double> next(u.size());
  const Box all{{0, 0, 0}, g.extent()};
  for (std::size_t s = 0; s < steps; ++s) {
    for_each_cell(all, [&](const Point& p) {
      next[global_index(g, p)] = st.apply(p, [&](Point q) { return inside(g, q) ? u[global_index(g, q)] : edge_value(q); });
    });
    std::swap(u, next);
  }
  return u;
}

// One block's two buffers over its owned cells and ghost layers (local coordinates).
struct Block {
  Box whole;
  std::vector<double> v[2];
  [[nodiscard]] std::size_t at(const Point& p) const {
    const auto c = [&](std::size_t a) { return static_cast<std::size_t>(p[a] - whole.lo[a]); };
    return c(0) + whole.size[0] * (c(1) + whole.size[1] * c(2));
  }
};

class Simulation {
 public:
  Simulation(const Decomposition& g, const std::vector<double>& u0, const Stencil& st) : g_(g), st_(st) {
    for (std::size_t b = 0; b < g.size(); ++b) {
      Block blk;
      const Box o = g.owned(b);
      for (std::size_t a = 0; a < 3; ++a) {
        blk.whole.lo[a] = -static_cast<std::ptrdiff_t>(g.halo(a));
        blk.whole.size[a] = o.size[a] + 2 * g.halo(a);
      }
      for (auto& v : blk.v) v.assign(blk.whole.volume(), nan);
      for_each_cell(blk.whole, [&](const Point& p) {
        Point q = global(b, p);
        const bool in = inside(g, q);
        const bool owned = Box{{0, 0, 0}, o.size}.contains(p);
        if (!in) blk.v[0][blk.at(p)] = blk.v[1][blk.at(p)] = edge_value(q);  // the user's, constant
        if (owned) blk.v[0][blk.at(p)] = u0[global_index(g, q)];
      });
      blocks_.push_back(std::move(blk));
    }
  }

  void run(const std::vector<CycleStep>& program) {
    for (const CycleStep& s : program) {
      switch (s.kind) {
        case CycleStep::Kind::exchange: fill(false); break;
        case CycleStep::Kind::exchange_start: fill(true); break;
        case CycleStep::Kind::exchange_finish: fill(false); break;
        case CycleStep::Kind::update: update(s); break;
        case CycleStep::Kind::swap: in_ = 1 - in_; break;
      }
    }
  }

  // The input field's owned cells, in global order.
  [[nodiscard]] std::vector<double> owned() const {
    std::vector<double> u(g_.extent()[0] * g_.extent()[1] * g_.extent()[2], nan);
    for (std::size_t b = 0; b < g_.size(); ++b)
      for_each_cell(Box{{0, 0, 0}, g_.owned(b).size}, [&](const Point& p) {
        Point q = global(b, p);
        u[global_index(g_, q)] = blocks_[b].v[in_][blocks_[b].at(p)];
      });
    return u;
  }

 private:
  [[nodiscard]] Point global(std::size_t b, const Point& p) const {
    const Box o = g_.owned(b);
    return {o.lo[0] + p[0], o.lo[1] + p[1], o.lo[2] + p[2]};
  }

  // Every ghost of the input that stands for a cell of the grid from its owner; `started`: the
  // exchange is in flight, so the ghosts it fills after exchange_start() returns (any axis
  // outside the owned range not exchanged in place) are NaN.
  void fill(bool started) {
    const std::vector<double> u = owned();
    for (std::size_t b = 0; b < g_.size(); ++b) {
      Block& blk = blocks_[b];
      const Box o = g_.owned(b);
      for_each_cell(blk.whole, [&](const Point& p) {
        if (Box{{0, 0, 0}, o.size}.contains(p)) return;
        Point q = global(b, p);
        if (!inside(g_, q)) return;
        bool late = false;
        for (std::size_t a = 0; a < 3; ++a)
          if ((p[a] < 0 || p[a] >= static_cast<std::ptrdiff_t>(o.size[a])) && !g_.exchanged_in_place(a)) late = true;
        blk.v[in_][blk.at(p)] = started && late ? nan : u[global_index(g_, q)];
      });
    }
  }

  // `substeps` steps on each box from the input into the output; several: intermediate levels on
  // the box grown by (substeps - 1 - s) r, within the block's grown box (as a fused kernel).
  void update(const CycleStep& s) {
    ASSERT_EQ(s.boxes.size(), g_.size());
    for (std::size_t b = 0; b < g_.size(); ++b) {
      Block& blk = blocks_[b];
      for (const Box& box : s.boxes[b]) {
        ASSERT_FALSE(box.empty());
        std::vector<double> cur = blk.v[in_];
        for (std::size_t k = 0; k < s.substeps; ++k) {
          // An intermediate level on the box grown by `grow`, never past a non-periodic edge (the
          // fused boxes lie within the owned box); the last level on the box itself.
          const std::size_t grow = (s.substeps - 1 - k) * st_.r;
          const Box limit = grow == 0 ? box : g_.grown(b, grow);
          Box region;
          for (std::size_t a = 0; a < 3; ++a) {
            const std::ptrdiff_t lo = std::max(box.lo[a] - static_cast<std::ptrdiff_t>(grow), limit.lo[a]);
            const std::ptrdiff_t hi = std::min(box.lo[a] + static_cast<std::ptrdiff_t>(box.size[a] + grow),
                                               limit.lo[a] + static_cast<std::ptrdiff_t>(limit.size[a]));
            region.lo[a] = lo;
            region.size[a] = static_cast<std::size_t>(std::max<std::ptrdiff_t>(hi - lo, 0));
          }
          std::vector<double> next = cur;
          for_each_cell(region, [&](const Point& p) {
            next[blk.at(p)] = st_.apply(p, [&](const Point& q) {
              EXPECT_TRUE(blk.whole.contains(q)) << "block " << b << " reads outside its buffer";
              return blk.whole.contains(q) ? cur[blk.at(q)] : nan;
            });
          });
          cur = std::move(next);
        }
        for_each_cell(box, [&](const Point& p) { blk.v[1 - in_][blk.at(p)] = cur[blk.at(p)]; });
      }
    }
  }

  const Decomposition& g_;
  const Stencil& st_;
  std::vector<Block> blocks_;
  std::size_t in_ = 0;
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST(Cycle, ProgramsOnHostArraysEqualOneStepStepping) {
  std::mt19937 rng(31);
  std::size_t programs = 0;
  for (int trial = 0; trial < 250; ++trial) {
    const Decomposition g = cush_test::random_grid(rng);
    Stencil st;
    st.dims = g.dims();
    st.r = std::uniform_int_distribution<std::size_t>(1, g.depth())(rng);
    st.w.push_back(0.5);
    for (std::size_t k = 0; k < 2 * st.r * st.dims; ++k) st.w.push_back(std::uniform_real_distribution<double>(-0.1, 0.1)(rng));
    std::vector<double> u0(g.extent()[0] * g.extent()[1] * g.extent()[2]);
    for (double& x : u0) x = std::uniform_real_distribution<double>(-1, 1)(rng);
    const std::size_t most = g.depth() / st.r;
    CycleOptions o;
    o.radius = st.r;
    o.length = std::uniform_int_distribution<std::size_t>(0, most)(rng);  // 0: the most
    o.fused = (rng() & 1U) != 0;
    o.overlap = (o.fused || o.length == 1 || (o.length == 0 && most == 1)) && (rng() & 1U) != 0;
    const std::size_t steps = std::uniform_int_distribution<std::size_t>(0, 7)(rng);
    SCOPED_TRACE(cush_test::describe(g) + ", radius " + std::to_string(st.r) + ", length " + std::to_string(o.length) +
                 (o.fused ? ", fused" : "") + (o.overlap ? ", overlapped" : "") + ", " + std::to_string(steps) + " steps");
    const std::vector<CycleStep> program = cush::cycle_program(g, steps, o);
    const std::size_t length = o.length == 0 ? most : o.length;
    const auto exchanges = std::count_if(program.begin(), program.end(), [](const CycleStep& s) {
      return s.kind == CycleStep::Kind::exchange || s.kind == CycleStep::Kind::exchange_start;
    });
    EXPECT_EQ(static_cast<std::size_t>(exchanges), (steps + length - 1) / length);
    Simulation sim(g, u0, st);
    sim.run(program);
    ASSERT_TRUE(same_bits(sim.owned(), reference(g, u0, st, steps)));
    ++programs;
  }
  EXPECT_EQ(programs, 250U);
}

TEST(Cycle, BadOptionsAreRejected) {
  cush::GridOptions go;
  go.halo = 4;
  const Decomposition g(cush::Extent3{32, 1, 1}, 1, 2, go);
  const auto expect_invalid = [&](const CycleOptions& o, const char* says) {
    try {
      (void)cush::cycle_program(g, 5, o);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const cush::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  expect_invalid({0, 0, false, false}, "at least 1");
  expect_invalid({5, 0, false, false}, "more than the grid's 4 ghost layers");
  expect_invalid({2, 3, false, false}, "need 6 ghost layers");
  expect_invalid({1, 2, false, true}, "must be fused");
  EXPECT_EQ(cush::cycle_program(g, 0, {}).size(), 0U);
  // 5 steps of radius 1, 4 a cycle, unfused: exchange, 4 updates and swaps, exchange, 1 update and swap.
  const std::vector<CycleStep> p = cush::cycle_program(g, 5, {1, 4, false, false});
  ASSERT_EQ(p.size(), 12U);
  EXPECT_EQ(p[1].boxes[0].front(), g.grown(0, 3));
  EXPECT_EQ(p[7].boxes[1].front(), g.grown(1, 0));
  EXPECT_EQ(p[10].kind, CycleStep::Kind::update);
}
