// The fault injection switch (libcush/core/fault_injection.hpp) on the host: which call fails,
// what is counted and recorded, from several threads; the failing call is never made.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/fault_injection.hpp"
#include "cush/error.hpp"
#include "support/fault_run.hpp"

namespace {

namespace faults = cush::detail::faults;

// Stands for a CUDA call: counts the times it is really made.
cudaError_t pretend_call(std::atomic<int>& made) {
  ++made;
  return cudaSuccess;
}

}  // namespace

TEST(FaultInjection, UnarmedEveryCallIsMade) {
  std::atomic<int> made = 0;
  for (int i = 0; i < 5; ++i) CUSH_CUDA_CHECK(pretend_call(made));
  EXPECT_EQ(made, 5);
  EXPECT_FALSE(cush::detail::faults_armed.load());
}

TEST(FaultInjection, TheChosenCallFailsWithoutBeingMadeAndTheOthersRun) {
  std::atomic<int> made = 0;
  faults::Armed armed(2);
  int thrown = 0;
  for (int i = 0; i < 5; ++i) {
    try {
      CUSH_CUDA_CHECK_AT(pretend_call(made), "context " + std::to_string(i));
    } catch (const cush::CudaError& e) {
      ++thrown;
      EXPECT_EQ(i, 2);
      EXPECT_EQ(e.code(), cudaErrorUnknown);
      EXPECT_EQ(e.call(), "pretend_call(made)");
      EXPECT_NE(std::string(e.what()).find("context 2"), std::string::npos) << e.what();
    }
  }
  const faults::Record r = armed.disarm();
  EXPECT_EQ(thrown, 1);
  EXPECT_EQ(made, 4);
  EXPECT_EQ(r.calls, 5u);
  ASSERT_TRUE(r.failed.has_value());
  EXPECT_EQ(r.failed->call, "pretend_call(made)");
  EXPECT_NE(r.failed->file.find("test_fault_injection.cpp"), std::string::npos);
  EXPECT_EQ(r.sites.size(), 1u);
  EXPECT_FALSE(cush::detail::faults_armed.load());
}

TEST(FaultInjection, CountingAloneFailsNothingAndRecordsEverySite) {
  std::atomic<int> made = 0;
  faults::Armed armed(std::nullopt);
  CUSH_CUDA_CHECK(pretend_call(made));
  CUSH_CUDA_CHECK(pretend_call(made));
  for (int i = 0; i < 3; ++i) CUSH_CUDA_CHECK(pretend_call(made));
  const faults::Record r = armed.disarm();
  EXPECT_EQ(made, 5);
  EXPECT_EQ(r.calls, 5u);
  EXPECT_FALSE(r.failed.has_value());
  ASSERT_EQ(r.sites.size(), 3u);
  // Each site with the number of its first call: the loop's site is first reached by call 2.
  std::vector<std::size_t> firsts;
  for (const auto& [site, first] : r.sites) firsts.push_back(first);
  EXPECT_EQ(firsts, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(FaultInjection, AFailurePastTheLastCallIsNeverReached) {
  std::atomic<int> made = 0;
  faults::Armed armed(10);
  for (int i = 0; i < 3; ++i) CUSH_CUDA_CHECK(pretend_call(made));
  const faults::Record r = armed.disarm();
  EXPECT_EQ(r.calls, 3u);
  EXPECT_FALSE(r.failed.has_value());
}

TEST(FaultInjection, AllocationsFailAsOutOfMemoryAndOtherCallsAsUnknownErrors) {
  EXPECT_EQ(cush::detail::injected_cuda_error("cudaMalloc(&p, bytes)"), cudaErrorMemoryAllocation);
  EXPECT_EQ(cush::detail::injected_cuda_error("cudaMallocAsync(&p, bytes, s)"), cudaErrorMemoryAllocation);
  EXPECT_EQ(cush::detail::injected_cuda_error("cudaHostAlloc(&p, bytes, 0)"), cudaErrorMemoryAllocation);
  EXPECT_EQ(cush::detail::injected_cuda_error("cudaMemcpyAsync(d, s, n, k, st)"), cudaErrorUnknown);
  EXPECT_EQ(cush::detail::injected_cuda_error("cudaStreamCreateWithFlags(&s, 0)"), cudaErrorUnknown);
}

// A synchronization's injected failure comes after it was made (a real one means the work
// failed, and nothing of it runs on); any other call is not made.
TEST(FaultInjection, SynchronizationsFailAfterTheCall) {
  EXPECT_TRUE(cush::detail::fails_after_the_call("cudaStreamSynchronize(stream_)"));
  EXPECT_TRUE(cush::detail::fails_after_the_call("cudaDeviceSynchronize()"));
  EXPECT_FALSE(cush::detail::fails_after_the_call("cudaStreamQuery(stream)"));
  std::atomic<int> made = 0;
  faults::Armed armed(0);
  EXPECT_EQ(cush::detail::injected_failure("cudaStreamSynchronize(s)", [&] { return pretend_call(made); }), cudaErrorUnknown);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(cush::detail::injected_failure("cudaMemcpyAsync(d, s, n, k, st)", [&] { return pretend_call(made); }),
            cudaErrorUnknown);
  EXPECT_EQ(made, 1);
}

// Calls from several threads share one count: exactly one of them fails.
TEST(FaultInjection, OneCountAcrossThreads) {
  std::atomic<int> made = 0, thrown = 0;
  faults::Armed armed(1234);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        try {
          CUSH_CUDA_CHECK(pretend_call(made));
        } catch (const cush::CudaError&) {
          ++thrown;
        }
      }
    });
  for (std::thread& t : threads) t.join();
  const faults::Record r = armed.disarm();
  EXPECT_EQ(r.calls, 4000u);
  EXPECT_EQ(thrown, 1);
  EXPECT_EQ(made, 3999);
}

