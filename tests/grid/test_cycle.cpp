// Multi-step cycles (cush/cycle.hpp): cush::advance on a host model of a Field (HostField), with
// two fields and in place (a leapfrog over two components), over
// random grids, radii, cycle lengths, fused or not, bulk or overlapped, periodic or not, step
// counts that are not multiples of the length; after every run the owned cells equal plain
// one-step stepping of the global array bit for bit. Ghosts the exchange has not filled yet hold
// NaN (while an overlapped exchange is in flight, the ghosts it writes after exchange_start()
// returns are NaN again), so an update that reads one shows.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cush/cycle.hpp"
#include "cush/error.hpp"
#include "cush/field.hpp"
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

// A cross stencil on `g`'s axes of a random radius up to its depth, weight `centre` at the centre
// and small random weights elsewhere.
Stencil random_stencil(const Decomposition& g, double centre, std::mt19937& rng) {
  Stencil st;
  st.dims = g.dims();
  st.r = std::uniform_int_distribution<std::size_t>(1, g.depth())(rng);
  st.w.push_back(centre);
  for (std::size_t k = 0; k < 2 * st.r * st.dims; ++k) st.w.push_back(std::uniform_real_distribution<double>(-0.1, 0.1)(rng));
  return st;
}

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

// A host model of a Field for advance(): every block's buffer over its owned cells and ghost
// layers (local coordinates, x fastest). Ghosts beyond a non-periodic edge hold edge_value, the
// others NaN until an exchange fills them; while an exchange is in flight (exchange_start to
// exchange_finish) the ghosts it fills after exchange_start() returns (those outside the owned
// range along an axis not exchanged in place) are NaN again.
struct HostBlock {
  std::size_t position = 0;
  Box whole;
  double* data = nullptr;  // component c at data + c * whole.volume()
  [[nodiscard]] std::size_t pos() const { return position; }
  [[nodiscard]] std::size_t at(const Point& p) const {
    const auto c = [&](std::size_t a) { return static_cast<std::size_t>(p[a] - whole.lo[a]); };
    return c(0) + whole.size[0] * (c(1) + whole.size[1] * c(2));
  }
};

