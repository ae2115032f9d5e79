// probe_diamond: the first GPU kernel of DiamondTorre's schedule (cases/wave/diamond_kernel.hpp,
// the wave case at order 2 in FP64) against the host model bit for bit and against the same run's
// copy.
//
//   usage: probe_diamond [n] [nz] [T] [reps] [R] [reads]   (defaults 1024 256 16 5): a plane of
//   n^2 columns with T ghost columns a side, nz z nodes (up to 2048: taller than 256, each tower's
//   column in a cluster of blocks, diamond_chunks), T steps a sweep; radius R = 1, 2, 3 and every
//   DiamondReads, or only the R and the reads (in_step, step_ahead, prefetched) given (for a
//   profiler).
//
// Prints, per R and per DiamondReads (the columns a tower does not keep read in the step, a step
// ahead, or several steps ahead into shared memory): the blocks a tower, registers and spilled
// bytes of the kernel, the stages of the sweep,
// the nodes that differ from the host model (37 x 41 x 64 and 96 x 90 x 128 blocks at T = 5 and
// 8, and 21 x 19 x 96 in 4 blocks a tower at T = 6: every node of the block, NaN at the edges
// against NaN), the time of a sweep, useful updates per second (n^2 nz T / time) and that over
// R1w = copy / 24 B.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "diamond_kernel.hpp"
#include "probe_support.cuh"

namespace {

namespace wv = cases::wave;

void measure(int radius, wv::DiamondReads reads, int n, int nz, int steps, int reps, double r1w) {
  const long bad_small = wv::DiamondSweep(radius, 37, 41, 64, 5, reads).check_against_model(0.5, 1).differing;
  const long bad_medium = wv::DiamondSweep(radius, 96, 90, 128, 8, reads).check_against_model(0.3, 2).differing;
  const long bad_cluster = wv::DiamondSweep(radius, 21, 19, 96, 6, reads, 4).check_against_model(0.4, 3).differing;
  // The timed sweep: n^2 columns and `steps` ghost columns a side, random levels. Each timed sweep
  // starts from the last one's levels: the same work (the edges turn NaN, which costs the same).
  const int side = n + 2 * steps;
  const std::size_t cells = static_cast<std::size_t>(side) * side * nz;
  double *ge = nullptr, *go = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&ge, cells * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&go, cells * sizeof(double)));
  probe::fill_kernel<<<4096, 256>>>(ge, static_cast<long>(cells), 1);
  probe::fill_kernel<<<4096, 256>>>(go, static_cast<long>(cells), 2);
  CUSH_CUDA_CHECK(cudaGetLastError());
  const wv::DiamondSweep sweep(radius, side, side, nz, steps, reads);
  const cudaFuncAttributes attr = sweep.attributes();
  const double ms = probe::median_ms([&] { sweep.run(ge, go, 0.5, nullptr); }, reps);
  CUSH_CUDA_CHECK(cudaFree(ge));
  CUSH_CUDA_CHECK(cudaFree(go));
  const double useful = static_cast<double>(n) * n * nz * steps / (ms * 1e-3) / 1e9;
  std::printf("| %d | %s | %d | %d | %zu | %zu | %ld | %ld | %ld | %.3f | %.1f | %.2f |\n", radius,
              wv::name(reads), sweep.chunks().chunks, attr.numRegs,
              attr.localSizeBytes, sweep.stages(), bad_small, bad_medium, bad_cluster, ms, useful, useful / r1w);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
    const int nz = argc > 2 ? std::atoi(argv[2]) : 256;
    const int steps = argc > 3 ? std::atoi(argv[3]) : 16;
    const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
    const int only_radius = argc > 5 ? std::atoi(argv[5]) : 0;
    const std::string only_reads = argc > 6 ? argv[6] : "";
    bool known_reads = only_reads.empty();
    for (auto r : wv::kDiamondReads) known_reads = known_reads || only_reads == wv::name(r);
    if (n < 8 || nz < 64 || nz > 2048 || steps < 1 || steps > 64 || reps < 1 || only_radius < 0 || only_radius > 3 ||
        !known_reads) {
      std::fprintf(stderr,
                   "usage: probe_diamond [n >= 8] [nz: 64 .. 2048] [T: 1 .. 64] [reps >= 1] [R: 1 .. 3, 0 all] "
                   "[in_step|step_ahead|prefetched]\n");
      return 2;
    }
    // The copy as bench/roofs.cu's roof/copy row makes it: cudaMemcpyAsync of 2 GiB.
    const std::size_t copy_bytes = std::size_t{2048} << 20;
    void *p = nullptr, *q = nullptr;
    CUSH_CUDA_CHECK(cudaMalloc(&p, copy_bytes));
    CUSH_CUDA_CHECK(cudaMalloc(&q, copy_bytes));
    const double copy_ms = probe::median_ms([&] { CUSH_CUDA_CHECK(cudaMemcpyAsync(q, p, copy_bytes, cudaMemcpyDeviceToDevice)); }, 10);
    CUSH_CUDA_CHECK(cudaFree(p));
    CUSH_CUDA_CHECK(cudaFree(q));
    const double copy_gbs = 2.0 * static_cast<double>(copy_bytes) / copy_ms / 1e6, r1w = copy_gbs / 24;
    std::printf("probe_diamond: %d^2 columns of %d nodes, FP64, order 2, %d steps a sweep, %d repetitions\n", n, nz, steps, reps);
    std::printf("copy %.0f GB/s: R1w = %.1f G updates/s\n\n", copy_gbs, r1w);
    std::printf("| R | reads | blocks a tower | regs | spilled B | stages | differing (37x41x64, T 5) | differing (96x90x128, T 8) | differing (21x19x96, 4 blocks, T 6) | ms a sweep | useful G updates/s | x R1w |\n"
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int radius = 1; radius <= 3; ++radius)
      for (auto reads : wv::kDiamondReads)
        if ((only_radius == 0 || radius == only_radius) && (only_reads.empty() || only_reads == wv::name(reads)))
          measure(radius, reads, n, nz, steps, reps, r1w);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "probe_diamond: %s\n", e.what());
    return 1;
  }
}
