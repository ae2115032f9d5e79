// The processes of an MPI program and their GPUs (cush::ProcessGroup): run with mpiexec, e.g.
//   mpiexec -n 4 cush_process_group            every GPU each process can use
//   mpiexec -n 4 cush_process_group --one      one GPU per process (by its rank on its host)
// Prints the group as rank 0 sees it and checks that every rank agrees on a size.

#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/process_group.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    // One GPU per process: the ranks of each host take its GPUs in turn.
    const int local = cush::ProcessGroup::local_rank(MPI_COMM_WORLD);
    std::vector<int> mine;
    const int gpus = cush::DeviceSet::available();
    const bool one = argc > 1 && std::string(argv[1]) == "--one";
    for (int d = 0; d < gpus; ++d)
      if (!one || d == local % gpus) mine.push_back(d);
    const cush::ProcessGroup group(MPI_COMM_WORLD, mine);
    group.agree("cush_process_group", "the problem size", 1 << 20);  // the same on every rank
    if (group.rank() == 0) std::printf("%s\n", group.describe().c_str());
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_process_group: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
