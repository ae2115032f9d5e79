// Does racecheck report hazards between the blocks of a cluster for per-block shared memory?
// Each block: thread 0 writes its shared array between two __syncthreads, every thread of the
// block reads it, blocks meet at cluster.sync(). Per block there is no race.
// Kept to check racecheck against the karst resident kernel (docs/reliability.md, "Sanitizers"):
//   nvcc -arch=sm_90 -o cl cluster.cu && compute-sanitizer --tool racecheck ./cl 2   (no argument: clusters of 1)
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;
__global__ void k(double* out, int iters) {
  __shared__ double f[64];
  cg::cluster_group cluster = cg::this_cluster();
  double acc = 0;
  for (int it = 0; it < iters; ++it) {
    __syncthreads();
    if (threadIdx.x == 0)
      for (int i = 0; i < 64; ++i) f[i] = it + i;
    __syncthreads();
    for (int i = 0; i < 64; ++i) acc += f[i];
    cluster.sync();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  const unsigned size = argc > 1 ? 2 : 1;
  double* out;
  cudaMalloc(&out, 2 * 256 * sizeof(double));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(2);
  cfg.blockDim = dim3(256);
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = size;
  a.val.clusterDim.y = a.val.clusterDim.z = 1;
  cfg.attrs = &a;
  cfg.numAttrs = 1;
  cudaError_t e = cudaLaunchKernelEx(&cfg, k, out, 4);
  printf("cluster of %u: launch %s, run %s\n", size, cudaGetErrorString(e), cudaGetErrorString(cudaDeviceSynchronize()));
  cudaFree(out);
  return 0;
}
