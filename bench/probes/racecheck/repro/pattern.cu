// The karst resident kernel's synchronization pattern with nothing else, race-free by
// construction: per step, thread 0 writes a factor array in dynamic shared memory between two
// __syncthreads(), the block's column threads read it, the cluster meets, block 0's first 128
// threads run a "water step" that meets `named` times on named barrier 1 (bar.sync 1, 128), and the
// cluster meets again.
//   pattern THREADS NAMED CLUSTER [COLUMNS]
// CLUSTER 0: no cluster launch, __syncthreads() where the kernel has cluster.sync().
// Built and run by bench/probes/racecheck/repro/run.sh. With NAMED 0, or with 128 threads (the named
// barrier is then the whole block), racecheck reports 0 hazards. With more threads than the named
// barrier's and NAMED > 0 it can report RAW hazards between thread 0's writes and the other
// warps' reads across the two __syncthreads(), a different number from run to run (0 to 104 on an
// H200, CUDA 13.0): false reports, which is why the karst kernel's water step no longer uses a
// named barrier (docs/reliability.md, "Sanitizers").
#include <cooperative_groups.h>

#include <cstdio>
#include <cstdlib>

namespace cg = cooperative_groups;

constexpr int kM = 37;

template <bool Cluster>
__device__ void meet() {
  if constexpr (Cluster) cg::this_cluster().sync();
  else __syncthreads();
}

template <bool Cluster>
__global__ void k(double* out, int steps, int named, int columns) {
  extern __shared__ double dynamic[];
  double* lu = dynamic;
  double* ul = lu + kM;
  double* w = ul + kM;  // 128 "water" values
  int rank = 0;
  if constexpr (Cluster) rank = static_cast<int>(cg::this_cluster().block_rank());
  const bool mine = static_cast<int>(threadIdx.x) < columns;
  for (int i = threadIdx.x; i < 128; i += blockDim.x) w[i] = 1.0;
  meet<Cluster>();
  double acc = 0.0;
  const auto factor = [&](double* f, int s) {
    __syncthreads();
    if (threadIdx.x == 0)
      for (int i = 0; i < kM; ++i) f[i] = s + i;
    __syncthreads();
  };
  const auto pass = [&](const double* f) {
    if (!mine) return;
    for (int i = 0; i < kM; ++i) acc += f[i];
  };
  factor(lu, 0);
  pass(lu);
  for (int s = 0; s < steps; s += 2) {
    factor(ul, s + 1);
    pass(ul);
    meet<Cluster>();
    if (rank == 0) {
      if (threadIdx.x < 128) {
        for (int b = 0; b < named; ++b) {
          const double mine_w = w[threadIdx.x];
          asm volatile("bar.sync 1, 128;" ::: "memory");
          w[(threadIdx.x + 1) % 128] = mine_w + 1.0;
          asm volatile("bar.sync 1, 128;" ::: "memory");
        }
      }
      __syncthreads();
    }
    meet<Cluster>();
    factor(lu, s + 2);
    pass(lu);
  }
  meet<Cluster>();
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc + w[threadIdx.x % 128];
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s THREADS NAMED CLUSTER [COLUMNS]\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[1]), named = std::atoi(argv[2]), cluster = std::atoi(argv[3]);
  const int columns = argc > 4 ? std::atoi(argv[4]) : threads;
  const int blocks = 2 * (cluster > 0 ? cluster : 1);
  double* out = nullptr;
  cudaMalloc(&out, blocks * threads * sizeof(double));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = (2 * kM + 128) * sizeof(double);
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = static_cast<unsigned>(cluster);
  a.val.clusterDim.y = a.val.clusterDim.z = 1;
  cfg.attrs = &a;
  cfg.numAttrs = cluster > 0 ? 1 : 0;
  const cudaError_t e = cluster > 0 ? cudaLaunchKernelEx(&cfg, k<true>, out, 6, named, columns)
                                    : cudaLaunchKernelEx(&cfg, k<false>, out, 6, named, columns);
  std::printf("threads %d, named barriers %d, cluster %d, columns %d: launch %s, run %s\n", threads, named, cluster,
              columns, cudaGetErrorString(e), cudaGetErrorString(cudaDeviceSynchronize()));
  cudaFree(out);
  return 0;
}
