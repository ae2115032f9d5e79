// Fields over ranks (cush/rank_field.hpp) under mpiexec with 2 and 4 ranks, with the GPUs of
// mpi_gpus.hpp (2 ranks x 2 GPUs where the host has 4, else 1 per rank, shared where the host has
// fewer). With GPUs: every ghost cell of every block of every rank checked after each kind of
// exchange (whole, started and finished, overlapped), over NCCL where every device is a GPU of
// its own and through host memory over MPI always, on random grids with odd sizes, depths 1-4,
// row alignment and two components; scatter from every root and gather to another, every cell
// compared. Bad input is refused on every rank, GPUs or not.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cush/error.hpp"
#include "cush/host_memory.hpp"
#include "cush/process_group.hpp"
#include "cush/rank_field.hpp"
#include "mpi_gpus.hpp"
#include "mpi_test.hpp"
#include "support/host_exchange.hpp"
#include "support/kernels.hpp"

namespace {

using cush::Decomposition;
using cush::Extent3;
using cush::RankTransport;

// A random decomposition into `count` blocks (as cush_test::random_grid, with the count given).
Decomposition random_grid_of(std::mt19937& rng, std::size_t count) {
  for (;;) {
    const std::size_t dims = std::uniform_int_distribution<std::size_t>(1, 3)(rng);
    Extent3 extent{1, 1, 1};
    for (std::size_t a = 0; a < dims; ++a) extent[a] = std::uniform_int_distribution<std::size_t>(1, dims == 3 ? 15 : 45)(rng);
    cush::GridOptions o;
    o.halo = std::uniform_int_distribution<std::size_t>(1, 4)(rng);
    for (std::size_t a = 0; a < dims; ++a) o.periodic[a] = (rng() & 1U) != 0;
    const std::size_t aligns[] = {1, 1, 2, 4, 16};
    o.row_align = aligns[rng() % 5];
    try {
      return Decomposition(extent, dims, count, o);
    } catch (const cush::InvalidArgument&) {
      // Too thin for its halo: draw again.
    }
  }
}

// Every component of this rank's blocks set to the exchange tests' initial buffers (owned cells
// their global index, ghosts unset).
void fill(const cush::RankField<double>& f) {
  f.for_each([&](cush::Block<double> b) {
    const std::vector<double> start = cush_test::initial_buffer(f.grid(), b.pos());
    for (std::size_t c = 0; c < f.components(); ++c)
      CUSH_CUDA_CHECK(cudaMemcpyAsync(b.data() + c * f.component_stride(b.pos()), start.data(), start.size() * sizeof(double),
                                      cudaMemcpyHostToDevice, b.stream()));
  });
  f.wait();
}

// Every cell of every component of this rank's blocks checked (cush_test::verify_buffer).
void verify(const cush::RankField<double>& f) {
  f.wait();
  for (std::size_t pos : f.local_blocks()) {
    const cush::Block<double> b = f.block(pos);
    std::vector<double> back(f.grid().allocated_cells(pos));
    for (std::size_t c = 0; c < f.components(); ++c) {
      CUSH_CUDA_CHECK(cudaMemcpy(back.data(), b.data() + c * f.component_stride(pos), back.size() * sizeof(double),
                                 cudaMemcpyDeviceToHost));
      SCOPED_TRACE("component " + std::to_string(c));
      cush_test::verify_buffer(f.grid(), pos, back);
    }
  }
}

std::string describe(const Decomposition& g) {
  std::string s = std::to_string(g.extent()[0]) + "x" + std::to_string(g.extent()[1]) + "x" + std::to_string(g.extent()[2]) +
                  ", " + std::to_string(g.dims()) + " axes, blocks " + std::to_string(g.blocks()[0]) + "x" +
                  std::to_string(g.blocks()[1]) + "x" + std::to_string(g.blocks()[2]) + ", depth " +
                  std::to_string(g.depth()) + ", periodic";
  for (std::size_t a = 0; a < 3; ++a) s += g.periodic(a) ? " 1" : " 0";
  return s + ", row align " + std::to_string(g.row_align());
}

// The transports to test: MPI always, CUDA IPC where the host's GPUs reach each other, NCCL
// where every device is a GPU of its own.
std::vector<RankTransport> transports(const std::vector<int>& gpus) {
  std::vector<RankTransport> out{RankTransport::mpi};
  if (cush_test::gpus_reach_each_other()) out.push_back(RankTransport::ipc);
  if (cush_test::gpus_are_distinct(gpus)) out.push_back(RankTransport::nccl);
  return out;
}

const char* name(RankTransport t) {
  switch (t) {
    case RankTransport::automatic: return "automatic";
    case RankTransport::nccl: return "nccl";
    case RankTransport::mpi: return "mpi";
    case RankTransport::ipc: return "ipc";
  }
  return "?";
}

TEST(RankFieldMpi, EveryGhostOfEveryRankAfterEachKindOfExchange) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  std::mt19937 rng(5050);  // the same draws on every rank
  for (const RankTransport transport : transports(gpus)) {
    for (int trial = 0; trial < 12; ++trial) {
      const Decomposition g = random_grid_of(rng, group.devices().size());
      const std::size_t components = 1 + static_cast<std::size_t>(trial % 2);
      SCOPED_TRACE(describe(g) + ", " + std::to_string(components) + " components, " +
                   name(transport) + ", rank " + std::to_string(group.rank()));
      cush::RankField<double> f(group, g, components, transport);
      EXPECT_EQ(f.transport(), transport);
      fill(f);
      f.exchange();
      verify(f);
      fill(f);
      f.exchange_start();
      f.exchange_finish();
      verify(f);
      // Overlapped: the update sees every block's interior and then its boundary once each.
      cush::RankField<double> counts = cush::RankField<double>::alike(f, 1);
      fill(f);
      std::size_t cells = 0;
      f.exchange_overlapped(1, [&](const cush::Block<double>&, const cush::Box& box) { cells += box.volume(); });
      verify(f);
      std::size_t owned = 0;
      for (std::size_t pos : f.local_blocks()) owned += g.owned(pos).volume();
      EXPECT_EQ(cells, owned);
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure())) << "trial " << trial;
    }
  }
}

