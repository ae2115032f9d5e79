// The nccl transport's communicators on real GPUs: made once per set of devices and kept for the
// process; a failure that leaves some devices inside a collective aborts the communicator, hangs
// nothing, and the next operation makes a fresh one. The last test shows the hang that the abort
// prevents, in a child process that is killed when its time is up.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "cush/cush.hpp"
#include "support/child_process.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "transports/nccl_communicator.hpp"

namespace {

using cush::CommOptions;
using cush::DeviceSet;
using cush::Distribution;
using cush::Plan;
using cush::Transport;
using cush::detail::communicators_made;
namespace nccl_testing = cush::detail::nccl_testing;

const CommOptions nccl{Transport::nccl};

// The devices in an order other than their ids' (e.g. {3, 1, 0, 2} of 4; {1, 0} of 2): ranks
// follow ids, plan positions do not.
std::vector<int> shuffled_devices() {
  std::vector<int> ids = cush_test::first_devices(cush::DeviceSet::available());
  if (ids.size() == 4) return {3, 1, 0, 2};
  std::reverse(ids.begin(), ids.end());
  return ids;
}

// Small integers as doubles: their sums are exact in any order.
std::vector<double> integers(std::size_t n) {
  std::vector<double> v = cush_test::random_values<double>(n);
  for (double& x : v) x = std::round(x * 64);
  return v;
}

// An all-reduce (sum) over nccl of a replicated plan whose replica at position p holds
// `values` + p, checked on every replica.
void all_reduce_checked(Plan<double>& plan, const std::vector<double>& values) {
  const std::size_t devices = plan.devices().size();
  for (std::size_t p = 0; p < devices; ++p) {
    std::vector<double> mine(values);
    for (double& x : mine) x += static_cast<double>(p);
    const cush::Segment<double> s = plan.segment(p);
    ASSERT_EQ(cudaMemcpy(s.data(), mine.data(), s.bytes(), cudaMemcpyDefault), cudaSuccess);
  }
  cush::all_reduce(plan, cush::ReduceOp::sum, nccl);
  plan.wait();
  const double offsets = static_cast<double>(devices * (devices - 1) / 2);
  for (std::size_t p = 0; p < devices; ++p) {
    std::vector<double> out(values.size());
    const cush::Segment<double> s = plan.segment(p);
    ASSERT_EQ(cudaMemcpy(out.data(), s.data(), s.bytes(), cudaMemcpyDefault), cudaSuccess);
    for (std::size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], static_cast<double>(devices) * values[i] + offsets) << "replica " << p << ", element " << i;
  }
}

// A copy over nccl (grouped send/receive) from a uniform plan to a weighted one in another order,
// checked.
void copy_checked(Plan<double>& a, Plan<double>& b, const std::vector<double>& host) {
  std::vector<double> out(host.size());
  a.scatter(host.data());
  cush::copy(a, b, nccl);
  b.gather(out.data());
  b.wait();
  ASSERT_EQ(out, host);
}

}  // namespace

// (On one GPU an all-reduce has nothing to combine and makes no communicator.)
TEST(NcclCommunicators, APlanMadeAndFreedInALoopMakesTheCommunicatorOnce) {
  CUSH_REQUIRE_REAL_GPUS(2);
  const std::vector<double> values = integers(1001);
  (void)cush::release_communicators();
  const std::size_t before = communicators_made();
  for (int i = 0; i < 4; ++i) {
    Plan<double> plan(DeviceSet::all(), values.size(), Distribution::replicated());
    all_reduce_checked(plan, values);
  }
  EXPECT_EQ(communicators_made() - before, 1u) << "plans made and freed in a loop";
  {
    // The same devices in another order share the communicator.
    Plan<double> plan(DeviceSet(shuffled_devices()), values.size(), Distribution::replicated());
    all_reduce_checked(plan, values);
  }
  EXPECT_EQ(communicators_made() - before, 1u) << "the same devices in another order";
  EXPECT_EQ(cush::release_communicators(), 1u);
  EXPECT_EQ(cush::release_communicators(), 0u);
  Plan<double> plan(DeviceSet::all(), values.size(), Distribution::replicated());
  all_reduce_checked(plan, values);
  EXPECT_EQ(communicators_made() - before, 2u) << "after release_communicators(), a new one";
}