class HostField {
 public:
  // `u0`: `components` global arrays one after another (null: owned cells NaN too).
  HostField(const Decomposition& g, const std::vector<double>* u0, std::size_t components = 1)
      : g_(g), components_(components) {
    const std::size_t cells = g.extent()[0] * g.extent()[1] * g.extent()[2];
    for (std::size_t b = 0; b < g.size(); ++b) {
      const Box o = g.owned(b);
      Box whole;
      for (std::size_t a = 0; a < 3; ++a) {
        whole.lo[a] = -static_cast<std::ptrdiff_t>(g.halo(a));
        whole.size[a] = o.size[a] + 2 * g.halo(a);
      }
      wholes_.push_back(whole);
      std::vector<double> v(whole.volume() * components, nan);
      const HostBlock view{b, whole, nullptr};
      for (std::size_t c = 0; c < components; ++c)
        for_each_cell(whole, [&](const Point& p) {
          Point q = global(b, p);
          double& cell = v[c * whole.volume() + view.at(p)];
          if (!inside(g, q)) cell = edge_value(q);  // the user's, constant
          else if (u0 != nullptr && Box{{0, 0, 0}, o.size}.contains(p)) cell = (*u0)[c * cells + global_index(g, q)];
        });
      buffers_.push_back(std::move(v));
    }
  }
  [[nodiscard]] const Decomposition& grid() const { return g_; }
  [[nodiscard]] HostBlock block(std::size_t pos) const {
    return {pos, wholes_[pos], const_cast<double*>(buffers_[pos].data())};
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t pos = 0; pos < g_.size(); ++pos) f(block(pos));
  }
  void exchange() {
    EXPECT_FALSE(in_flight_) << "exchange() while an exchange is in flight";
    fill(false);
  }
  void exchange_start() {
    EXPECT_FALSE(in_flight_) << "exchange_start() while an exchange is in flight";
    in_flight_ = true;
    fill(true);
  }
  void exchange_finish() {
    EXPECT_TRUE(in_flight_) << "exchange_finish() without exchange_start()";
    in_flight_ = false;
    fill(false);
  }
  // Component c's owned cells, in global order.
  [[nodiscard]] std::vector<double> owned(std::size_t c = 0) const {
    std::vector<double> u(g_.extent()[0] * g_.extent()[1] * g_.extent()[2], nan);
    for (std::size_t b = 0; b < g_.size(); ++b)
      for_each_cell(Box{{0, 0, 0}, g_.owned(b).size}, [&](const Point& p) {
        u[global_index(g_, global(b, p))] = buffers_[b][c * wholes_[b].volume() + block(b).at(p)];
      });
    return u;
  }

 private:
  [[nodiscard]] Point global(std::size_t b, const Point& p) const {
    const Box o = g_.owned(b);
    return {o.lo[0] + p[0], o.lo[1] + p[1], o.lo[2] + p[2]};
  }
  void fill(bool started) {
    for (std::size_t c = 0; c < components_; ++c) {
      const std::vector<double> u = owned(c);
      for (std::size_t b = 0; b < g_.size(); ++b) {
        const Box o = g_.owned(b);
        const HostBlock view = block(b);
        for_each_cell(view.whole, [&](const Point& p) {
          if (Box{{0, 0, 0}, o.size}.contains(p)) return;
          Point q = global(b, p);
          if (!inside(g_, q)) return;
          bool late = false;
          for (std::size_t a = 0; a < 3; ++a)
            if ((p[a] < 0 || p[a] >= static_cast<std::ptrdiff_t>(o.size[a])) && !g_.exchanged_in_place(a)) late = true;
          buffers_[b][c * view.whole.volume() + view.at(p)] = started && late ? nan : u[global_index(g_, q)];
        });
      }
    }
  }
  const Decomposition& g_;
  std::size_t components_ = 1;
  std::vector<Box> wholes_;
  std::vector<std::vector<double>> buffers_;
  bool in_flight_ = false;
};

// The user's update, as a fused kernel would do it: `substeps` steps on `box` of `out` from `in`,
// the intermediate levels on the box grown by (substeps - 1 - k) r within the block's grown box.
struct HostUpdate {
  const Decomposition& g;
  const Stencil& st;
  std::size_t calls = 0;
  void operator()(const HostBlock& in, const HostBlock& out, const Box& box, std::size_t substeps) {
    ++calls;
    ASSERT_FALSE(box.empty());
    std::vector<double> cur(in.data, in.data + in.whole.volume());
    for (std::size_t k = 0; k < substeps; ++k) {
      // An intermediate level on the box grown by `grow`, never past a non-periodic edge (the
      // fused boxes lie within the owned box); the last level on the box itself.
      const std::size_t grow = (substeps - 1 - k) * st.r;
      const Box limit = grow == 0 ? box : g.grown(in.pos(), grow);
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
        next[in.at(p)] = st.apply(p, [&](const Point& q) {
          EXPECT_TRUE(in.whole.contains(q)) << "block " << in.pos() << " reads outside its buffer";
          return in.whole.contains(q) ? cur[in.at(q)] : nan;
        });
      });
      cur = std::move(next);
    }
    for_each_cell(box, [&](const Point& p) { out.data[out.at(p)] = cur[in.at(p)]; });
  }
};

// A leapfrog in place: two levels as components; step t writes level t + 1 over the older level,
// component t % 2: next = stencil(current) - older.
struct Leapfrog {
  const Stencil& st;
  std::size_t calls = 0;
  void operator()(const HostBlock& b, const Box& box, std::size_t step) {
    ++calls;
    double* older = b.data + (step % 2) * b.whole.volume();
    const double* current = b.data + ((step + 1) % 2) * b.whole.volume();
    for_each_cell(box, [&](const Point& p) {
      older[b.at(p)] = st.apply(p, [&](const Point& q) {
        EXPECT_TRUE(b.whole.contains(q)) << "block " << b.pos() << " reads outside its buffer";
        return b.whole.contains(q) ? current[b.at(q)] : nan;
      }) - older[b.at(p)];
    });
  }
};

