// Fields on decomposed grids: scatter/gather round trips and halo exchanges, every cell of every
// block's buffer compared with the global array it stands for.

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "support/kernels.hpp"
#include "support/env.hpp"
#include "support/field_checks.hpp"
#include "support/gpu.hpp"

namespace {

using cush::Extent3;
using cush_test::expect_blocks_match;
using cush_test::expect_buffer_matches;
using cush::GridOptions;

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

struct Case {
  std::size_t dims;
  Extent3 extent;
};

const std::vector<Case> cases{{1, {1001, 1, 1}}, {2, {101, 67, 1}}, {3, {37, 23, 19}}};

TEST(Field, ScatterGatherRoundTripOnEveryProcessGrid) {
  CUSH_REQUIRE_GPUS(1);
  for (const Case& c : cases)
    for (const std::vector<int>& ids : cush_test::device_orders())
      for (std::size_t depth : {1U, 3U}) {
        GridOptions o;
        o.halo = depth;
        o.row_align = depth == 3 ? 16 : 1;  // rows padded, owned cells aligned
        cush::Field<double> f(cush::DeviceSet(ids), c.extent, c.dims, o);
        SCOPED_TRACE(std::to_string(c.dims) + "D on " + cush_test::to_string(ids) + ", depth " + std::to_string(depth) +
                     ", row_align " + std::to_string(o.row_align));
        const std::vector<double> in = random_values<double>(c.extent[0] * c.extent[1] * c.extent[2], 7);
        std::vector<double> out(in.size(), 0.0);
        f.scatter(in.data());
        f.gather(out.data());
        f.wait();
        ASSERT_EQ(out, in);
        expect_blocks_match(f, in, false);
      }
}

// The first exchange (start/finish) moves strided faces with `transport`, the second
// (exchange()) with the other one.
template <class T>
void check_exchange(const std::vector<int>& ids, const Case& c, const Extent3& blocks, std::size_t depth, bool periodic,
                    cush::HaloTransport transport = cush::HaloTransport::automatic, std::size_t row_align = 1) {
  GridOptions o;
  o.row_align = row_align;
  o.halo = depth;
  o.blocks = blocks;
  for (std::size_t a = 0; a < c.dims; ++a) o.periodic[a] = periodic;
  cush::Field<T> f(cush::DeviceSet(ids), cush::Decomposition(c.extent, c.dims, ids.size(), o));
  f.set_halo_transport(transport);
  ASSERT_EQ(f.halo_transport(), transport);
  // Every cell starts as NaN (all bits set), which equals nothing: a ghost the exchange missed
  // fails the comparison.
  f.for_each([&](cush::Block<T> b) {
    ASSERT_EQ(cudaMemsetAsync(b.data(), 0xFF, f.grid().allocated_cells(b.pos()) * sizeof(T), b.stream()), cudaSuccess);
  });
  const std::size_t n = c.extent[0] * c.extent[1] * c.extent[2];
  const auto seed = static_cast<unsigned>(100 * c.dims + 10 * depth + (periodic ? 1 : 0));
  const std::vector<T> first = random_values<T>(n, seed);
  const std::vector<T> second = random_values<T>(n, seed + 1000);
  const std::vector<T> third = random_values<T>(n, seed + 2000);
  f.scatter(first.data());
  {
    // A slow kernel on a block's stream, then new data behind it: the exchange must send the new
    // data, so it must wait for both.
    const cush::DeviceGuard guard(f.block(0).device());
    cush_test::spin(f.block(0).stream(), 20);
  }
  f.scatter(second.data());
  f.exchange_start();
  // Work on the blocks' streams runs while the exchange is in flight.
  f.for_each([](cush::Block<T> b) { cush_test::spin(b.stream(), 5); });
  f.exchange_finish();
  f.wait();
  expect_blocks_match(f, second, true);
  // A second exchange reuses the buffers and events and sends the owned cells anew.
  f.set_halo_transport(transport == cush::HaloTransport::automatic ? cush::HaloTransport::staged
                                                                    : cush::HaloTransport::automatic);
  f.scatter(third.data());
  f.exchange();
  f.wait();
  expect_blocks_match(f, third, true);
}

TEST(Field, ExchangeFillsEveryGhostOnTwoGpus) {
  CUSH_REQUIRE_GPUS(2);
  for (const std::vector<int>& ids : {std::vector<int>{0, 1}, std::vector<int>{1, 0}})
    for (const Case& c : cases)
      for (const Extent3 blocks : {Extent3{2, 1, 1}, Extent3{1, 2, 1}, Extent3{1, 1, 2}}) {
        bool fits = true;
        for (std::size_t a = c.dims; a < 3; ++a) fits = fits && blocks[a] == 1;
        if (!fits) continue;
        for (std::size_t depth = 1; depth <= 4; ++depth)
          for (bool periodic : {false, true}) {
            // Padded rows (16 cells) with half of the combinations of depth and periodicity.
            const std::size_t align = (depth + (periodic ? 1 : 0)) % 2 == 0 ? 16 : 1;
            SCOPED_TRACE(std::to_string(c.dims) + "D, blocks " + std::to_string(blocks[0]) + std::to_string(blocks[1]) +
                         std::to_string(blocks[2]) + " on " + cush_test::to_string(ids) + ", depth " +
                         std::to_string(depth) + (periodic ? ", periodic" : "") + ", row_align " + std::to_string(align));
            check_exchange<double>(ids, c, blocks, depth, periodic,
                                   depth % 2 == 1 ? cush::HaloTransport::automatic : cush::HaloTransport::staged, align);
          }
      }
  check_exchange<float>({1, 0}, cases[2], Extent3{1, 1, 2}, 2, true);
  check_exchange<float>({0, 1}, cases[2], Extent3{2, 1, 1}, 1, false);
  check_exchange<float>({1, 0}, cases[2], Extent3{1, 2, 1}, 3, true, cush::HaloTransport::staged);
  check_exchange<float>({1, 0}, cases[2], Extent3{1, 1, 2}, 1, true, cush::HaloTransport::automatic, 32);
}

// Faces of several MiB that are strided (x faces, and y faces with their x ghosts) are packed
// into the receiver in slabs and unpacked slab by slab on a second stream; slabs of uneven
// thickness.
// The slab counts of the faces a field of this shape pipelines (HaloTransport::automatic, and
// after switching to staged, which packs into nothing remote).
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> pipelined_slabs(const std::vector<int>& ids, const Case& c,
                                                                              const Extent3& blocks, std::size_t depth) {
  GridOptions o;
  o.halo = depth;
  o.blocks = blocks;
  cush::Field<double> f(cush::DeviceSet(ids), cush::Decomposition(c.extent, c.dims, ids.size(), o));
  const std::vector<std::size_t> automatic = f.pipelined_slabs();
  f.set_halo_transport(cush::HaloTransport::staged);
  return {automatic, f.pipelined_slabs()};
}

TEST(Field, LargeStridedFacesArePipelined) {
  CUSH_REQUIRE_GPUS(2);
  const Case x_faces{3, {12, 701, 903}};  // 2 x 5 MB faces of doubles at depth 1
  {
    const auto [automatic, staged] = pipelined_slabs({1, 0}, x_faces, Extent3{2, 1, 1}, 1);
    EXPECT_TRUE(automatic.empty()) << "below the default threshold of 256 MiB nothing is split";
    EXPECT_TRUE(staged.empty());
  }
  // Pipelined from 4 MiB on (the default is 256 MiB), in 5 slabs; read as a field is made.
  const cush_test::ScopedEnv threshold("CUSH_HALO_PIPELINE_MIB", "4");
  const cush_test::ScopedEnv chunks("CUSH_HALO_CHUNKS", "5");
  {
    const auto [automatic, staged] = pipelined_slabs({1, 0}, x_faces, Extent3{2, 1, 1}, 1);
    EXPECT_EQ(automatic, (std::vector<std::size_t>{5, 5})) << "one x face each way, 5 slabs each";
    EXPECT_TRUE(staged.empty()) << "the staged transport packs locally: nothing to pipeline";
  }
  check_exchange<double>({1, 0}, Case{3, {12, 701, 903}}, Extent3{2, 1, 1}, 4, true);   // 20 MB x faces
  check_exchange<double>({0, 1}, Case{3, {301, 18, 2999}}, Extent3{1, 2, 1}, 2, false);  // 14 MB y faces
  check_exchange<float>({0, 1}, Case{2, {10, 1900001, 1}}, Extent3{2, 1, 1}, 3, false);  // 2D, 23 MB
}

// An exchange captured into a CUDA graph (both blocks' streams, joined by events) and replayed
// after the owned cells changed: packs into the peer (x faces) and copies (z faces), through
// exchange() and through exchange_start()/exchange_finish().
TEST(Field, ExchangeCanBeCapturedAndReplayed) {
  CUSH_REQUIRE_GPUS(2);
  const Case c{3, {37, 23, 19}};
  for (const Extent3 blocks : {Extent3{2, 1, 1}, Extent3{1, 1, 2}})
    for (bool split : {false, true}) {
      SCOPED_TRACE(std::string("blocks ") + std::to_string(blocks[0]) + std::to_string(blocks[1]) +
                   std::to_string(blocks[2]) + (split ? ", start/finish" : ", exchange()"));
      GridOptions o;
      o.halo = 2;
      o.blocks = blocks;
      o.periodic = {true, true, true};
      cush::Field<double> f(cush::DeviceSet{1, 0}, cush::Decomposition(c.extent, c.dims, 2, o));
      const std::size_t n = c.extent[0] * c.extent[1] * c.extent[2];
      f.exchange();  // outside the capture: anything created on first use
      f.wait();
      const cudaStream_t s0 = f.block(0).stream();
      const cudaStream_t s1 = f.block(1).stream();
      cush::Event fork(f.block(0).device());
      cush::Event join(f.block(1).device());
      cudaGraph_t graph = nullptr;
      {
        const cush::DeviceGuard guard(f.block(0).device());
        ASSERT_EQ(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed), cudaSuccess);
        fork.record(s0);
        fork.wait_in(s1);
        if (split) {
          f.exchange_start();
          f.exchange_finish();
        } else {
          f.exchange();
        }
        join.record(s1);
        join.wait_in(s0);
        ASSERT_EQ(cudaStreamEndCapture(s0, &graph), cudaSuccess);
      }
      cudaGraphExec_t exec = nullptr;
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      for (unsigned replay = 0; replay < 2; ++replay) {
        const std::vector<double> values = random_values<double>(n, 300 + replay);
        f.scatter(values.data());
        f.wait();
        {
          const cush::DeviceGuard guard(f.block(0).device());
          ASSERT_EQ(cudaGraphLaunch(exec, s0), cudaSuccess);
          ASSERT_EQ(cudaStreamSynchronize(s0), cudaSuccess);
        }
        expect_blocks_match(f, values, true);
      }
      EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
      EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
    }
}

