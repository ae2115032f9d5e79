// A plan's layout over the GPUs of every rank (mpi/rank_layout.hpp), under mpiexec with 2 and 4
// ranks on host data: each rank describes a few made-up devices of its own (random counts, memory
// and bandwidth, the same draws on every rank), and the layout every rank computes must equal the
// one-process layout over all ranks' devices, with each position's rank and this rank's
// positions. Ranks that disagree, and a distribution that refuses on some ranks only, fail on
// every rank.

#include <gtest/gtest.h>
#include <mpi.h>

#include <random>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "cush/process_group.hpp"
#include "mpi/rank_layout.hpp"
#include "mpi_test.hpp"

namespace {

// Made-up devices of every rank, by rank (rank 0 may have none).
std::vector<std::vector<cush::DeviceInfo>> made_up_devices(std::mt19937_64& rng, int ranks) {
  std::vector<std::vector<cush::DeviceInfo>> all(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const int count = static_cast<int>(rng() % 4) + (r == 0 ? 0 : 1);
    for (int k = 0; k < count; ++k) {
      cush::DeviceInfo d;
      d.id = d.physical_id = k;
      d.name = "GPU " + std::to_string(r) + "." + std::to_string(k);
      d.pci_bus_id = "0000:" + std::to_string(10 + k) + ":00.0";
      d.compute_major = 9;
      d.multiprocessors = 100 + static_cast<int>(rng() % 40);
      d.total_memory = (std::size_t{16} + rng() % 128) << 30;
      d.memory_bandwidth = 1e12 * static_cast<double>(1 + rng() % 5);
      all[static_cast<std::size_t>(r)].push_back(d);
    }
  }
  return all;
}

TEST(RankLayoutMpi, EveryRankGetsTheLayoutOfAllRanksDevices) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  std::mt19937_64 rng(5151);  // the same draws on every rank
  for (int trial = 0; trial < 60; ++trial) {
    const auto devices = made_up_devices(rng, group.size());
    std::vector<cush::DeviceInfo> flat;
    std::vector<int> pos_rank;
    for (int r = 0; r < group.size(); ++r)
      for (const cush::DeviceInfo& d : devices[static_cast<std::size_t>(r)]) {
        flat.push_back(d);
        pos_rank.push_back(r);
      }
    std::vector<double> weights;
    for (std::size_t k = 0; k < flat.size(); ++k) weights.push_back(static_cast<double>(1 + rng() % 7));
    const std::size_t n = 1 + rng() % 100000;
    for (const cush::Distribution& dist : {cush::Distribution::uniform(), cush::Distribution::memory_capacity(),
                                           cush::Distribution::memory_bandwidth(), cush::Distribution::weighted(weights),
                                           cush::Distribution::replicated()}) {
      SCOPED_TRACE(dist.name() + ", n " + std::to_string(n) + ", trial " + std::to_string(trial) + ", rank " +
                   std::to_string(group.rank()));
      const cush::detail::RankLayout got =
          cush::detail::rank_layout(group, n, dist, devices[static_cast<std::size_t>(group.rank())]);
      const cush::Layout want = cush::Layout::make(n, dist, flat);
      ASSERT_EQ(got.layout.devices(), want.devices());
      EXPECT_EQ(got.layout.is_replicated(), want.is_replicated());
      for (std::size_t p = 0; p < want.devices(); ++p) {
        EXPECT_EQ(got.layout.segment(p).offset, want.segment(p).offset) << "position " << p;
        EXPECT_EQ(got.layout.segment(p).count, want.segment(p).count) << "position " << p;
      }
      EXPECT_EQ(got.pos_rank, pos_rank);
      std::vector<std::size_t> local;
      for (std::size_t p = 0; p < pos_rank.size(); ++p)
        if (pos_rank[p] == group.rank()) local.push_back(p);
      EXPECT_EQ(got.local, local);
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
    }
  }
}

// Calls rank_layout and expects InvalidArgument whose message contains `text`, on every rank.
void expect_refused(const cush::ProcessGroup& group, std::size_t n, const cush::Distribution& dist,
                    const std::vector<cush::DeviceInfo>& mine, const std::string& text) {
  try {
    (void)cush::detail::rank_layout(group, n, dist, mine);
    ADD_FAILURE() << "no error on rank " << group.rank() << " (expected: " << text << ")";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), text)) << e.what();
  }
}

TEST(RankLayoutMpi, RanksThatDisagreeOrARefusalOnOneRankFailEverywhere) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  std::mt19937_64 rng(5252);
  const auto devices = made_up_devices(rng, group.size());
  const std::vector<cush::DeviceInfo>& mine = devices[static_cast<std::size_t>(group.rank())];
  const bool last = group.rank() == group.size() - 1;
  // Another n, another distribution on the last rank.
  expect_refused(group, last ? 1001 : 1000, cush::Distribution::uniform(), mine, "the ranks disagree on the number of elements");
  expect_refused(group, 1000, last ? cush::Distribution::memory_capacity() : cush::Distribution::uniform(), mine,
                 "the ranks disagree on the distribution");
  // A custom rule that throws on rank 1 only: every rank hears it.
  const cush::Distribution throwing = cush::Distribution::custom(
      [&](std::size_t n, std::span<const cush::DeviceInfo> d) -> std::vector<std::size_t> {
        if (group.rank() == 1) throw cush::InvalidArgument("test rule", "devices", "refused here");
        std::vector<std::size_t> c(d.size(), 0);
        c.front() = n;
        return c;
      });
  expect_refused(group, 1000, throwing, mine, "rank 1: ");
  // A custom rule that depends on the rank: the layouts differ.
  const cush::Distribution by_rank = cush::Distribution::custom(
      [&](std::size_t n, std::span<const cush::DeviceInfo> d) -> std::vector<std::size_t> {
        std::vector<std::size_t> c(d.size(), 0);
        c[static_cast<std::size_t>(group.rank()) % d.size()] = n;
        return c;
      });
  expect_refused(group, 1000, by_rank, mine, "the ranks disagree on the layout");
  // Weights of the wrong count and no device anywhere: refused the same way on every rank.
  expect_refused(group, 1000, cush::Distribution::weighted({1.0}), mine, "rank 0: ");
  expect_refused(group, 1000, cush::Distribution::uniform(), {}, "rank 0: ");
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