// An overlapped exchange of one component of two (exchange_overlapped(which, ...)): component 1's
// ghosts filled everywhere, component 0's left unset, on every transport.
TEST(RankFieldMpi, OverlappedExchangeOfSelectedComponents) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  std::mt19937 rng(5252);
  cush::HaloComponents second;
  for (std::size_t axis = 0; axis < 3; ++axis) second.fill(axis, -1, {1}).fill(axis, +1, {1});
  for (const RankTransport transport : transports(gpus)) {
    for (int trial = 0; trial < 4; ++trial) {
      const Decomposition g = random_grid_of(rng, group.devices().size());
      SCOPED_TRACE(describe(g) + ", " + name(transport) + ", rank " + std::to_string(group.rank()));
      cush::RankField<double> f(group, g, 2, transport);
      fill(f);
      std::size_t cells = 0;
      f.exchange_overlapped(second, 1, [&](const cush::Block<double>&, const cush::Box& box) { cells += box.volume(); });
      f.wait();
      std::size_t owned = 0;
      for (std::size_t pos : f.local_blocks()) {
        owned += g.owned(pos).volume();
        const cush::Block<double> b = f.block(pos);
        std::vector<double> back(g.allocated_cells(pos));
        CUSH_CUDA_CHECK(cudaMemcpy(back.data(), b.data(1), back.size() * sizeof(double), cudaMemcpyDeviceToHost));
        cush_test::verify_buffer(g, pos, back);  // component 1: every ghost filled
        CUSH_CUDA_CHECK(cudaMemcpy(back.data(), b.data(0), back.size() * sizeof(double), cudaMemcpyDeviceToHost));
        EXPECT_EQ(back, cush_test::initial_buffer(g, pos)) << "component 0 changed";
      }
      EXPECT_EQ(cells, owned);
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure())) << "trial " << trial;
    }
  }
}

// Automatic: CUDA IPC between ranks of one host whose GPUs reach each other (every pair here),
// else NCCL where every device is a GPU of its own, else MPI; NCCL refused on a shared GPU.
TEST(RankFieldMpi, AutomaticTakesIpcOnOneHostElseNccl) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  const bool one_host = group.hosts().size() == 1;
  const cush::RankField<float> f(group, Extent3{33, 17, 9}, 3);
  const RankTransport expected = one_host && cush_test::gpus_reach_each_other() ? RankTransport::ipc
                                 : cush_test::gpus_are_distinct(gpus)          ? RankTransport::nccl
                                                                                : RankTransport::mpi;
  EXPECT_EQ(name(f.transport()), std::string(name(expected)));
  EXPECT_EQ(name(cush::RankField<float>::alike(f).transport()), std::string(name(expected)));
  if (!cush_test::gpus_are_distinct(gpus))
    cush_test::refused([&] { cush::RankField<float> g(group, Extent3{33, 17, 9}, 3, {}, 1, RankTransport::nccl); },
                       "are one GPU");
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