TEST(Field, ExchangeOnOneGpuWrapsPeriodicAxes) {
  CUSH_REQUIRE_GPUS(1);
  for (const Case& c : cases)
    for (std::size_t depth = 1; depth <= 4; ++depth)
      for (bool periodic : {false, true})
        for (std::size_t align : {1U, 16U}) {
          SCOPED_TRACE(std::to_string(c.dims) + "D, depth " + std::to_string(depth) + (periodic ? ", periodic" : "") +
                       ", row_align " + std::to_string(align));
          check_exchange<double>({0}, c, Extent3{1, 1, 1}, depth, periodic, cush::HaloTransport::automatic, align);
        }
}

// Ghosts of the axes exchanged in place (those before the first split axis) are filled on the
// blocks' streams by exchange_start() itself: a copy of every buffer taken on the blocks' streams
// right after it, before exchange_finish(), already holds them (on one GPU, every ghost).
TEST(Field, ExchangeStartFillsTheAxesExchangedInPlace) {
  CUSH_REQUIRE_GPUS(1);
  for (const std::vector<int>& ids : cush_test::device_orders())
    for (std::size_t align : {1U, 16U}) {
      SCOPED_TRACE(cush_test::to_string(ids) + ", row_align " + std::to_string(align));
      GridOptions o;
      o.halo = 2;
      o.periodic = {true, true, true};
      o.blocks = {1, 1, ids.size()};
      o.row_align = align;
      const Extent3 extent{37, 23, 19};
      cush::Field<double> f(cush::DeviceSet(ids), cush::Decomposition(extent, 3, ids.size(), o));
      const cush::Decomposition& g = f.grid();
      ASSERT_TRUE(g.exchanged_in_place(0) && g.exchanged_in_place(1));
      const std::vector<double> values = random_values<double>(extent[0] * extent[1] * extent[2], 42);
      f.for_each([&](cush::Block<double> b) {  // NaN everywhere first
        ASSERT_EQ(cudaMemsetAsync(b.data(), 0xFF, g.allocated_cells(b.pos()) * sizeof(double), b.stream()), cudaSuccess);
      });
      f.scatter(values.data());
      f.exchange_start();
      std::vector<std::vector<double>> snapshot(g.size());
      f.for_each([&](cush::Block<double> b) {
        snapshot[b.pos()].assign(g.allocated_cells(b.pos()), 0.0);
        ASSERT_EQ(cudaMemcpyAsync(snapshot[b.pos()].data(), b.data(), snapshot[b.pos()].size() * sizeof(double),
                                  cudaMemcpyDefault, b.stream()),
                  cudaSuccess);
      });
      f.exchange_finish();
      f.wait();
      for (std::size_t k = 0; k < g.size(); ++k) {
        const cush::Block<double> b = f.block(k);
        const auto nz = static_cast<std::ptrdiff_t>(b.owned().size[2]);
        // The x and y ghosts of the owned planes; with one block, the z ghosts too.
        expect_buffer_matches(g, b, snapshot[k], values,
                              [&](std::ptrdiff_t, std::ptrdiff_t, std::ptrdiff_t z) { return g.size() == 1 || (z >= 0 && z < nz); });
      }
      expect_blocks_match(f, values, true);
    }
}

