// A plan over a group of one rank is a single-process plan (cush/rank_plan.hpp): under mpiexec
// with one rank holding every GPU it sees (in a scrambled order: {3, 1, 0, 2} on four), a
// RankPlan and a Plan over the same devices and distribution have the same layout, and every
// operation leaves every segment of the one equal, element for element, to the same segment of the
// other: scatter and gather, copy_from against cush::copy for every pair of distributions,
// all_to_all_from against cush::all_to_all, and (where every device is a GPU of its own, which
// NCCL needs) all_reduce, broadcast, reduce and all_gather against the Plan operations. Random
// data, odd sizes. Without a GPU the tests say SKIPPED.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cush/device_ops.hpp"
#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/plan.hpp"
#include "cush/process_group.hpp"
#include "cush/rank_plan.hpp"
#include "mpi_gpus.hpp"
#include "mpi_test.hpp"

namespace {

// Every GPU this process sees, scrambled: {3, 1, 0, 2} on four, else in reverse order.
std::vector<int> every_gpu() {
  const int available = cush::DeviceSet::available();
  if (available == 4) return {3, 1, 0, 2};
  std::vector<int> gpus;
  for (int d = available - 1; d >= 0; --d) gpus.push_back(d);
  return gpus;
}

#define REQUIRE_ONE_RANK_WITH_A_GPU(gpus)                                             \
  do {                                                                                \
    int ranks_ = 0;                                                                   \
    MPI_Comm_size(MPI_COMM_WORLD, &ranks_);                                           \
    if (ranks_ != 1) GTEST_SKIP() << "runs with one rank (mpiexec -n 1)";            \
    if ((gpus).empty()) GTEST_SKIP() << "needs a GPU";                                \
  } while (false)

template <class T>
std::vector<std::vector<T>> segments_of(const cush::Plan<T>& plan) {
  plan.wait();
  std::vector<std::vector<T>> out;
  for (std::size_t pos = 0; pos < plan.devices().size(); ++pos) {
    const cush::Segment<T> s = plan.segment(pos);
    out.emplace_back(s.size());
    CUSH_CUDA_CHECK(cudaMemcpyAsync(out.back().data(), s.data(), s.bytes(), cudaMemcpyDeviceToHost, s.stream()));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  }
  return out;
}

template <class T>
std::vector<std::vector<T>> segments_of(cush::RankPlan<T>& plan) {
  return segments_of(plan.local());
}

// `values` into segment `s`, on its stream, done on return. (A cudaMemcpy from pageable memory may
// return before its copy has landed, and the plan's streams do not wait for the default stream:
// a read on them could see the memory before the copy.)
void put(const cush::Segment<std::int64_t>& s, const std::vector<std::int64_t>& values) {
  CUSH_CUDA_CHECK(cudaMemcpyAsync(s.data(), values.data(), s.bytes(), cudaMemcpyHostToDevice, s.stream()));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
}

// The same layout: segment by segment, the same device, offset and size.
template <class T>
void expect_same_layout(cush::RankPlan<T>& ranked, const cush::Plan<T>& plan) {
  ASSERT_TRUE(ranked.has_local());
  const cush::Plan<T>& local = ranked.local();
  ASSERT_EQ(local.devices().size(), plan.devices().size());
  EXPECT_EQ(ranked.local_range().offset, 0U);
  EXPECT_EQ(ranked.local_range().count, plan.size());
  for (std::size_t pos = 0; pos < plan.devices().size(); ++pos) {
    EXPECT_EQ(local.segment(pos).device(), plan.segment(pos).device()) << "segment " << pos;
    EXPECT_EQ(local.segment(pos).offset(), plan.segment(pos).offset()) << "segment " << pos;
    EXPECT_EQ(local.segment(pos).size(), plan.segment(pos).size()) << "segment " << pos;
  }
}

std::vector<std::int64_t> random_values(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() % 1000003);  // sums of a few stay exact
  return v;
}

std::vector<cush::Distribution> distributions(std::size_t devices, std::mt19937_64& rng) {
  std::vector<double> weights;
  for (std::size_t d = 0; d < devices; ++d) weights.push_back(static_cast<double>(rng() % 4));  // zeros too
  weights.back() += 1;
  return {cush::Distribution::uniform(), cush::Distribution::weighted(weights), cush::Distribution::replicated()};
}