// Over CUDA IPC, the two orders the interprocess events keep, under delays: each round, every
// block's stream first spins for a random time and then copies its buffer to the host (a read of
// the ghosts, enqueued before the exchange); then the exchange. The copy must see the ghosts still
// unset (no peer wrote before the receiver's earlier work was done: "free") and the field after
// wait() every ghost filled (the receiver waited for the peers' copies: "done"). Two fields made
// alike, exchanges of selected components (each builds and maps its own program), every form of
// exchange, and the fields destroyed in the same order on every rank.
TEST(RankFieldMpi, IpcKeepsOrderUnderDelaysAndTearsDown) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  if (!cush_test::gpus_reach_each_other()) GTEST_SKIP() << "needs GPUs with peer access both ways";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  std::mt19937 rng(5454);  // the same draws on every rank
  std::mt19937 delays(static_cast<unsigned>(77 + group.rank()));  // each rank its own
  cush::HaloComponents first;
  for (std::size_t axis = 0; axis < 3; ++axis) first.fill(axis, -1, {0}).fill(axis, +1, {0});
  for (int trial = 0; trial < 3; ++trial) {
    const Decomposition g = random_grid_of(rng, group.devices().size());
    SCOPED_TRACE(describe(g) + ", rank " + std::to_string(group.rank()));
    auto f = std::make_unique<cush::RankField<double>>(group, g, 2, RankTransport::ipc);
    auto h = std::make_unique<cush::RankField<double>>(cush::RankField<double>::alike(*f));
    EXPECT_EQ(name(h->transport()), std::string("ipc"));
    for (int round = 0; round < 6; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      fill(*f);
      fill(*h);
      std::vector<cush::PinnedBuffer<double>> before;
      for (const cush::RankField<double>* x : {f.get(), h.get()})
        x->for_each([&](cush::Block<double> b) {
          cush_test::spin(b.stream(), std::uniform_real_distribution<double>(0.0, 4.0)(delays));
          before.emplace_back(x->grid().allocated_cells(b.pos()));
          CUSH_CUDA_CHECK(cudaMemcpyAsync(before.back().data(), b.data(), before.back().size() * sizeof(double),
                                          cudaMemcpyDeviceToHost, b.stream()));
        });
      bool f_second = true, h_second = true;  // whether component 1 is exchanged
      if (round % 3 == 0) {
        f->exchange();
        h->exchange(first);
        h_second = false;
      } else if (round % 3 == 1) {
        f->exchange_start(first);
        h->exchange_start();
        h->exchange_finish();
        f->exchange_finish();
        f_second = false;
      } else {
        f->exchange_overlapped(1, [](const cush::Block<double>&, const cush::Box&) {});
        h->exchange();
      }
      f->wait();
      h->wait();
      std::size_t k = 0;
      for (const cush::RankField<double>* x : {f.get(), h.get()})
        for (std::size_t pos : x->local_blocks()) {
          const std::vector<double> start = cush_test::initial_buffer(g, pos);
          EXPECT_TRUE(std::equal(start.begin(), start.end(), before[k++].data())) << "a ghost was written too early";
          const cush::Block<double> b = x->block(pos);
          std::vector<double> back(g.allocated_cells(pos));
          for (std::size_t c = 0; c < 2; ++c) {
            CUSH_CUDA_CHECK(cudaMemcpy(back.data(), b.data(c), back.size() * sizeof(double), cudaMemcpyDeviceToHost));
            SCOPED_TRACE("component " + std::to_string(c));
            if (c == 1 && !(x == f.get() ? f_second : h_second)) {
              EXPECT_EQ(back, start) << "component 1 changed";
            } else {
              cush_test::verify_buffer(g, pos, back);
            }
          }
        }
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure())) << "trial " << trial;
    }
    f.reset();  // the same order on every rank
    h.reset();
  }
}