TEST(Field, FieldsMadeAlikeShareTheStreams) {
  CUSH_REQUIRE_GPUS(1);
  const std::vector<int> ids = cush_test::device_orders().back();
  GridOptions o;
  o.halo = 2;
  o.periodic = {true, false, true};
  cush::Field<float> u(cush::DeviceSet(ids), Extent3{29, 31, 17}, 3, o);
  cush::Field<float> v = cush::Field<float>::alike(u);
  ASSERT_EQ(v.grid().blocks(), u.grid().blocks());
  const std::size_t n = 29 * 31 * 17;
  const std::vector<float> g = random_values<float>(n, 5);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = 2.0f * g[i] + 1.0f;
  u.scatter(g.data());
  // v = 2u + 1 on the shared streams, behind a slow kernel; v's exchange must see it.
  u.for_each([&](cush::Block<float> b) {
    const cush::Block<float> out = v.block(b.pos());
    ASSERT_EQ(out.stream(), b.stream());
    const std::size_t cells = u.grid().allocated_cells(b.pos());
    cush_test::spin(b.stream(), 10);
    ASSERT_EQ(cudaMemcpyAsync(out.data(), b.data(), cells * sizeof(float), cudaMemcpyDefault, b.stream()), cudaSuccess);
    cush_test::affine(out.data(), cells, 2.0f, 1.0f, b.stream());
  });
  v.exchange();
  v.wait();
  expect_blocks_match(v, want, true);
  // A field of another type made alike: same grid, its own buffers of doubles.
  auto w = cush::Field<double>::alike(u);
  const std::vector<double> d = random_values<double>(n, 6);
  w.scatter(d.data());
  w.exchange();
  w.wait();
  expect_blocks_match(w, d, true);
  expect_blocks_match(v, want, true);  // untouched by w
}

