// Plans over ranks (cush/rank_plan.hpp) under mpiexec with 2 and 4 ranks: two GPUs per rank where
// the host has enough (2 ranks on 4 GPUs), else one (4 ranks on 4 GPUs; ranks share a GPU on a
// host with fewer). With GPUs: random data scattered from every root and
// gathered to another, every element compared, for every distribution, odd sizes, and a rank
// without devices; bad input refused on every rank. Without a GPU on some rank the GPU tests say
// SKIPPED; a plan over a group without any device is refused on every rank (a host check).

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/process_group.hpp"
#include "cush/rank_plan.hpp"
#include "cush/virtual_gpus.hpp"
#include "mpi_gpus.hpp"
#include "mpi_test.hpp"

namespace {


// This rank's devices for a group where rank 0 brings none.
std::vector<int> group_devices(const std::vector<int>& gpus) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0 ? std::vector<int>{} : gpus;
}


std::vector<std::int64_t> random_values(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(rng());
  return v;
}

TEST(RankPlanMpi, ScatterThenGatherRoundTripsFromEveryRootForEveryDistribution) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  std::mt19937_64 rng(6060);  // the same draws on every rank
  for (std::size_t n : {std::size_t{1}, std::size_t{1001}, (std::size_t{1} << 20) + 3}) {
    std::vector<double> weights;
    for (std::size_t d = 0; d < group.devices().size(); ++d) weights.push_back(static_cast<double>(1 + rng() % 5));  // one per device of every rank
    for (const cush::Distribution& dist : {cush::Distribution::uniform(), cush::Distribution::weighted(weights),
                                           cush::Distribution::memory_capacity(), cush::Distribution::replicated()}) {
      const std::vector<std::int64_t> data = random_values(rng, n);
      for (int root = 0; root < group.size(); ++root) {
        SCOPED_TRACE(dist.name() + ", n " + std::to_string(n) + ", root " + std::to_string(root) + ", rank " +
                     std::to_string(group.rank()));
        cush::RankPlan<std::int64_t> plan(group, n, dist);
        // The ranks' parts follow each other in rank order and cover the extent (replicated:
        // every rank the whole of it).
        std::size_t next = 0;
        for (int r = 0; r < group.size(); ++r) {
          const cush::Range part = plan.range_of(r);
          if (dist.is_replicated()) {
            EXPECT_EQ(part.offset, 0U);
            EXPECT_EQ(part.count, n);
          } else if (part.count > 0) {
            EXPECT_EQ(part.offset, next) << "rank " << r;
            next = part.offset + part.count;
          }
        }
        if (!dist.is_replicated()) EXPECT_EQ(next, n);
        plan.scatter(group.rank() == root ? data.data() : nullptr, root);
        plan.wait();
        // This rank's segments hold its part of the extent (none where the distribution gives
        // this rank no element: n = 1 over several ranks). No assertion may end the test on one
        // rank before the collectives below: the others would wait for it.
        const cush::Range mine = plan.local_range();
        EXPECT_EQ(plan.has_local(), mine.count > 0);
        if (plan.has_local()) {
          std::vector<std::int64_t> local(mine.count);
          plan.local().gather(local.data());
          plan.local().wait();
          EXPECT_TRUE(std::equal(local.begin(), local.end(), data.begin() + static_cast<std::ptrdiff_t>(mine.offset)))
              << "this rank's part";
        }
        // Gathered to the next rank.
        const int to = (root + 1) % group.size();
        std::vector<std::int64_t> back(group.rank() == to ? n : 0);
        plan.gather(group.rank() == to ? back.data() : nullptr, to);
        plan.wait();
        if (group.rank() == to) EXPECT_EQ(back, data);
        // Each rank's own part, in and out without messages.
        std::vector<std::int64_t> own(data.begin() + static_cast<std::ptrdiff_t>(mine.offset),
                                      data.begin() + static_cast<std::ptrdiff_t>(mine.offset + mine.count));
        for (auto& v : own) v = ~v;
        plan.scatter_own(own.data());
        std::vector<std::int64_t> own_back(mine.count);
        plan.gather_own(own_back.data());
        plan.wait();
        EXPECT_EQ(own_back, own) << "this rank's own part";
        ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
      }
    }
  }
}

