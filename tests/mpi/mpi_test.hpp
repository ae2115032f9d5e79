#pragma once
// Shared by the tests that run under mpiexec (tests/mpi): every rank runs the same tests; a
// failure on one rank fails the run on all.

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

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

/// The main() of such a test: MPI up, GoogleTest's progress printed by rank 0 only (a failure on
/// any rank is printed by that rank), the worst result of all ranks returned by each.
inline int run_mpi_tests(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

}  // namespace cush_test