TEST(FaultInjection, ArmingTwiceIsALogicError) {
  faults::Armed armed(std::nullopt);
  EXPECT_THROW(faults::arm(0), std::logic_error);
}

TEST(FaultInjection, SitesReadTheSameOnEveryHost) {
  const faults::Site s{"/home/someone/cush/libcush/core/stream.cpp", 13, "cudaStreamCreateWithFlags(&stream_, flags)"};
  EXPECT_EQ(s.str(), "libcush/core/stream.cpp:13\tcudaStreamCreateWithFlags(&stream_, flags)");
  const faults::Site c{"/x/cases/fft/kernels.cu", 9, "cufftCreate(&h)"};
  EXPECT_EQ(c.str(), "cases/fft/kernels.cu:9\tcufftCreate(&h)");
}

// Which calls a walk fails (tests/support/fault_run.hpp): all of them up to 4 GPUs or up to
// max_sampled_runs calls; beyond, a sample that keeps every site's first call and the last.
TEST(FaultWalkSample, EveryCallWithUpToFourGpusOrFewCalls) {
  faults::Record r;
  r.calls = 5000;
  for (std::size_t gpus : {1u, 2u, 4u}) {
    const std::vector<std::size_t> ks = cush_test::fault_run::calls_to_fail(r, gpus);
    ASSERT_EQ(ks.size(), r.calls) << gpus << " GPUs";
    for (std::size_t k = 0; k < ks.size(); ++k) EXPECT_EQ(ks[k], k);
  }
  r.calls = cush_test::fault_run::max_sampled_runs;
  EXPECT_EQ(cush_test::fault_run::calls_to_fail(r, 8).size(), r.calls);
  r.calls = 0;
  EXPECT_TRUE(cush_test::fault_run::calls_to_fail(r, 8).empty());
}

TEST(FaultWalkSample, MoreGpusKeepEverySitesFirstCallTheLastAndAnEvenSpread) {
  faults::Record r;
  r.calls = 10007;
  // 40 sites whose first calls bunch up at the start, where an even spread would miss them.
  for (int s = 0; s < 40; ++s) r.sites[faults::Site{"f.cpp", s, "cudaCall()"}] = static_cast<std::size_t>(3 * s + 1);
  const std::vector<std::size_t> ks = cush_test::fault_run::calls_to_fail(r, 8);
  EXPECT_LE(ks.size(), cush_test::fault_run::max_sampled_runs);
  EXPECT_GT(ks.size(), cush_test::fault_run::max_sampled_runs - 40);  // the spread collides with a few firsts at most
  EXPECT_TRUE(std::is_sorted(ks.begin(), ks.end()));
  EXPECT_EQ(std::adjacent_find(ks.begin(), ks.end()), ks.end()) << "a call twice";
  for (const auto& [site, first] : r.sites) EXPECT_TRUE(std::binary_search(ks.begin(), ks.end(), first)) << first;
  EXPECT_EQ(ks.front(), 0u);
  EXPECT_EQ(ks.back(), r.calls - 1);
  // Evenly spread: no gap between two failed calls is much wider than calls / runs.
  std::size_t widest = 0;
  for (std::size_t i = 1; i < ks.size(); ++i) widest = std::max(widest, ks[i] - ks[i - 1]);
  EXPECT_LE(widest, 2 * r.calls / ks.size());
}

TEST(FaultWalkSample, MoreSitesThanTheLimitAreAllFailed) {
  faults::Record r;
  r.calls = 100000;
  for (std::size_t s = 0; s < 2 * cush_test::fault_run::max_sampled_runs; ++s)
    r.sites[faults::Site{"g.cpp", static_cast<int>(s), "cudaCall()"}] = 7 * s + 3;
  const std::vector<std::size_t> ks = cush_test::fault_run::calls_to_fail(r, 16);
  EXPECT_EQ(ks.size(), r.sites.size() + 1);  // every first call and the last one
  for (const auto& [site, first] : r.sites) EXPECT_TRUE(std::binary_search(ks.begin(), ks.end(), first));
}