TEST(RankPlanMpi, ARankWithoutDevicesTakesPartAsRoot) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  // Rank 0 brings no GPU: it holds nothing, and scatters and gathers as the root.
  const cush::ProcessGroup group(MPI_COMM_WORLD, group_devices(gpus));
  std::mt19937_64 rng(6161);
  const std::size_t n = 77777;
  const std::vector<std::int64_t> data = random_values(rng, n);
  cush::RankPlan<std::int64_t> plan(group, n);
  EXPECT_EQ(plan.has_local(), group.rank() != 0);
  EXPECT_EQ(plan.range_of(0).count, 0U);
  plan.scatter(group.rank() == 0 ? data.data() : nullptr, 0);
  std::vector<std::int64_t> back(group.rank() == 0 ? n : 0);
  plan.gather(group.rank() == 0 ? back.data() : nullptr, 0);
  plan.wait();
  if (group.rank() == 0) EXPECT_EQ(back, data);
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

TEST(RankPlanMpi, BadInputIsRefusedOnEveryRank) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  cush::RankPlan<float> plan(group, 1000);
  std::vector<float> host(1000, 1.0f);
  cush_test::refused([&] { plan.scatter(host.data(), group.size()); }, "is not a rank of the group");
  cush_test::refused([&] { plan.scatter(group.rank() == 0 ? nullptr : host.data(), 0); }, "the root's host buffer is null");
  cush_test::refused([&] { plan.gather(host.data(), group.rank() == 0 ? 1 : 0); }, "the ranks disagree on the root");
  // A moved-from plan refuses, on every rank alike (each rank moved its own).
  cush::RankPlan<float> moved = std::move(plan);
  EXPECT_EQ(plan.size(), 0U);
  cush_test::refused([&] { plan.scatter(host.data(), 0); }, "a moved-from plan over ranks");
  EXPECT_EQ(moved.size(), 1000U);
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}


// Every replica of this rank's part of `plan`, copied to the host (one vector per device).
template <class T>
std::vector<std::vector<T>> replicas_of(cush::RankPlan<T>& plan) {
  std::vector<std::vector<T>> out;
  plan.wait();
  plan.local().for_each([&](cush::Segment<T> s) {
    out.emplace_back(s.size());
    CUSH_CUDA_CHECK(cudaMemcpyAsync(out.back().data(), s.data(), s.size() * sizeof(T), cudaMemcpyDeviceToHost, s.stream()));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  });
  return out;
}

// Rank r's values (the same draws on every rank).
std::vector<std::int64_t> values_of_rank(int r, std::size_t n) {
  std::mt19937_64 rng(7000 + static_cast<unsigned>(r));
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() % 1000003);
  return v;
}

TEST(RankPlanMpi, AllReduceOverRanksCombinesEveryReplicaOfEveryRank) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  if (!cush_test::gpus_are_distinct(gpus)) GTEST_SKIP() << "NCCL needs a GPU of its own for each device (ranks share GPUs here)";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  for (std::size_t n : {std::size_t{1}, std::size_t{1001}, (std::size_t{1} << 20) + 3}) {
    SCOPED_TRACE("n " + std::to_string(n) + ", rank " + std::to_string(group.rank()));
    cush::RankPlan<std::int64_t> plan(group, n, cush::Distribution::replicated());
    const std::vector<std::int64_t> mine = values_of_rank(group.rank(), n);
    plan.scatter_own(mine.data());  // every replica of this rank
    plan.all_reduce();
    // The sum over every replica of every rank: each rank's values once per device it has.
    std::vector<std::int64_t> expected(n, 0);
    for (int r = 0; r < group.size(); ++r) {
      const std::vector<std::int64_t> v = values_of_rank(r, n);
      const auto copies = static_cast<std::int64_t>(group.devices_of(r).size());
      for (std::size_t i = 0; i < n; ++i) expected[i] += copies * v[i];
    }
    for (const auto& replica : replicas_of(plan)) EXPECT_EQ(replica, expected);
    // The largest, in doubles.
    cush::RankPlan<double> d(group, n, cush::Distribution::replicated());
    std::vector<double> mine_d(mine.begin(), mine.end());
    d.scatter_own(mine_d.data());
    d.all_reduce(cush::ReduceOp::max);
    std::vector<double> largest(n, 0.0);
    for (int r = 0; r < group.size(); ++r) {
      const std::vector<std::int64_t> v = values_of_rank(r, n);
      for (std::size_t i = 0; i < n; ++i) largest[i] = std::max(largest[i], static_cast<double>(v[i]));
    }
    for (const auto& replica : replicas_of(d)) EXPECT_EQ(replica, largest);
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
  }
}