TEST(RankFieldMpi, ScatterFromEveryRootGatherToAnother) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  std::mt19937 rng(5151);
  for (int trial = 0; trial < 4; ++trial) {
    const Decomposition g = random_grid_of(rng, group.devices().size());
    const std::size_t components = 1 + static_cast<std::size_t>(trial % 3);
    const std::size_t cells = g.extent()[0] * g.extent()[1] * g.extent()[2] * components;
    std::vector<double> data(cells);
    for (auto& x : data) x = std::uniform_real_distribution<double>(-1, 1)(rng);
    cush::RankField<double> f(group, g, components);
    for (int root = 0; root < group.size(); ++root) {
      SCOPED_TRACE(describe(g) + ", root " + std::to_string(root) + ", rank " + std::to_string(group.rank()));
      const int to = (root + 1) % group.size();
      f.scatter(group.rank() == root ? data.data() : nullptr, root);
      std::vector<double> back(group.rank() == to ? cells : 0, 0.0);
      f.gather(group.rank() == to ? back.data() : nullptr, to);
      f.wait();
      if (group.rank() == to) EXPECT_EQ(back, data);
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
    }
  }
}

// Rank 0 brings no GPU: it holds no block, scatters and gathers as the root, and takes part in
// every exchange (which moves nothing of its own), over every transport.
TEST(RankFieldMpi, ARankWithoutDevicesTakesPartAsRoot) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const cush::ProcessGroup group(MPI_COMM_WORLD, rank == 0 ? std::vector<int>{} : gpus);
  std::mt19937 rng(5353);
  for (const RankTransport transport : transports(gpus)) {
    const Decomposition g = random_grid_of(rng, group.devices().size());
    SCOPED_TRACE(describe(g) + ", " + name(transport) + ", rank " + std::to_string(rank));
    cush::RankField<double> f(group, g, 1, transport);
    EXPECT_EQ(f.local_blocks().empty(), rank == 0);
    fill(f);
    f.exchange();
    verify(f);
    const std::size_t cells = g.extent()[0] * g.extent()[1] * g.extent()[2];
    std::vector<double> data(cells);
    for (auto& x : data) x = std::uniform_real_distribution<double>(-1, 1)(rng);
    f.scatter(rank == 0 ? data.data() : nullptr, 0);
    std::vector<double> back(rank == 0 ? cells : 0);
    f.gather(rank == 0 ? back.data() : nullptr, 0);
    f.wait();
    if (rank == 0) EXPECT_EQ(back, data);
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
  }
}

TEST(RankFieldMpi, OtherRanksBlocksAndMisuseAreRefused) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  cush::RankField<int> f(group, Extent3{20, 12, 1}, 2);
  for (std::size_t pos = 0; pos < f.grid().size(); ++pos) {
    EXPECT_EQ(f.holds(pos), group.devices()[pos].rank == group.rank());
    if (!f.holds(pos)) cush_test::refused([&] { (void)f.block(pos); }, "is not one of rank");
  }
  f.exchange_start();
  cush_test::refused([&] { f.exchange(); }, "an exchange is in flight");
  f.exchange_finish();
  cush_test::refused([&] { f.exchange_finish(); }, "no exchange is in flight");
  cush_test::refused([&] { f.scatter(nullptr, 0); }, "the root's host buffer is null");
  cush_test::refused([&] { f.gather(nullptr, group.size()); }, "is not a rank of the group");
  cush::RankField<int> moved = std::move(f);
  cush_test::refused([&] { (void)f.grid(); }, "moved from");
  EXPECT_EQ(moved.grid().size(), group.devices().size());
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

// Host checks (run everywhere): ranks that pass other grids, or a grid of another block count
// than the group's devices, are refused on every rank, before anything is allocated.
TEST(RankFieldMpi, BadGridsAreRefusedOnEveryRank) {
  const std::vector<int> gpus = cush_test::my_gpus();
  const cush::ProcessGroup group(MPI_COMM_WORLD, cush_test::every_rank_has_a_gpu(gpus) ? gpus : std::vector<int>{});
  const std::size_t blocks = group.devices().size();
  cush_test::refused(
      [&] { cush::RankField<float> f(group, Decomposition(Extent3{40, 30, 1}, 2, blocks + 1), 1); },
      "blocks for a group of " + std::to_string(blocks) + " devices");
  // The ranks check together first, so these are refused with or without devices.
  const std::size_t n = std::max<std::size_t>(blocks, 1);
  cush_test::refused(
      [&] { cush::RankField<float> f(group, Decomposition(Extent3{group.rank() == 0 ? 40U : 41U, 30, 1}, 2, n)); },
      "the ranks disagree on the grid");
  cush_test::refused(
      [&] { cush::RankField<float> f(group, Decomposition(Extent3{40, 30, 1}, 2, n), group.rank() == 0 ? 1U : 2U); },
      "the ranks disagree on the components");
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