// done() asks without blocking: false while a block's stream or an exchange in flight still has
// work, true once wait() has returned.
TEST(Field, DoneSaysWhetherWorkIsLeft) {
  CUSH_REQUIRE_GPUS(1);
  GridOptions o;
  o.periodic = {true, true, false};
  cush::Field<float> f(cush::DeviceSet(cush_test::device_orders().back()), Extent3{32, 16, 1}, 2, o);
  f.wait();
  EXPECT_TRUE(f.done());
  {
    const cush::DeviceGuard guard(f.block(0).device());
    cush_test::spin(f.block(0).stream(), 200);
  }
  EXPECT_FALSE(f.done());
  f.exchange_start();  // the exchange streams wait behind the spinning block stream
  EXPECT_FALSE(f.done());
  f.exchange_finish();
  f.wait();
  EXPECT_TRUE(f.done());
}

TEST(Field, MisuseIsRejected) {
  CUSH_REQUIRE_GPUS(1);
  cush::Field<float> f(cush::DeviceSet{0}, Extent3{16, 16, 1}, 2);
  EXPECT_THROW(f.exchange_finish(), cush::InvalidArgument);
  f.exchange_start();
  EXPECT_THROW(f.exchange_start(), cush::InvalidArgument);
  EXPECT_THROW(f.exchange(), cush::InvalidArgument);
  EXPECT_THROW(f.set_halo_transport(cush::HaloTransport::staged), cush::InvalidArgument);
  f.exchange_finish();
  f.set_halo_transport(cush::HaloTransport::staged);
  EXPECT_EQ(cush::Field<double>::alike(f).halo_transport(), cush::HaloTransport::staged);
  EXPECT_THROW(f.scatter(nullptr), cush::InvalidArgument);
  EXPECT_THROW(cush::Field<float>(cush::DeviceSet{0}, cush::Decomposition(Extent3{16, 1, 1}, 1, 2)), cush::InvalidArgument);
  f.wait();
}

