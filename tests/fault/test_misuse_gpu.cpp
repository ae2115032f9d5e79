// Misuse (docs/reliability.md, "Misuse"): what cush does when plans and fields are destroyed with
// work in flight, used after a move, or driven from several threads. Each case is a clear error
// or a documented behaviour, never a crash or a hang. (An exchange started twice is an
// InvalidArgument: tests/grid/test_field_gpu.cpp, Field.MisuseIsRejected.)

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "cush/cush.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/kernels.hpp"
#include "support/random.hpp"

namespace {

using cush::DeviceSet;
using cush::InvalidArgument;
using cush::Plan;

}  // namespace

// The destructor finishes the plan's work first: a gather enqueued behind a 100 ms kernel has
// landed in the host buffer when the plan is gone, though nobody called wait().
TEST(Misuse, DestroyingAPlanWithWorkInFlightFinishesTheWork) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  const std::vector<double> host = cush_test::random_values<double>(100'003);
  std::vector<double> out(host.size(), 0.0);
  {
    Plan<double> plan(gpus, host.size());
    plan.scatter(host.data());
    cush_test::spin(plan.stream(0), 100);
    plan.gather(out.data());
  }
  EXPECT_EQ(out, host);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// A field's gather copies block by block; when the copy of a later block fails, the earlier
// blocks' copies into the caller's buffer (registered memory: truly asynchronous, queued behind a
// 300 ms kernel) have finished before the exception leaves (promise 2), so unwinding may free the
// buffer. Each checked call of the gather fails in turn.
TEST(Misuse, AFailedFieldGatherLeavesNoBlockCopyRunning) {
  CUSH_REQUIRE_GPUS(2);
  const DeviceSet gpus = DeviceSet::all();
  const cush::Extent3 e{33, 21, 4 * gpus.size() + 1};
  const std::vector<double> host = cush_test::random_values<double>(e[0] * e[1] * e[2]);
  std::vector<double> out(host.size(), 0.0);
  const cush::HostRegistration pinned{std::span<double>(out)};
  cush::Field<double> f(gpus, e, 3);
  f.scatter(host.data());
  f.wait();
  const std::size_t calls = cush_test::checked_calls([&] { f.gather(out.data()); });
  f.wait();
  std::size_t failed_runs = 0;
  for (std::size_t k = 0; k < calls; ++k) {
    cush_test::spin(f.stream(0), 300);
    if (cush_test::fails_at_call(k, [&] { f.gather(out.data()); })) {
      EXPECT_TRUE(f.done()) << "the gather threw at its checked call " << k << " of " << calls
                            << " with block copies still running";
      ++failed_runs;
    }
    f.wait();
  }
  // At least one failure after block 0's copy was queued (a later block's calls): the case tested.
  EXPECT_GE(failed_runs, 2u) << "the walk reached too few failing calls to test anything";
  f.gather(out.data());
  f.wait();
  EXPECT_EQ(out, host);
}

// A failed wait() or done() throws only after every device of the plan (or field) has finished
// all its work, other plans' included: the exception unwinds the caller's scopes, which may free
// a host buffer that another plan's gather (here behind a 300 ms kernel) would still write. Each
// call fails at each of its checked calls in turn.
TEST(Misuse, AFailedWaitOrDoneFinishesTheWorkOfItsDevices) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  const std::vector<double> host = cush_test::random_values<double>(300'007);
  std::vector<double> out(host.size(), 0.0);
  Plan<double> other(gpus, host.size());
  other.scatter(host.data());
  other.wait();
  Plan<double> plan(gpus, 1001);
  cush::Field<float> field(gpus, cush::Extent3{17, 9, 2 * gpus.size() + 1}, 3);
  const auto walk_wait = [&](const char* what, const std::function<void()>& wait) {
    const std::size_t calls = cush_test::checked_calls(wait);
    ASSERT_GE(calls, gpus.size()) << what << ": a checked call per device at least";
    for (std::size_t k = 0; k < calls; ++k) {
      cush_test::spin(other.stream(0), 300);
      std::fill(out.begin(), out.end(), 0.0);
      other.gather(out.data());
      EXPECT_TRUE(cush_test::fails_at_call(k, wait)) << what << ": its checked call " << k << " did not fail it";
      EXPECT_TRUE(other.done()) << what << " threw at its checked call " << k << " with another plan's gather still running";
      other.wait();
      EXPECT_EQ(out, host) << what << ", call " << k;
    }
  };
  walk_wait("Plan::wait", [&] { plan.wait(); });
  walk_wait("Field::wait", [&] { field.wait(); });
  walk_wait("Plan::done", [&] { (void)plan.done(); });
  walk_wait("Field::done", [&] { (void)field.done(); });
}

// The same for a field with an exchange in flight: the destructor waits for the blocks' streams
// and the exchange's own.
TEST(Misuse, DestroyingAFieldWithAnExchangeInFlightFinishesIt) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  const cush::Extent3 e{33, 21, 19};
  const std::vector<double> host = cush_test::random_values<double>(e[0] * e[1] * e[2]);
  cush_test::load_process_caches();
  const bool measure = !cush_test::under_cuda_tool();
  const std::vector<std::size_t> before = measure ? cush_test::gpu_free_memory() : std::vector<std::size_t>{};
  {
    cush::Field<double> f(gpus, e, 3);
    f.scatter(host.data());
    cush_test::spin(f.stream(0), 100);
    f.exchange_start();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  if (measure) EXPECT_EQ(cush_test::gpu_free_memory(), before) << "free memory of each GPU";
}

// A moved-from plan or field: size() 0, done() true, wait() returns; everything else is an
// InvalidArgument naming "this" (or the plan argument of a device operation).
TEST(Misuse, MovedFromPlansAndFieldsRefuseEveryOperation) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  std::vector<float> host(1000, 1.0F);
  Plan<float> a(gpus, host.size());
  Plan<float> b = std::move(a);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): what the test is about
  EXPECT_TRUE(a.done());
  a.wait();
  EXPECT_THROW(a.scatter(host.data()), InvalidArgument);
  EXPECT_THROW(a.gather(host.data()), InvalidArgument);
  EXPECT_THROW((void)a.devices(), InvalidArgument);
  EXPECT_THROW((void)a.segment(0), InvalidArgument);
  EXPECT_THROW((void)a.stream(0), InvalidArgument);
  EXPECT_THROW(a.for_each([](const cush::Segment<float>&) {}), InvalidArgument);
  EXPECT_THROW(cush::copy(a, b), InvalidArgument);
  EXPECT_THROW(cush::copy(b, a), InvalidArgument);
  EXPECT_THROW(b.after(a), InvalidArgument);
  EXPECT_THROW((void)Plan<float>::alike(a, 10), InvalidArgument);
  b.scatter(host.data());  // the plan moved to works
  std::vector<float> out(host.size());
  b.gather(out.data());
  b.wait();
  EXPECT_EQ(out, host);
  a = Plan<float>(gpus, 10);  // assigning to a moved-from plan revives it
  EXPECT_EQ(a.size(), 10u);

  cush::Field<float> f(gpus, cush::Extent3{16, 8, 4}, 3);
  cush::Field<float> g = std::move(f);
  EXPECT_EQ(f.components(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(f.done());
  f.wait();
  EXPECT_THROW(f.exchange(), InvalidArgument);
  EXPECT_THROW(f.exchange_start(), InvalidArgument);
  EXPECT_THROW(f.exchange_finish(), InvalidArgument);
  EXPECT_THROW(f.scatter(host.data()), InvalidArgument);
  EXPECT_THROW((void)f.grid(), InvalidArgument);
  EXPECT_THROW((void)f.devices(), InvalidArgument);
  EXPECT_THROW((void)f.stream(0), InvalidArgument);
  EXPECT_THROW(f.set_halo_transport(cush::HaloTransport::staged), InvalidArgument);
  g.exchange();
  g.wait();
}

// Threads: calls on one plan must not overlap (documented; not checked), calls on different plans
// may, also on the same devices and with device operations between disjoint pairs of plans.
TEST(Misuse, PlansOfTheSameDevicesDrivenFromSeveralThreads) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  constexpr int threads = 4;
  std::vector<int> failures(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::vector<double> host = cush_test::random_values<double>(50'000 + static_cast<std::size_t>(t) * 17);
      Plan<double> a(gpus, host.size());
      Plan<double> b(gpus, host.size(), cush::Distribution::memory_bandwidth());
      std::vector<double> out(host.size());
      for (int round = 0; round < 20; ++round) {
        a.scatter(host.data());
        cush::copy(a, b);
        b.gather(out.data());
        b.wait();
        if (out != host) ++failures[static_cast<std::size_t>(t)];
      }
    });
  for (std::thread& th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[static_cast<std::size_t>(t)], 0) << "thread " << t;
}
