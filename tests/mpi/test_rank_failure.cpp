// The failure bound of cush::mpi under mpiexec with 2 ranks (docs/guide.md, "Failure across
// ranks"), with CUSH_MPI_WAIT_LIMIT_S=2 (set by ctest). First rank 1 comes 1 s late to a
// collective call: rank 0 waits for it. Then rank 1 stays away from the next one (as a rank that
// threw would): rank 0 must end the job with MPI_Abort about 2 s later, saying where it waited,
// while rank 1 still sleeps. ctest passes the test on that message and fails it at its time limit
// (the sleep is longer), or if rank 1 gets to say it was not ended.

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "cush/process_group.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    const cush::ProcessGroup group(MPI_COMM_WORLD, {});
    if (group.rank() == 1) std::this_thread::sleep_for(std::chrono::seconds(1));
    group.agree("test_rank_failure (late)", "a value", 7);
    if (group.rank() == 0) std::printf("rank 0: a rank 1 s late was waited for\n");
    std::fflush(stdout);
    if (group.rank() == 0) {
      group.agree("test_rank_failure (abandoned)", "a value", 8);
      std::printf("rank 0: the abandoned call returned\n");
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(60));
      std::printf("rank %d: not ended by the other rank's abort\n", group.rank());
    }
  }
  MPI_Finalize();
  return 0;
}