TEST(OneRankPlan, LayoutScatterGatherAndCopiesEqualThePlans) {
  const std::vector<int> gpus = every_gpu();
  REQUIRE_ONE_RANK_WITH_A_GPU(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  const cush::DeviceSet devices(gpus);
  std::mt19937_64 rng(8080);
  const std::vector<cush::Distribution> dists = distributions(gpus.size(), rng);
  for (std::size_t n : {std::size_t{1001}, (std::size_t{1} << 20) + 3}) {
    const std::vector<std::int64_t> data = random_values(rng, n);
    for (const cush::Distribution& from : dists) {
      cush::RankPlan<std::int64_t> ranked_src(group, n, from);
      cush::Plan<std::int64_t> src(devices, n, from);
      SCOPED_TRACE(from.name() + ", n " + std::to_string(n));
      expect_same_layout(ranked_src, src);
      ranked_src.scatter(data.data(), 0);
      src.scatter(data.data());
      EXPECT_EQ(segments_of(ranked_src), segments_of(src)) << "after scatter";
      std::vector<std::int64_t> back(n);
      ranked_src.gather(back.data(), 0);
      ranked_src.wait();
      EXPECT_EQ(back, data) << "gathered";
      for (const cush::Distribution& to : dists) {
        SCOPED_TRACE("copy to " + to.name());
        cush::RankPlan<std::int64_t> ranked_dst(group, n, to);
        cush::Plan<std::int64_t> dst(devices, n, to);
        expect_same_layout(ranked_dst, dst);
        ranked_dst.copy_from(ranked_src);
        cush::copy(src, dst);
        EXPECT_EQ(segments_of(ranked_dst), segments_of(dst));
      }
    }
  }
}

TEST(OneRankPlan, AllToAllEqualsThePlans) {
  const std::vector<int> gpus = every_gpu();
  REQUIRE_ONE_RANK_WITH_A_GPU(gpus);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  const cush::DeviceSet devices(gpus);
  const std::size_t d = gpus.size();
  std::mt19937_64 rng(8181);
  for (std::size_t piece : {std::size_t{1}, std::size_t{777}, std::size_t{65537}}) {
    SCOPED_TRACE("piece " + std::to_string(piece));
    const std::size_t n = d * d * piece;
    const std::vector<std::int64_t> data = random_values(rng, n);
    cush::RankPlan<std::int64_t> ranked_rows(group, n), ranked_cols(group, n);
    cush::Plan<std::int64_t> rows(devices, n), cols(devices, n);
    ranked_rows.scatter(data.data(), 0);
    rows.scatter(data.data());
    ranked_cols.all_to_all_from(ranked_rows);
    cush::all_to_all(rows, cols);
    EXPECT_EQ(segments_of(ranked_cols), segments_of(cols));
  }
}

// Replicated plans over every GPU, each replica its own random draws, then the operation on the
// RankPlan (NCCL) and on the Plan (cush's transports): every replica equal. `operation(ranked,
// plan)` runs both.
template <class Operation>
void expect_replicas_equal_after(Operation&& operation) {
  const std::vector<int> gpus = every_gpu();
  REQUIRE_ONE_RANK_WITH_A_GPU(gpus);
  if (!cush_test::gpus_are_distinct(gpus)) GTEST_SKIP() << "NCCL needs a GPU of its own for each device";
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpus);
  const cush::DeviceSet devices(gpus);
  std::mt19937_64 rng(8282);
  for (std::size_t n : {std::size_t{1}, std::size_t{1001}, (std::size_t{1} << 20) + 3}) {
    SCOPED_TRACE("n " + std::to_string(n));
    cush::RankPlan<std::int64_t> ranked(group, n, cush::Distribution::replicated());
    cush::Plan<std::int64_t> plan(devices, n, cush::Distribution::replicated());
    for (std::size_t pos = 0; pos < gpus.size(); ++pos) {
      const std::vector<std::int64_t> v = random_values(rng, n);
      put(ranked.local().segment(pos), v);
      put(plan.segment(pos), v);
    }
    operation(ranked, plan);
    EXPECT_EQ(segments_of(ranked), segments_of(plan));
  }
}

TEST(OneRankPlan, AllReduceEqualsThePlans) {
  expect_replicas_equal_after([](auto& ranked, auto& plan) {
    ranked.all_reduce(cush::ReduceOp::sum);
    cush::all_reduce(plan, cush::ReduceOp::sum);
  });
}

TEST(OneRankPlan, ReduceEqualsThePlans) {
  expect_replicas_equal_after([](auto& ranked, auto& plan) {
    ranked.reduce(0, cush::ReduceOp::max);
    cush::reduce(plan, cush::ReduceOp::max, 0);
  });
}

TEST(OneRankPlan, BroadcastEqualsThePlans) {
  expect_replicas_equal_after([](auto& ranked, auto& plan) {
    ranked.broadcast(0);
    cush::broadcast(plan, 0);
  });
}

// The all-gather overwrites every replica with the whole extent of a plan split over the GPUs.
TEST(OneRankPlan, AllGatherEqualsThePlans) {
  expect_replicas_equal_after([](auto& ranked, auto& plan) {
    std::mt19937_64 rng(8383);
    const std::vector<std::int64_t> data = random_values(rng, plan.size());
    cush::RankPlan<std::int64_t> ranked_parts(ranked.group(), plan.size());
    cush::Plan<std::int64_t> parts(plan.devices(), plan.size());
    ranked_parts.scatter(data.data(), 0);
    parts.scatter(data.data());
    ranked.all_gather(ranked_parts);
    cush::all_gather(parts, plan);
    ranked.wait();  // before the parts go
    for (const auto& replica : segments_of(plan)) EXPECT_EQ(replica, data);
  });
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