// A field on the caller's streams: its blocks' work and exchanges run there, the streams outlive
// the field, and bad streams are rejected before anything is allocated.
TEST(Field, RunsOnTheCallersStreams) {
  CUSH_REQUIRE_GPUS(1);
  const std::vector<int> ids = cush_test::device_orders().back();
  const cush::DeviceSet gpus(ids);
  std::vector<cush::Stream> mine;
  std::vector<cush::StreamRef> refs;
  for (int id : gpus) refs.emplace_back(mine.emplace_back(id));
  GridOptions o;
  o.periodic = {true, true, true};
  const cush::Decomposition grid(Extent3{23, 19, 13}, 3, gpus.size(), o);
  const std::size_t n = 23 * 19 * 13;
  const std::vector<double> g = random_values<double>(n, 7);
  {
    cush::Field<double> f(gpus, grid, refs);
    const auto alike = cush::Field<float>::alike(f);
    for (std::size_t pos = 0; pos < gpus.size(); ++pos) {
      EXPECT_EQ(f.stream(pos), mine[pos].get());
      EXPECT_EQ(alike.stream(pos), mine[pos].get());
    }
    f.scatter(g.data());
    f.exchange_start();
    f.exchange_finish();
    f.wait();
    expect_blocks_match(f, g, true);
  }
  for (const cush::Stream& s : mine) EXPECT_EQ(cudaStreamQuery(s.get()), cudaSuccess) << "the stream must live on";
  const std::vector<cush::StreamRef> too_few(refs.begin(), refs.end() - 1);
  EXPECT_THROW(cush::Field<double>(gpus, grid, too_few), cush::InvalidArgument);
  std::vector<cush::StreamRef> with_default = refs;
  with_default.back() = cush::StreamRef(ids.back(), nullptr);
  EXPECT_THROW(cush::Field<double>(gpus, grid, with_default), cush::InvalidArgument);
}

// Move assignment, as for plans: the old field's work is finished and its buffers freed, the
// moved field keeps working.
TEST(Field, MoveAssignmentWaitsForTheOldField) {
  CUSH_REQUIRE_GPUS(1);
  const cush::DeviceSet gpus(cush_test::device_orders().back());
  cush::Field<float> a(gpus, Extent3{40, 30, 1}, 2);
  cush::Field<float> b(gpus, Extent3{20, 10, 1}, 2);
  const cudaStream_t old_stream = a.stream(0);
  {
    const cush::DeviceGuard guard(a.block(0).device());
    cush_test::spin(old_stream, 50);
  }
  a = std::move(b);
  EXPECT_EQ(a.grid().extent(), (Extent3{20, 10, 1}));
  const std::vector<float> g = random_values<float>(200, 8);
  std::vector<float> out(200, 0.0F);
  a.scatter(g.data());
  a.exchange();
  a.gather(out.data());
  a.wait();
  EXPECT_EQ(out, g);
}

}  // namespace
