// Fields of several components: which components an exchange moves (cush::HaloComponents),
// grids with ghost layers along some axes only (GridOptions::ghosts), and the exchange program
// of a selection run on host arrays: every selected ghost filled from its owner, every ghost
// written back landing on the cell it stands for, nothing else touched.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "cush/error.hpp"
#include "cush/grid.hpp"
#include "cush/halo_components.hpp"
#include "grid/exchange_program.hpp"
#include "support/grids.hpp"

namespace {

using cush::Box;
using cush::Decomposition;
using cush::Extent3;
using cush::GridOptions;
using cush::HaloComponents;
using cush::InvalidArgument;
using Point = std::array<std::ptrdiff_t, 3>;

TEST(HaloComponents, ListsAreSortedOnceEachPerAxisAndDirection) {
  HaloComponents h;
  h.fill(2, +1, {11, 5, 9, 5}).fill(2, -1, std::vector<int>{6, 10}).write_back(0, -1, {3});
  EXPECT_EQ(h.filled(2, +1), (std::vector<std::size_t>{5, 9, 11}));
  EXPECT_EQ(h.filled(2, -1), (std::vector<std::size_t>{6, 10}));
  EXPECT_TRUE(h.filled(0, +1).empty());
  EXPECT_EQ(h.written_back(0, -1), (std::vector<std::size_t>{3}));
  EXPECT_TRUE(h.written_back(2, +1).empty());
  EXPECT_NE(h, HaloComponents{});
  EXPECT_EQ(HaloComponents::all(3).filled(1, -1), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(HaloComponents, BadAxisDirectionOrComponentIsRefused) {
  HaloComponents h;
  EXPECT_THROW(h.fill(3, +1, {0}), InvalidArgument);
  EXPECT_THROW(h.fill(0, 0, {0}), InvalidArgument);
  EXPECT_THROW(h.write_back(1, 2, {0}), InvalidArgument);
  EXPECT_THROW(h.fill(0, +1, std::vector<int>{-1}), InvalidArgument);
}

GridOptions z_only(std::size_t halo, std::size_t blocks_z = 0) {
  GridOptions o;
  o.periodic = {false, false, true};
  o.ghosts = {false, false, true};
  o.halo = halo;
  if (blocks_z > 0) o.blocks = {1, 1, blocks_z};
  return o;
}

TEST(GhostAxes, OnlyTheChosenAxesKeepGhostsAndOnlyTheyAreSplit) {
  const Decomposition g({19, 23, 24}, 3, 4, z_only(1));
  EXPECT_EQ(g.blocks(), (Extent3{1, 1, 4}));  // a cube would rather split x and y
  EXPECT_EQ(g.halo(0), 0U);
  EXPECT_EQ(g.halo(1), 0U);
  EXPECT_EQ(g.halo(2), 1U);
  EXPECT_EQ(g.depth(), 1U);
  EXPECT_EQ(g.allocated(0), (Extent3{19, 23, 8}));
  EXPECT_EQ(g.lead(), 0U);
  EXPECT_FALSE(g.neighbor(0, 0, +1));
  EXPECT_EQ(g.neighbor(0, 2, -1), std::optional<std::size_t>{3});
  EXPECT_EQ(g.interior(1, 1), (Box{{0, 0, 1}, {19, 23, 4}}));
  GridOptions aligned = z_only(1);
  aligned.row_align = 32;
  EXPECT_EQ(Decomposition({19, 23, 24}, 3, 2, aligned).allocated(1), (Extent3{32, 23, 14}));
  GridOptions split_x = z_only(1);
  split_x.blocks = {2, 1, 1};
  EXPECT_THROW(Decomposition({19, 23, 24}, 3, 2, split_x), InvalidArgument);
  // Periodic along x without ghosts: never exchanged, no neighbour.
  GridOptions px = z_only(1);
  px.periodic = {true, false, true};
  EXPECT_FALSE(Decomposition({19, 23, 24}, 3, 2, px).neighbor(0, 0, -1));
  // Too many blocks for the one splittable axis.
  EXPECT_THROW(Decomposition({19, 23, 3}, 3, 4, z_only(1)), InvalidArgument);
}

TEST(HaloComponents, TheFieldRefusesSelectionsThatDoNotSuitIt) {
  using cush::detail::check_components;
  const Decomposition z({8, 8, 12}, 3, 3, z_only(1));
  EXPECT_NO_THROW(check_components(z, HaloComponents().fill(2, +1, {0, 4}).write_back(2, -1, {1, 2}), 5));
  EXPECT_THROW(check_components(z, HaloComponents().fill(2, +1, {5}), 5), InvalidArgument);
  EXPECT_THROW(check_components(z, HaloComponents().write_back(2, +1, {7}), 5), InvalidArgument);
  EXPECT_THROW(check_components(z, HaloComponents().fill(2, +1, {1}).write_back(2, +1, {1}), 5), InvalidArgument);
  EXPECT_THROW(check_components(z, HaloComponents().fill(2, -1, {1}).write_back(2, +1, {1}), 5), InvalidArgument);
  // Both ways into blocks of 1 layer: a cell would get two values.
  EXPECT_NO_THROW(check_components(z, HaloComponents().write_back(2, +1, {1}).write_back(2, -1, {1}), 2));
  const Decomposition thin({8, 8, 3}, 3, 3, z_only(1));
  EXPECT_THROW(check_components(thin, HaloComponents().write_back(2, +1, {1}).write_back(2, -1, {1}), 2),
               InvalidArgument);
  // Ghosts along two axes: a corner ghost stands for cells of two blocks.
  const Decomposition xy({8, 8, 1}, 2, 4, {});
  EXPECT_NO_THROW(check_components(xy, HaloComponents().fill(0, +1, {1}), 2));
  EXPECT_THROW(check_components(xy, HaloComponents().write_back(0, +1, {1}), 2), InvalidArgument);
}

// The blocks of a field of `components` components as host arrays, component c of block k
// `stride` cells after component 0 (the allocated cells of the largest block).
struct HostField {
  const Decomposition& grid;
  std::size_t components;
  std::size_t stride = 0;
  std::vector<std::vector<double>> blocks;

  HostField(const Decomposition& g, std::size_t c) : grid(g), components(c) {
    for (std::size_t k = 0; k < g.size(); ++k) stride = std::max(stride, g.allocated_cells(k));
    blocks.assign(g.size(), std::vector<double>(stride * c, 0.0));
  }
  [[nodiscard]] std::size_t at(std::size_t k, std::size_t c, const Point& local) const {
    return c * stride + grid.index(k, local);
  }
  // The global cell a local cell of block k stands for (ghosts wrapped across periodic axes);
  // false beyond a non-periodic edge.
  [[nodiscard]] bool global(std::size_t k, const Point& local, Point& out) const {
    const Box o = grid.owned(k);
    for (std::size_t a = 0; a < 3; ++a) {
      const auto n = static_cast<std::ptrdiff_t>(grid.extent()[a]);
      std::ptrdiff_t g = o.lo[a] + local[a];
      if (g < 0 || g >= n) {
        if (!grid.periodic(a)) return false;
        g = (g + n) % n;
      }
      out[a] = g;
    }
    return true;
  }
  // The block owning global cell g, and g's local coordinates there.
  [[nodiscard]] std::size_t owner(const Point& g, Point& local) const {
    for (std::size_t k = 0; k < grid.size(); ++k) {
      const Box o = grid.owned(k);
      if (o.contains(g)) {
        for (std::size_t a = 0; a < 3; ++a) local[a] = g[a] - o.lo[a];
        return k;
      }
    }
    ADD_FAILURE() << "no owner";
    return 0;
  }
  // Calls f(local) for every cell of block k's buffer that holds a value (ghosts included).
  template <class F>
  void cells(std::size_t k, F&& f) const {
    const Box o = grid.owned(k);
    Point p{};
    for (p[2] = -static_cast<std::ptrdiff_t>(grid.halo(2)); p[2] < static_cast<std::ptrdiff_t>(o.size[2] + grid.halo(2)); ++p[2])
      for (p[1] = -static_cast<std::ptrdiff_t>(grid.halo(1)); p[1] < static_cast<std::ptrdiff_t>(o.size[1] + grid.halo(1)); ++p[1])
        for (p[0] = -static_cast<std::ptrdiff_t>(grid.halo(0)); p[0] < static_cast<std::ptrdiff_t>(o.size[0] + grid.halo(0)); ++p[0])
          f(p);
  }
  [[nodiscard]] bool owned(std::size_t k, const Point& p) const {
    return Box{{0, 0, 0}, grid.owned(k).size}.contains(p);
  }
};

// Runs `program` on `f` as the GPU engine does, phase by phase: sends, then receives.
void run(const cush::detail::ExchangeProgram& program, HostField& f) {
  using cush::detail::BufferRef;
  std::vector<std::vector<double>> send(program.ends.size()), recv(program.ends.size());
  for (std::size_t m = 0; m < program.ends.size(); ++m) {
    send[m].assign(program.send_cells[m], -1.0);
    recv[m].assign(program.recv_cells[m], -1.0);
  }
  const auto cell = [&](const cush::detail::StepSide& side, const Extent3& c) -> double& {
    const Extent3& a = side.alloc;
    const std::size_t i = (side.lo[0] + c[0]) + a[0] * ((side.lo[1] + c[1]) + a[1] * (side.lo[2] + c[2]));
    switch (side.buffer.kind) {
      case BufferRef::Kind::send: return send.at(side.buffer.index).at(i);
      case BufferRef::Kind::recv: return recv.at(side.buffer.index).at(i);
      case BufferRef::Kind::block: break;
    }
    EXPECT_LT(i, f.stride);
    return f.blocks.at(side.buffer.index).at(side.buffer.component * f.stride + i);
  };
  const auto step = [&](const cush::detail::ExchangeStep& s) {
    Extent3 c{};
    for (c[2] = 0; c[2] < s.size[2]; ++c[2])
      for (c[1] = 0; c[1] < s.size[1]; ++c[1])
        for (c[0] = 0; c[0] < s.size[0]; ++c[0]) cell(s.dst, c) = cell(s.src, c);
  };
  for (const auto& phase : program.phases) {
    for (const auto& s : phase.sends) step(s);
    for (const auto& s : phase.receives) step(s);
  }
}

// Owned cells hold value(c, global cell) > 0, ghosts a value < 0 naming block, component and
// cell (what an in-place kernel wrote there). After the exchange of `which`: a ghost of a
// filled component holds its owner's value, a cell stood for by a ghost of a component written
// back holds that ghost's value, everything else is unchanged.
void check_selection(const Decomposition& g, const HaloComponents& which, std::size_t components) {
  SCOPED_TRACE(cush_test::describe(g));
  HostField f(g, components);
  const auto value = [&](std::size_t c, const Point& p) {
    return 1.0 + static_cast<double>(c) * 1e6 +
           static_cast<double>(p[0] + 97 * (p[1] + 89 * p[2]));
  };
  const auto ghost_value = [&](std::size_t k, std::size_t c, const Point& p) {
    return -1.0 - static_cast<double>(k) * 1e7 - static_cast<double>(c) * 1e5 -
           static_cast<double>((p[0] + 3) + 31 * ((p[1] + 3) + 37 * (p[2] + 3)));
  };
  for (std::size_t k = 0; k < g.size(); ++k)
    for (std::size_t c = 0; c < components; ++c)
      f.cells(k, [&](const Point& p) {
        Point gp{};
        const bool inside = f.global(k, p, gp);
        f.blocks[k][f.at(k, c, p)] = f.owned(k, p) && inside ? value(c, gp) : ghost_value(k, c, p);
      });
  const HostField before = f;
  run(cush::detail::exchange_program(g, {}, which), f);

  const auto contains = [](const std::vector<std::size_t>& v, std::size_t c) { return std::find(v.begin(), v.end(), c) != v.end(); };
  // The expected values, built from `before`: fills, then write-backs (disjoint components).
  HostField expect = before;
  for (std::size_t k = 0; k < g.size(); ++k)
    for (std::size_t c = 0; c < components; ++c)
      f.cells(k, [&](const Point& p) {
        if (f.owned(k, p)) return;
        Point gp{}, there{};
        if (!f.global(k, p, gp)) return;
        // The side of the ghost along each axis: -1 below the owned cells (data came up, +1).
        for (std::size_t a = 0; a < 3; ++a) {
          const auto n = static_cast<std::ptrdiff_t>(g.owned(k).size[a]);
          if (p[a] >= 0 && p[a] < n) continue;
          const int travel = p[a] < 0 ? +1 : -1;
          const std::size_t o = f.owner(gp, there);
          if (contains(which.filled(a, travel), c)) expect.blocks[k][f.at(k, c, p)] = before.blocks[o][f.at(o, c, there)];
          if (contains(which.written_back(a, -travel), c)) expect.blocks[o][f.at(o, c, there)] = before.blocks[k][f.at(k, c, p)];
        }
      });
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < g.size(); ++k)
    for (std::size_t c = 0; c < components; ++c)
      f.cells(k, [&](const Point& p) {
        const double got = f.blocks[k][f.at(k, c, p)], want = expect.blocks[k][f.at(k, c, p)];
        if (got != want && ++wrong <= 5)
          ADD_FAILURE() << "block " << k << " component " << c << " cell (" << p[0] << ", " << p[1] << ", " << p[2]
                        << "): " << got << ", expected " << want;
      });
  EXPECT_EQ(wrong, 0U);
}

TEST(HaloComponents, TheLatticeBoltzmannSelectionsOnZSlabs) {
  // A-B pull: fill the populations that stream across each face; esoteric pull after a step of
  // parity 0: fills and write-backs (cases/lbm/kernels.hpp).
  HaloComponents ab;
  ab.fill(2, +1, {5, 9, 11, 16, 18}).fill(2, -1, {6, 10, 12, 15, 17});
  HaloComponents esoteric;
  esoteric.fill(2, +1, {16, 18}).fill(2, -1, {6, 10, 12}).write_back(2, +1, {5, 9, 11}).write_back(2, -1, {15, 17});
  for (std::size_t blocks : {1, 2, 3, 5})
    for (std::size_t nz : {blocks, blocks + 2, 3 * blocks + 1}) {
      GridOptions o = z_only(1, blocks);
      o.row_align = 8;
      const Decomposition g({5, 4, nz}, 3, blocks, o);
      check_selection(g, ab, 19);
      check_selection(g, esoteric, 19);
    }
}

TEST(HaloComponents, RandomSelectionsOnRandomGrids) {
  std::mt19937_64 rng(20261124);
  const auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
  std::size_t grids = 0;
  while (grids < 300) {
    const std::size_t dims = pick(1, 3);
    Extent3 extent{1, 1, 1};
    for (std::size_t a = 0; a < dims; ++a) extent[a] = pick(1, 9);
    GridOptions o;
    o.halo = pick(1, 3);
    const bool one_axis = pick(0, 1) == 1;  // ghosts along one axis: write-backs allowed
    // With ghosts along several axes, all periodic: the corner ghosts beyond a non-periodic edge
    // hold a neighbour's boundary ghosts (field.hpp), which this check does not model.
    for (std::size_t a = 0; a < dims; ++a) o.periodic[a] = !one_axis || pick(0, 1) == 1;
    const std::size_t ghost_axis = pick(0, dims - 1);
    if (one_axis)
      for (std::size_t a = 0; a < 3; ++a) o.ghosts[a] = a == ghost_axis;
    o.row_align = pick(1, 5);
    const std::size_t components = pick(1, 4);
    std::optional<Decomposition> g;
    try {
      g.emplace(extent, dims, pick(1, 6), o);
    } catch (const InvalidArgument&) {
      continue;
    }
    HaloComponents which;
    for (std::size_t a = 0; a < dims; ++a)
      for (std::size_t c = 0; c < components; ++c) {
        // Each component along each axis: filled (either, both or no direction) or written back.
        const std::size_t how = pick(0, one_axis ? 5 : 3);
        if (how == 1 || how == 3) which.fill(a, +1, {c});
        if (how == 2 || how == 3) which.fill(a, -1, {c});
        if (how == 4) which.write_back(a, +1, {c});
        if (how == 5) which.write_back(a, -1, {c});
      }
    try {
      cush::detail::check_components(*g, which, components);
    } catch (const InvalidArgument&) {
      continue;
    }
    // Fills along several axes compose through the corners only for components filled both
    // ways on every axis; check the others on grids with one ghost axis.
    if (!one_axis) {
      HaloComponents all_or_nothing;
      for (std::size_t c = 0; c < components; ++c)
        if (pick(0, 1) == 1)
          for (std::size_t a = 0; a < 3; ++a) all_or_nothing.fill(a, +1, {c}).fill(a, -1, {c});
      which = all_or_nothing;
    }
    check_selection(*g, which, components);
    if (::testing::Test::HasFailure()) return;
    ++grids;
  }
}

}  // namespace