TEST(NcclCommunicators, APlanHoldsAReleasedCommunicatorUntilItIsDestroyed) {
  CUSH_REQUIRE_REAL_GPUS(2);
  const std::vector<double> values = integers(777);
  Plan<double> plan(DeviceSet(shuffled_devices()), values.size(), Distribution::replicated());
  all_reduce_checked(plan, values);
  (void)cush::release_communicators();
  const std::size_t made = communicators_made();
  all_reduce_checked(plan, values);  // the plan's own, released from the process's cache
  EXPECT_EQ(communicators_made(), made);
}

// Every rank left out in turn, of a collective (all-reduce) and of grouped send/receive (copy):
// the others have launched and wait on their devices; the operation throws NcclError, the
// devices' work ends, and the next operation runs on a fresh communicator.
TEST(NcclFailure, ARankLeftOutOfAGroupAbortsTheCommunicatorAndHangsNothing) {
  CUSH_REQUIRE_REAL_GPUS(2);
  const std::vector<int> order = shuffled_devices();
  std::vector<int> reversed(order.rbegin(), order.rend());
  std::vector<double> w(order.size(), 1.0);
  w.back() = 3.0;
  const std::vector<double> values = integers(4099);
  const std::vector<double> host = cush_test::random_values<double>(100003);
  Plan<double> sums(DeviceSet(order), values.size(), Distribution::replicated());
  Plan<double> a(DeviceSet(order), host.size());
  Plan<double> b(DeviceSet(reversed), host.size(), Distribution::weighted(w));
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank) + " left out");
    // First a run that connects the ranks for this operation: a rank left out of the connection
    // itself would keep ncclGroupEnd waiting on the host (nccl_communicator.hpp).
    all_reduce_checked(sums, values);
    std::size_t made = communicators_made();
    nccl_testing::leave_out_rank_once(rank);
    EXPECT_THROW(cush::all_reduce(sums, cush::ReduceOp::sum, nccl), cush::NcclError);
    sums.wait();
    all_reduce_checked(sums, values);
    EXPECT_EQ(communicators_made(), made + 1) << "all-reduce: a fresh communicator after the abort";

    copy_checked(a, b, host);
    made = communicators_made();
    nccl_testing::leave_out_rank_once(rank);
    EXPECT_THROW(cush::copy(a, b, nccl), cush::NcclError);
    b.wait();
    copy_checked(a, b, host);
    EXPECT_EQ(communicators_made(), made + 1) << "copy: a fresh communicator after the abort";
  }
}

namespace {
constexpr const char* kChild = "CUSH_TEST_NCCL_CHILD";
constexpr const char* kLeftOut = "leaving out a rank, abort off";
}  // namespace

// Run by the test below, in a process of its own.
TEST(NcclFailure, ChildLeavesOutARankWithTheAbortOff) {
  if (std::getenv(kChild) == nullptr) GTEST_SKIP() << "a helper: NcclFailure.WithoutTheAbortTheOtherRanksWaitForever runs it in a process of its own; nothing to do alone";
  const std::vector<double> values = integers(4099);
  Plan<double> sums(DeviceSet(shuffled_devices()), values.size(), Distribution::replicated());
  all_reduce_checked(sums, values);
  nccl_testing::set_abort_on_failure(false);
  nccl_testing::leave_out_rank_once(1);
  std::printf("%s\n", kLeftOut);
  std::fflush(stdout);
  try {
    cush::all_reduce(sums, cush::ReduceOp::sum, nccl);  // throws once its devices' work ended
  } catch (const cush::NcclError&) {
  }
  sums.wait();
  std::printf("the other ranks ended\n");
}

// What the abort prevents: with it off, the ranks that launched wait for the one left out for as
// long as the child is let run (it is killed 20 s after it left the rank out). If the child ended
// by itself, the scenario would not leave ranks waiting and the test above would prove nothing.
TEST(NcclFailure, WithoutTheAbortTheOtherRanksWaitForever) {
  CUSH_REQUIRE_REAL_GPUS(2);
  const std::filesystem::path log = std::filesystem::temp_directory_path() /
                                    ("cush-nccl-child-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".log");
  cush_test::ChildProcess child("NcclFailure.ChildLeavesOutARankWithTheAbortOff", {std::string(kChild) + "=1"},
                                log.string());
  ASSERT_TRUE(child.wait_for_output(kLeftOut, std::chrono::seconds(120))) << child.ending() << ":\n" << child.output();
  const bool ended = child.wait(std::chrono::seconds(20));
  EXPECT_FALSE(ended) << "the child " << child.ending() << ":\n" << child.output();
  EXPECT_EQ(child.output().find("the other ranks ended"), std::string::npos) << child.output();
  std::filesystem::remove(log);
}
