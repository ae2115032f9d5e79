#pragma once
// Shared by the tests that run under mpiexec (tests/mpi): every rank runs the same tests; a
// failure on one rank fails the run on all.

#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "cush/process_group.hpp"

namespace cush_test {

/// Whether every rank of `group` passes `ok`: a test that failed on one rank fails on all, and no
/// rank goes on alone to collectives the others skip.
inline bool all_ranks(const cush::ProcessGroup& group, bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, group.comm());
  return all == 1;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Ends the process when one test has run longer than CUSH_MPI_TEST_LIMIT_S seconds (default
/// 180), naming the test: a rank left waiting in a collective that another rank skipped (a test
/// that returned early on one rank) would else hang until ctest's limit, without saying where.
/// mpiexec ends the other ranks when one exits without MPI_Finalize.
class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  Watchdog() {
    const char* text = std::getenv("CUSH_MPI_TEST_LIMIT_S");
    limit_ = std::chrono::seconds(text != nullptr && std::atoi(text) > 0 ? std::atoi(text) : 180);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    thread_ = std::thread([this] { watch(); });
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() override {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void OnTestStart(const ::testing::TestInfo& info) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    name_ = std::string(info.test_suite_name()) + "." + info.name();
    started_ = std::chrono::steady_clock::now();
    running_ = true;
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      wake_.wait_for(lock, std::chrono::seconds(1));
      if (running_ && std::chrono::steady_clock::now() - started_ > limit_) {
        std::fprintf(stderr,
                     "rank %d: %s still running after %lld s (CUSH_MPI_TEST_LIMIT_S): a rank waits in a collective "
                     "that another rank left; ending the run\n",
                     rank_, name_.c_str(), static_cast<long long>(limit_.count()));
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }
  std::chrono::seconds limit_{180};
  int rank_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false, running_ = false;
  std::string name_;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

/// The main() of such a test: MPI up, GoogleTest's progress printed by rank 0 only (a failure on
/// any rank is printed by that rank), the worst result of all ranks returned by each.
inline int run_mpi_tests(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& printers = ::testing::UnitTest::GetInstance()->listeners();
    delete printers.Release(printers.default_result_printer());
  }
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  auto* watchdog = new Watchdog;  // owned by GoogleTest's listener list from here
  listeners.Append(watchdog);
  const int rc = RUN_ALL_TESTS();
  delete listeners.Release(watchdog);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

}  // namespace cush_test