TEST(RankPlanMpi, BroadcastOverRanksFromEveryRoot) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  if (!cush_test::gpus_are_distinct(gpus)) GTEST_SKIP() << "NCCL needs a GPU of its own for each device (ranks share GPUs here)";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  const std::size_t n = 77777;
  cush::RankPlan<std::int64_t> plan(group, n, cush::Distribution::replicated());
  for (int root = 0; root < group.size(); ++root) {
    SCOPED_TRACE("root " + std::to_string(root) + ", rank " + std::to_string(group.rank()));
    const std::vector<std::int64_t> mine = values_of_rank(group.rank() + 10 * root, n);
    plan.scatter_own(mine.data());
    plan.broadcast(root);
    const std::vector<std::int64_t> expected = values_of_rank(root + 10 * root, n);
    for (const auto& replica : replicas_of(plan)) EXPECT_EQ(replica, expected);
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
  }
}

TEST(RankPlanMpi, ReduceOverRanksIntoEveryRootLeavesTheOtherReplicas) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  if (!cush_test::gpus_are_distinct(gpus)) GTEST_SKIP() << "NCCL needs a GPU of its own for each device (ranks share GPUs here)";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  const std::size_t n = 4099;
  cush::RankPlan<std::int64_t> plan(group, n, cush::Distribution::replicated());
  for (int root = 0; root < group.size(); ++root) {
    SCOPED_TRACE("root " + std::to_string(root) + ", rank " + std::to_string(group.rank()));
    const std::vector<std::int64_t> mine = values_of_rank(group.rank() + 20 * root, n);
    plan.scatter_own(mine.data());
    plan.reduce(root, cush::ReduceOp::min);
    std::vector<std::int64_t> smallest = values_of_rank(20 * root, n);
    for (int r = 1; r < group.size(); ++r) {
      const std::vector<std::int64_t> v = values_of_rank(r + 20 * root, n);
      for (std::size_t i = 0; i < n; ++i) smallest[i] = std::min(smallest[i], v[i]);
    }
    const auto replicas = replicas_of(plan);
    for (std::size_t k = 0; k < replicas.size(); ++k)
      EXPECT_EQ(replicas[k], group.rank() == root && k == 0 ? smallest : mine) << "replica " << k;
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
  }
}

TEST(RankPlanMpi, AllGatherOverRanksGivesEveryReplicaTheWholeExtent) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  if (!cush_test::gpus_are_distinct(gpus)) GTEST_SKIP() << "NCCL needs a GPU of its own for each device (ranks share GPUs here)";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  std::mt19937_64 rng(6262);  // the same draws on every rank
  for (std::size_t n : {std::size_t{3}, std::size_t{100003}}) {
    std::vector<double> weights;
    for (std::size_t d = 0; d < group.devices().size(); ++d) weights.push_back(static_cast<double>(rng() % 4));  // zeros too
    weights.front() += 1.0;
    for (const cush::Distribution& dist : {cush::Distribution::uniform(), cush::Distribution::weighted(weights)}) {
      SCOPED_TRACE(dist.name() + ", n " + std::to_string(n) + ", rank " + std::to_string(group.rank()));
      const std::vector<std::int64_t> data = random_values(rng, n);
      cush::RankPlan<std::int64_t> parts(group, n, dist);
      parts.scatter(group.rank() == 0 ? data.data() : nullptr, 0);
      cush::RankPlan<std::int64_t> whole(group, n, cush::Distribution::replicated());
      whole.all_gather(parts);
      for (const auto& replica : replicas_of(whole)) EXPECT_EQ(replica, data);
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
    }
  }
}

