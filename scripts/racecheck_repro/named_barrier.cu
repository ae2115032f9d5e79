// Does racecheck report hazards when some warps also use a named barrier (bar.sync 1, 128)?
// Thread 0 writes shared memory between two __syncthreads, every thread reads it: no race.
// Kept to check racecheck against the karst resident kernel (docs/reliability.md, "Sanitizers"):
//   nvcc -arch=sm_90 -o nb named_barrier.cu && compute-sanitizer --tool racecheck ./nb named   (no argument: the control)
#include <cstdio>
template <bool Named>
__global__ void k(double* out, int iters) {
  __shared__ double f[64];
  double acc = 0;
  for (int it = 0; it < iters; ++it) {
    __syncthreads();
    if (threadIdx.x == 0)
      for (int i = 0; i < 64; ++i) f[i] = it + i;
    __syncthreads();
    for (int i = 0; i < 64; ++i) acc += f[i];
    if (Named && threadIdx.x < 128) asm volatile("bar.sync 1, 128;" ::: "memory");
  }
  out[threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  const bool named = argc > 1;
  double* out;
  cudaMalloc(&out, 256 * sizeof(double));
  if (named) k<true><<<1, 256>>>(out, 4); else k<false><<<1, 256>>>(out, 4);
  printf("%s: %s\n", named ? "named barrier" : "control", cudaGetErrorString(cudaDeviceSynchronize()));
  cudaFree(out);
  return 0;
}