// The same on the global array: returns {older, current} after `steps` steps.
std::pair<std::vector<double>, std::vector<double>> leapfrog_reference(const Decomposition& g, std::vector<double> prev,
                                                                       std::vector<double> cur, const Stencil& st,
                                                                       std::size_t steps) {
  const Box all{{0, 0, 0}, g.extent()};
  std::vector<double> next(cur.size());
  for (std::size_t s = 0; s < steps; ++s) {
    for_each_cell(all, [&](const Point& p) {
      next[global_index(g, p)] =
          st.apply(p, [&](Point q) { return inside(g, q) ? cur[global_index(g, q)] : edge_value(q); }) - prev[global_index(g, p)];
    });
    prev = cur;
    cur = next;
  }
  return {prev, cur};
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST(Cycle, AdvanceOnHostArraysEqualsOneStepStepping) {
  std::mt19937 rng(31);
  std::size_t programs = 0;
  for (int trial = 0; trial < 250; ++trial) {
    const Decomposition g = cush_test::random_grid(rng);
    const Stencil st = random_stencil(g, 0.5, rng);
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
    HostField a(g, &u0), b(g, nullptr);
    HostUpdate update{g, st};
    const HostField& result = cush::advance(a, b, steps, o, update);
    // A swap per step unfused, per cycle fused (or overlapped): the result is in b after an odd number.
    const std::size_t swaps = o.fused || o.overlap ? (steps + length - 1) / length : steps;
    EXPECT_EQ(&result, swaps % 2 == 0 ? &a : &b);
    ASSERT_TRUE(same_bits(result.owned(), reference(g, u0, st, steps)));
    ++programs;
  }
  EXPECT_EQ(programs, 250U);
}

// In place: a leapfrog over two components, unfused cycles of every length the halo allows.
TEST(Cycle, AdvanceInPlaceEqualsOneStepLeapfrog) {
  std::mt19937 rng(47);
  for (int trial = 0; trial < 200; ++trial) {
    const Decomposition g = cush_test::random_grid(rng);
    const Stencil st = random_stencil(g, 1.5, rng);
    const std::size_t cells = g.extent()[0] * g.extent()[1] * g.extent()[2];
    std::vector<double> levels(2 * cells);  // u^-1, then u^0
    for (double& x : levels) x = std::uniform_real_distribution<double>(-1, 1)(rng);
    CycleOptions o;
    o.radius = st.r;
    o.length = std::uniform_int_distribution<std::size_t>(0, g.depth() / st.r)(rng);
    const std::size_t steps = std::uniform_int_distribution<std::size_t>(0, 7)(rng);
    SCOPED_TRACE(cush_test::describe(g) + ", radius " + std::to_string(st.r) + ", length " + std::to_string(o.length) +
                 ", " + std::to_string(steps) + " steps");
    HostField u(g, &levels, 2);
    Leapfrog update{st};
    cush::advance(u, steps, o, update);
    const auto [older, current] = leapfrog_reference(g, std::vector<double>(levels.begin(), levels.begin() + static_cast<std::ptrdiff_t>(cells)),
                                                     std::vector<double>(levels.begin() + static_cast<std::ptrdiff_t>(cells), levels.end()), st, steps);
    ASSERT_TRUE(same_bits(u.owned((steps + 1) % 2), current)) << "the newest level";
    ASSERT_TRUE(same_bits(u.owned(steps % 2), older)) << "the level before it";
  }
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
  HostField f(g, nullptr);
  EXPECT_THROW((void)cush::advance(f, f, 1, {}, [](const HostBlock&, const HostBlock&, const Box&, std::size_t) {}),
               cush::InvalidArgument);
  const auto in_place = [](const HostBlock&, const Box&, std::size_t) {};
  EXPECT_THROW(cush::advance(f, 1, {1, 1, true, false}, in_place), cush::InvalidArgument);
  EXPECT_THROW(cush::advance(f, 1, {1, 1, false, true}, in_place), cush::InvalidArgument);
}
