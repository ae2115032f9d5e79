// Two users of the same GPUs at once (docs/device_ops.md, "Several users of the same GPUs"): two
// threads of one process, and two processes, each with plans and a field of its own over every
// GPU, run NCCL collectives and send/receive, peer_kernel and peer copies, all-to-all and halo
// exchanges in a loop; every result is checked, and neither may wait for the other forever.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <random>
#include <future>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "support/child_process.hpp"
#include "support/field_checks.hpp"
#include "support/gpu.hpp"
#include "support/piece_counts.hpp"
#include "support/random.hpp"

namespace {

using cush::CommOptions;
using cush::DeviceSet;
using cush::Distribution;
using cush::Plan;
using cush::Transport;

constexpr int kIterations = 25;
constexpr auto kTimeLimit = std::chrono::minutes(4);

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// One user's loop: `order` is its device order; every iteration moves new data through every
// transport and checks it. Throws on the first wrong result.
void user(const std::vector<int>& order, unsigned seed) {
  const std::size_t devices = order.size();
  std::vector<int> reversed(order.rbegin(), order.rend());
  std::vector<double> w(devices, 1.0);
  w.front() = 2.0;
  const std::size_t n = 200003 + seed;
  std::mt19937_64 rng(seed);  // one per thread
  Plan<double> a(DeviceSet(order), n);
  Plan<double> b(DeviceSet(reversed), n, Distribution::weighted(w));
  Plan<double> sums(DeviceSet(order), 4099, Distribution::replicated());
  cush::GridOptions options;
  options.periodic = {true, true, true};
  const cush::Extent3 e{37, 29, 8 * devices + 3};
  cush::Field<double> f(DeviceSet(order), e, 3, options);
  std::vector<double> out(n), reduced(sums.size());
  const std::vector<std::size_t> counts = cush_test::piece_counts(a, b);
  const std::vector<std::size_t> back = cush_test::transposed(counts, devices, devices);
  for (int it = 0; it < kIterations; ++it) {
    const std::vector<double> host = cush_test::random_values<double>(n, rng);
    a.scatter(host.data());
    cush::copy(a, b, CommOptions{Transport::nccl});
    cush::copy(b, a, CommOptions{Transport::peer_kernel});
    cush::all_to_all(a, b, std::span<const std::size_t>(counts), CommOptions{Transport::peer});
    cush::all_to_all(b, a, std::span<const std::size_t>(back), CommOptions{Transport::automatic});
    a.gather(out.data());
    a.wait();
    require(out == host, "copies and all-to-alls, iteration " + std::to_string(it));

    std::vector<double> ones(sums.size(), static_cast<double>(it));
    sums.broadcast(ones.data());
    cush::all_reduce(sums, cush::ReduceOp::sum, CommOptions{Transport::nccl});
    cush::broadcast(sums, devices - 1, CommOptions{Transport::peer_kernel});
    cush::all_reduce(sums, cush::ReduceOp::sum, CommOptions{Transport::peer});
    sums.gather(reduced.data());
    sums.wait();
    const double want = static_cast<double>(it) * static_cast<double>(devices * devices);
    require(std::all_of(reduced.begin(), reduced.end(), [&](double x) { return x == want; }),
            "all-reduces, iteration " + std::to_string(it));

    const std::vector<double> cells = cush_test::random_values<double>(e[0] * e[1] * e[2], rng);
    f.scatter(cells.data());
    f.exchange_start();
    f.exchange_finish();
    f.exchange();
    f.wait();
    for (std::size_t k = 0; k < f.grid().size(); ++k) {
      const cush::Block<double> blk = f.block(k);
      std::vector<double> buf(f.grid().allocated_cells(k));
      require(cudaMemcpy(buf.data(), blk.data(), buf.size() * sizeof(double), cudaMemcpyDefault) == cudaSuccess,
              "reading a block");
      cush_test::expect_buffer_matches(f.grid(), blk, buf, cells, [](auto...) { return true; });
      require(!::testing::Test::HasFailure(), "halo exchange, iteration " + std::to_string(it));
    }
  }
}

std::vector<int> all_devices() { return cush_test::first_devices(DeviceSet::available()); }

std::vector<int> shuffled() {
  std::vector<int> ids = all_devices();
  std::rotate(ids.begin(), ids.begin() + 1, ids.end());
  return ids;
}

}  // namespace

TEST(TwoUsers, ThreadsOfOneProcess) {
  CUSH_REQUIRE_REAL_GPUS(2);
  auto first = std::async(std::launch::async, [] { user(all_devices(), 1); });
  auto second = std::async(std::launch::async, [] { user(shuffled(), 2); });
  for (auto* f : {&first, &second}) {
    if (f->wait_for(kTimeLimit) != std::future_status::ready) {
      // A thread that waits forever cannot be joined: report and end the process.
      ADD_FAILURE() << "a user did not finish in 4 minutes: the two threads wait for each other";
      std::fflush(stdout);
      std::_Exit(1);
    }
  }
  EXPECT_NO_THROW(first.get());
  EXPECT_NO_THROW(second.get());
}

namespace {
constexpr const char* kChild = "CUSH_TEST_USER";
}  // namespace

// Run by the test below, in processes of their own.
TEST(TwoUsers, ChildUser) {
  const char* which = std::getenv(kChild);
  if (which == nullptr) GTEST_SKIP() << "a helper: TwoUsers.ProcessesOnTheSameGpus runs it in a process of its own; nothing to do alone";
  const bool second = std::string(which) == "2";
  user(second ? shuffled() : all_devices(), second ? 4U : 3U);
  std::printf("user %s finished\n", which);
}

TEST(TwoUsers, ProcessesOnTheSameGpus) {
  CUSH_REQUIRE_REAL_GPUS(2);
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  cush_test::ChildProcess one("TwoUsers.ChildUser", {std::string(kChild) + "=1"}, (dir / ("cush-user1-" + tag)).string());
  cush_test::ChildProcess two("TwoUsers.ChildUser", {std::string(kChild) + "=2"}, (dir / ("cush-user2-" + tag)).string());
  for (cush_test::ChildProcess* c : {&one, &two}) {
    EXPECT_TRUE(c->wait(kTimeLimit)) << "the processes wait for each other";
    EXPECT_TRUE(c->passed()) << c->ending() << ":\n" << c->output();
  }
  std::filesystem::remove(dir / ("cush-user1-" + tag));
  std::filesystem::remove(dir / ("cush-user2-" + tag));
}
