// Fields of several components on the GPUs: scatter/gather of every component, the full
// exchange of every component (strided faces and corners included), and exchanges of some
// components (cush::HaloComponents) with fills and write-backs on z slabs, every cell of every
// buffer compared with what it must hold.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "support/gpu.hpp"

namespace {

using cush::Extent3;
using cush::GridOptions;
using Point = std::array<std::ptrdiff_t, 3>;

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Block k's whole buffer, every component, ghosts included (component c at c * stride).
std::vector<float> download(const cush::Field<float>& f, std::size_t k) {
  const cush::Block<float> b = f.block(k);
  std::vector<float> buf(b.component_stride() * (b.components() - 1) + f.grid().allocated_cells(k));
  EXPECT_EQ(cudaMemcpy(buf.data(), b.data(), buf.size() * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  return buf;
}

// From pageable memory cudaMemcpy may return before the copy has landed, and the field's streams
// do not wait for the legacy default stream: the device is synchronized before the field's next
// operation (compute-sanitizer's racecheck, which slows the copies, found the exchange reading
// what was there before).
void upload(const cush::Field<float>& f, std::size_t k, const std::vector<float>& buf) {
  const cush::DeviceGuard on(f.block(k).device());
  EXPECT_EQ(cudaMemcpy(f.block(k).data(), buf.data(), buf.size() * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Calls f(local) for every cell of block k's buffer that holds a value.
template <class F>
void cells(const cush::Decomposition& g, std::size_t k, F&& f) {
  const auto lo = [&](std::size_t a) { return -static_cast<std::ptrdiff_t>(g.halo(a)); };
  const auto hi = [&](std::size_t a) { return static_cast<std::ptrdiff_t>(g.owned(k).size[a] + g.halo(a)); };
  Point p{};
  for (p[2] = lo(2); p[2] < hi(2); ++p[2])
    for (p[1] = lo(1); p[1] < hi(1); ++p[1])
      for (p[0] = lo(0); p[0] < hi(0); ++p[0]) f(p);
}

// The global cell that local cell p of block k stands for (periodic axes wrapped).
Point global(const cush::Decomposition& g, std::size_t k, const Point& p) {
  Point q{};
  for (std::size_t a = 0; a < 3; ++a) {
    const auto n = static_cast<std::ptrdiff_t>(g.extent()[a]);
    q[a] = ((g.owned(k).lo[a] + p[a]) % n + n) % n;
  }
  return q;
}

bool is_owned(const cush::Decomposition& g, std::size_t k, const Point& p) {
  return cush::Box{{0, 0, 0}, g.owned(k).size}.contains(p);
}

TEST(FieldComponents, EveryComponentIsScatteredGatheredAndExchanged) {
  CUSH_REQUIRE_GPUS(1);
  for (const std::vector<int>& ids : cush_test::device_orders()) {
    GridOptions o;
    o.periodic = {true, true, true};
    o.row_align = 8;
    o.halo = 2;
    const Extent3 e{13, 11, 9};
    cush::Field<float> f(cush::DeviceSet(ids), e, 3, o, 3);
    SCOPED_TRACE("on " + cush_test::to_string(ids) + ", blocks " + std::to_string(f.grid().blocks()[0]) + " " +
                 std::to_string(f.grid().blocks()[1]) + " " + std::to_string(f.grid().blocks()[2]));
    ASSERT_EQ(f.components(), 3U);
    const std::size_t n = e[0] * e[1] * e[2];
    const std::vector<float> in = random_values(3 * n, 11);
    std::vector<float> out(in.size(), NAN);
    f.scatter(in.data());
    f.exchange();
    f.gather(out.data());
    f.wait();
    ASSERT_EQ(out, in);
    for (std::size_t k = 0; k < f.grid().size(); ++k) {
      const cush::Block<float> b = f.block(k);
      // Components start 256-byte aligned relative to one another, whole rows apart.
      EXPECT_EQ(b.component_stride() * sizeof(float) % 256, 0U);
      EXPECT_EQ(b.data(2), b.data() + 2 * b.component_stride());
      const std::vector<float> buf = download(f, k);
      std::size_t wrong = 0;
      for (std::size_t c = 0; c < 3; ++c)
        cells(f.grid(), k, [&](const Point& p) {
          const Point q = global(f.grid(), k, p);
          const float want = in[c * n + q[0] + e[0] * (q[1] + e[1] * q[2])];
          if (buf[c * b.component_stride() + b.index(p[0], p[1], p[2])] != want) ++wrong;
        });
      EXPECT_EQ(wrong, 0U) << "block " << k;
    }
    // A field made alike has the model's components unless told otherwise.
    EXPECT_EQ(cush::Field<double>::alike(f).components(), 3U);
    EXPECT_EQ(cush::Field<double>::alike(f, 1).components(), 1U);
  }
}

// z slabs with ghosts along z only; before the exchange, owned cells hold random values and
// ghost cells other random values (what an in-place kernel wrote there).
void check_selection(const std::vector<int>& ids, std::size_t nz, const cush::HaloComponents& which, bool start_finish) {
  GridOptions o;
  o.periodic = {false, false, true};
  o.ghosts = {false, false, true};
  o.row_align = 32;
  const Extent3 e{19, 7, nz};
  constexpr std::size_t kC = 19;
  cush::Field<float> f(cush::DeviceSet(ids), e, 3, o, kC);
  const cush::Decomposition& g = f.grid();
  SCOPED_TRACE("on " + cush_test::to_string(ids) + ", nz " + std::to_string(nz) + (start_finish ? ", start/finish" : ""));
  std::vector<std::vector<float>> before;
  for (std::size_t k = 0; k < g.size(); ++k) {
    before.push_back(random_values(download(f, k).size(), static_cast<unsigned>(k + 100 * nz)));
    upload(f, k, before[k]);
  }
  if (start_finish) {
    f.exchange_start(which);
    f.exchange_finish();
  } else {
    f.exchange(which);
  }
  f.wait();
  std::vector<std::vector<float>> expect = before;
  const auto at = [&](std::size_t k, std::size_t c, const Point& p) { return c * f.block(k).component_stride() + f.block(k).index(p[0], p[1], p[2]); };
  const auto has = [](const std::vector<std::size_t>& v, std::size_t c) { return std::find(v.begin(), v.end(), c) != v.end(); };
  for (std::size_t k = 0; k < g.size(); ++k)
    cells(g, k, [&](const Point& p) {
      if (is_owned(g, k, p)) return;
      const Point q = global(g, k, p);
      std::size_t o = 0;
      while (!g.owned(o).contains(q)) ++o;
      const Point there{q[0] - g.owned(o).lo[0], q[1] - g.owned(o).lo[1], q[2] - g.owned(o).lo[2]};
      const int travel = p[2] < 0 ? +1 : -1;  // a low ghost is filled by data moving up
      for (std::size_t c = 0; c < kC; ++c) {
        if (has(which.filled(2, travel), c)) expect[k][at(k, c, p)] = before[o][at(o, c, there)];
        if (has(which.written_back(2, -travel), c)) expect[o][at(o, c, there)] = before[k][at(k, c, p)];
      }
    });
  for (std::size_t k = 0; k < g.size(); ++k) {
    const std::vector<float> got = download(f, k);
    std::size_t wrong = 0;
    for (std::size_t c = 0; c < kC; ++c)
      cells(g, k, [&](const Point& p) { wrong += got[at(k, c, p)] != expect[k][at(k, c, p)] ? 1 : 0; });
    EXPECT_EQ(wrong, 0U) << "block " << k;
  }
}

TEST(FieldComponents, SelectedComponentsAreFilledAndWrittenBack) {
  CUSH_REQUIRE_GPUS(1);
  // The lattice-Boltzmann selections (cases/lbm/kernels.hpp): A-B pull, esoteric pull after a
  // step of parity 1.
  cush::HaloComponents ab;
  ab.fill(2, +1, {5, 9, 11, 16, 18}).fill(2, -1, {6, 10, 12, 15, 17});
  cush::HaloComponents esoteric;
  esoteric.fill(2, +1, {15, 17}).fill(2, -1, {5, 9, 11}).write_back(2, +1, {6, 10, 12}).write_back(2, -1, {16, 18});
  for (const std::vector<int>& ids : cush_test::device_orders())
    for (std::size_t nz : {ids.size(), 2 * ids.size() + 1})
      for (bool start_finish : {false, true}) {
        check_selection(ids, nz, ab, start_finish);
        check_selection(ids, nz, esoteric, start_finish);
      }
}

// exchange_overlapped: for every block, update() gets the interior first (unless it is empty, as
// for thin blocks), then boundary boxes;
// together they cover the owned cells exactly once, and the exchange is done when it returns
// (no exchange in flight: another can start).
TEST(FieldComponents, ExchangeOverlappedCoversTheOwnedCellsOnce) {
  CUSH_REQUIRE_GPUS(1);
  for (const std::vector<int>& ids : cush_test::device_orders()) {
    GridOptions o;
    o.periodic = {true, false, true};
    cush::Field<float> f(cush::DeviceSet(ids), {9, 7, 11}, 3, o, 2);
    SCOPED_TRACE("on " + cush_test::to_string(ids));
    std::vector<std::vector<int>> visits(f.grid().size());
    std::vector<int> calls(f.grid().size(), 0);
    f.exchange_overlapped(cush::HaloComponents().fill(2, +1, {1}), 1, [&](const cush::Block<float>& b, const cush::Box& box) {
      int device = -1;
      ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
      EXPECT_EQ(device, cush::physical_device(b.device())) << "update() runs with the block's device current";
      const cush::Box& owned = f.grid().owned(b.pos());
      const cush::Box interior = f.grid().interior(b.pos(), 1);
      if (calls[b.pos()]++ == 0 && !interior.empty()) EXPECT_EQ(box, interior) << "the interior comes first";
      EXPECT_FALSE(box.empty()) << "no call for an empty box";
      std::vector<int>& v = visits[b.pos()];
      v.resize(owned.volume(), 0);
      for (std::ptrdiff_t z = box.lo[2]; z < box.lo[2] + static_cast<std::ptrdiff_t>(box.size[2]); ++z)
        for (std::ptrdiff_t y = box.lo[1]; y < box.lo[1] + static_cast<std::ptrdiff_t>(box.size[1]); ++y)
          for (std::ptrdiff_t x = box.lo[0]; x < box.lo[0] + static_cast<std::ptrdiff_t>(box.size[0]); ++x)
            ++v.at(static_cast<std::size_t>(x + static_cast<std::ptrdiff_t>(owned.size[0]) *
                                                     (y + static_cast<std::ptrdiff_t>(owned.size[1]) * z)));
    });
    for (std::size_t k = 0; k < visits.size(); ++k)
      EXPECT_EQ(std::count(visits[k].begin(), visits[k].end(), 1), static_cast<long>(f.grid().owned(k).volume()))
          << "block " << k;
    EXPECT_NO_THROW(f.exchange());  // nothing left in flight
    f.wait();
  }
}

TEST(FieldComponents, BadSelectionsAreRefusedBeforeAnythingRuns) {
  CUSH_REQUIRE_GPUS(1);
  GridOptions o;
  o.periodic = {false, false, true};
  o.ghosts = {false, false, true};
  cush::Field<float> f(cush::DeviceSet({0}), {4, 4, 4}, 3, o, 2);
  EXPECT_THROW(f.exchange(cush::HaloComponents().fill(2, +1, {2})), cush::InvalidArgument);
  EXPECT_THROW(f.exchange_start(cush::HaloComponents().fill(2, +1, {1}).write_back(2, -1, {1})), cush::InvalidArgument);
  f.exchange_start(cush::HaloComponents().fill(2, +1, {1}));
  EXPECT_THROW(f.exchange(cush::HaloComponents().fill(2, -1, {1})), cush::InvalidArgument);
  EXPECT_THROW(f.exchange_start(), cush::InvalidArgument);
  f.exchange_finish();
  EXPECT_THROW(f.exchange_finish(), cush::InvalidArgument);
  EXPECT_THROW(cush::Field<float>(cush::DeviceSet({0}), {4, 4, 4}, 3, o, 0), cush::InvalidArgument);
  f.wait();
}

}  // namespace