// copy_from between every pair of distributions (a redistribution, an all-gather into a
// replicated plan, a scatter out of one), odd sizes: every element of the destination checked
// (gathered to a root, or every replica of every rank).
TEST(RankPlanMpi, CopyFromEveryDistributionToEvery) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  if (!cush_test::gpus_are_distinct(gpus)) GTEST_SKIP() << "NCCL needs a GPU of its own for each device (ranks share GPUs here)";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  std::mt19937_64 rng(6262);  // the same draws on every rank
  std::vector<double> weights;
  for (std::size_t d = 0; d < group.devices().size(); ++d) weights.push_back(static_cast<double>(rng() % 4));  // zeros too
  weights.back() += 1;
  const std::vector<cush::Distribution> dists{cush::Distribution::uniform(), cush::Distribution::weighted(weights),
                                              cush::Distribution::replicated()};
  for (std::size_t n : {std::size_t{1001}, (std::size_t{1} << 20) + 3}) {
    const std::vector<std::int64_t> data = random_values(rng, n);
    for (const cush::Distribution& from : dists)
      for (const cush::Distribution& to : dists) {
        SCOPED_TRACE(from.name() + " -> " + to.name() + ", n " + std::to_string(n) + ", rank " + std::to_string(group.rank()));
        cush::RankPlan<std::int64_t> src(group, n, from), dst(group, n, to);
        src.scatter(group.rank() == 0 ? data.data() : nullptr, 0);
        dst.copy_from(src);
        if (dst.layout().is_replicated()) {
          for (const auto& replica : replicas_of(dst)) EXPECT_EQ(replica, data);
        } else {
          const int root = group.size() - 1;
          std::vector<std::int64_t> back(group.rank() == root ? n : 0);
          dst.gather(group.rank() == root ? back.data() : nullptr, root);
          dst.wait();
          if (group.rank() == root) EXPECT_EQ(back, data);
        }
        ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
      }
  }
}

// all_to_all_from between two uniform plans of D x D pieces (D devices): destination segment j
// holds piece j of every source segment, in order of the segments.
TEST(RankPlanMpi, AllToAllFromIsTheBlockTransposeOfRowBlocks) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  if (!cush_test::gpus_are_distinct(gpus)) GTEST_SKIP() << "NCCL needs a GPU of its own for each device (ranks share GPUs here)";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  const std::size_t d = group.devices().size();
  std::mt19937_64 rng(6363);
  for (std::size_t piece : {std::size_t{1}, std::size_t{777}, std::size_t{65537}}) {
    const std::size_t n = d * d * piece;
    const std::vector<std::int64_t> data = random_values(rng, n);
    std::vector<std::int64_t> want(n);
    for (std::size_t j = 0; j < d; ++j)
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t m = 0; m < piece; ++m) want[j * d * piece + i * piece + m] = data[i * d * piece + j * piece + m];
    SCOPED_TRACE("piece " + std::to_string(piece) + ", rank " + std::to_string(group.rank()));
    cush::RankPlan<std::int64_t> rows(group, n), cols(group, n);
    rows.scatter(group.rank() == 0 ? data.data() : nullptr, 0);
    cols.all_to_all_from(rows);
    std::vector<std::int64_t> back(group.rank() == 0 ? n : 0);
    cols.gather(group.rank() == 0 ? back.data() : nullptr, 0);
    cols.wait();
    if (group.rank() == 0) EXPECT_EQ(back, want);
    ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
  }
}

TEST(RankPlanMpi, OperationsOverRanksRefuseWhatNcclCannotRunOnEveryRank) {
  const std::vector<int> gpus = cush_test::my_gpus();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  cush::RankPlan<float> split(group, 1000);  // uniform: not replicated
  cush_test::refused([&] { split.all_reduce(); }, "needs a replicated plan");
  cush_test::refused([&] { split.broadcast(0); }, "needs a replicated plan");
  cush_test::refused([&] { split.reduce(0); }, "needs a replicated plan");
  cush::RankPlan<float> replicated(group, 1000, cush::Distribution::replicated());
  cush_test::refused([&] { replicated.broadcast(group.size()); }, "is not a rank with devices");
  cush_test::refused([&] { replicated.reduce(-1); }, "is not a rank with devices");
  cush_test::refused([&] { split.all_gather(split); }, "gathers into a replicated plan");
  cush_test::refused([&] { replicated.all_gather(replicated); }, "every rank has it all already");
  cush::RankPlan<float> longer(group, 1001);
  cush_test::refused([&] { replicated.all_gather(longer); }, "1001 elements, this plan 1000");
  cush_test::refused([&] { split.copy_from(longer); }, "1001 elements, this plan 1000");
  cush_test::refused([&] { split.copy_from(split); }, "is this plan");
  cush_test::refused([&] { split.all_to_all_from(replicated); }, "two plans that are not replicated");
  if (!cush_test::gpus_are_distinct(gpus)) cush_test::refused([&] { replicated.all_reduce(); }, "are one GPU");
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

// Host check (runs everywhere): no device on any rank is refused on every rank.
TEST(RankPlanMpi, AGroupWithoutDevicesIsRefusedOnEveryRank) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  try {
    cush::RankPlan<float> plan(group, 100);
    ADD_FAILURE() << "no error";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), "rank 0: ")) << e.what();
  }
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
