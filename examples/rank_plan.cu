// A plan over the GPUs of every rank of an MPI program (cush::RankPlan): run with mpiexec, one
// GPU per process, e.g.
//   mpiexec -n 4 cush_rank_plan [n]
// Rank 0 scatters n floats over every rank's GPU, each rank scales its part with a kernel, rank 0
// gathers them and checks every element. Says SKIPPED where some rank has no GPU.

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/process_group.hpp"
#include "cush/rank_plan.hpp"

__global__ void scale(float* x, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + 255) / 256); }

int run(std::size_t n) {
  int gpus = cush::DeviceSet::available(), fewest = 0;
  MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest == 0) {
    std::printf("cush_rank_plan: SKIPPED: a rank has no GPU\n");
    return 0;
  }
  cush::ProcessGroup group(MPI_COMM_WORLD, {cush::ProcessGroup::local_rank(MPI_COMM_WORLD) % cush::DeviceSet::available()});
  std::vector<float> host(group.rank() == 0 ? n : 0);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 1000);
  cush::RankPlan<float> x(group, n);
  x.scatter(group.rank() == 0 ? host.data() : nullptr, 0);   // the root's buffer to every rank's GPUs
  x.local().for_each([](cush::Segment<float> s) { scale<<<blocks(s.size()), 256, 0, s.stream()>>>(s.data(), s.size()); });
  x.gather(group.rank() == 0 ? host.data() : nullptr, 0);
  x.wait();
  if (group.rank() != 0) return 0;
  for (std::size_t i = 0; i < n; ++i)
    if (host[i] != 2.0f * static_cast<float>(i % 1000)) {
      std::fprintf(stderr, "cush_rank_plan: element %zu is %g\n", i, static_cast<double>(host[i]));
      return 1;
    }
  std::printf("cush_rank_plan: %zu elements over %s: every element checked\n", n, group.describe().c_str());
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    const long long n = argc > 1 ? std::atoll(argv[1]) : 1 << 20;
    if (n <= 0) {
      std::fprintf(stderr, "usage: cush_rank_plan [n]   (n: a positive element count)\n");
      rc = 2;
    } else {
      rc = run(static_cast<std::size_t>(n));
    }
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_rank_plan: %s\n", e.what());
    rc = 1;
  }
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
