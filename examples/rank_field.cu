// A field over the GPUs of every rank of an MPI program (cush::RankField): the time step of
// field_step.cu (explicit heat diffusion on a periodic 2D grid, the exchange hidden behind the
// interior cells), with one process per GPU. Rank 0 scatters the start, every rank steps its own
// block, rank 0 gathers the result and compares it with the same steps on the host. Run with
// mpiexec, e.g.
//   mpiexec -n 4 cush_rank_field [n=1024] [steps=20]      (--help: usage)
// Says SKIPPED where some rank has no GPU.

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/process_group.hpp"
#include "cush/rank_field.hpp"
#include "heat2d.cuh"

namespace {

int run(std::size_t n, std::size_t steps) {
  int gpus = cush::DeviceSet::available(), fewest = 0;
  MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest == 0) {
    std::printf("cush_rank_field: SKIPPED: a rank has no GPU\n");
    return 0;
  }
  cush::ProcessGroup group(MPI_COMM_WORLD, {cush::ProcessGroup::local_rank(MPI_COMM_WORLD) % cush::DeviceSet::available()});
  cush::GridOptions options;
  options.periodic = {true, true, false};
  cush::RankField<double> a(group, cush::Extent3{n, n, 1}, 2, options);  // one block per rank's GPU
  cush::RankField<double> b = cush::RankField<double>::alike(a);
  const cush::Decomposition& grid = a.grid();
  const bool root = group.rank() == 0;
  if (root)
    std::printf("cush_rank_field: %zu x %zu cells, blocks %zu x %zu, %zu steps, halos over %s; %s\n", n, n,
                grid.blocks()[0], grid.blocks()[1], steps, a.transport() == cush::RankTransport::ipc    ? "CUDA IPC"
                : a.transport() == cush::RankTransport::nccl ? "NCCL"
                                                             : "MPI",
                group.describe().c_str());

  std::vector<double> start(root ? n * n : 0);
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = std::sin(0.001 * static_cast<double>(i % 7919));
  a.scatter(root ? start.data() : nullptr, 0);
  cush::RankField<double>* u = &a;
  cush::RankField<double>* v = &b;
  for (std::size_t s = 0; s < steps; ++s) {
    u->exchange_overlapped(1, [&](const cush::Block<double>& in, const cush::Box& box) {
      heat2d::step(in, v->block(in.pos()), box);
    });
    std::swap(u, v);
  }
  std::vector<double> result(root ? n * n : 0);
  u->gather(root ? result.data() : nullptr, 0);
  u->wait();
  if (!root) return 0;
  const std::vector<double> want = heat2d::host_steps(start, n, steps);
  double worst = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(result[i] - want[i]));
  const bool ok = worst <= 1e-12;
  std::printf("  largest difference from the host: %.3g  %s\n", worst, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}

}  // namespace

// A whole number of at least `least` in `text`, or -1.
long long whole(const char* text, long long least) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && v >= least ? v : -1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* usage = "usage: cush_rank_field [n] [steps]   (n: cells per side, 8 or more, default 1024; steps: 0 or more, default 20)\n";
  int rc = 0;
  try {
    const bool help = argc > 1 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help");
    const long long n = argc > 1 ? whole(argv[1], 8) : 1024;
    const long long steps = argc > 2 ? whole(argv[2], 0) : 20;
    if (help || n < 0 || steps < 0 || argc > 3) {
      if (rank == 0) std::fprintf(help ? stdout : stderr, "%s", usage);
      rc = help ? 0 : 2;
    } else {
      rc = run(static_cast<std::size_t>(n), static_cast<std::size_t>(steps));
    }
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_rank_field: %s\n", e.what());
    rc = 1;
  }
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
