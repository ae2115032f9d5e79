#pragma once
// What the stencil probes share (probe_stencil, probe_steps, probe_wave): random fills, a plain
// copy, a bit-for-bit comparison over a box and the median time of a launch. A box is any type
// with x0, y0, z0, nx, ny, nz, pitch_x and pitch_y (the cases' Box; cases::grown grows one).

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cush/error.hpp"

namespace probe {

/// u[i] = a hash of (i, seed) as a double in [-0.5, 0.5).
__global__ inline void fill_kernel(double* u, long cells, unsigned long long seed) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < cells; i += static_cast<long>(gridDim.x) * blockDim.x) {
    unsigned long long h = (static_cast<unsigned long long>(i) + seed) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    u[i] = static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5;
  }
}

__global__ inline void copy_kernel(const double* __restrict__ in, double* __restrict__ out, long cells) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < cells; i += static_cast<long>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

/// Counts into *bad the cells of box `pa` of `a` that differ bit for bit from the same cells
/// (in order) of box `pb` of `b`: the boxes are of one size, their layouts may differ.
template <class Box>
__global__ void diff_kernel(const double* a, Box pa, const double* b, Box pb, unsigned long long* bad) {
  const long cells = pa.nx * pa.ny * pa.nz;
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < cells; t += static_cast<long>(gridDim.x) * blockDim.x) {
    const long x = t % pa.nx, y = (t / pa.nx) % pa.ny, z = t / (pa.nx * pa.ny);
    const long ia = ((z + pa.z0) * pa.pitch_y + y + pa.y0) * pa.pitch_x + x + pa.x0;
    const long ib = ((z + pb.z0) * pb.pitch_y + y + pb.y0) * pb.pitch_x + x + pb.x0;
    if (__double_as_longlong(a[ia]) != __double_as_longlong(b[ib])) atomicAdd(bad, 1ULL);
  }
}

/// The cells of `box` where a and b (one layout) differ bit for bit.
template <class Box>
unsigned long long differing(const double* a, const double* b, const Box& box, unsigned long long* counter) {
  CUSH_CUDA_CHECK(cudaMemset(counter, 0, sizeof(*counter)));
  diff_kernel<<<4096, 256>>>(a, box, b, box, counter);
  CUSH_CUDA_CHECK(cudaGetLastError());
  unsigned long long d = 0;
  CUSH_CUDA_CHECK(cudaMemcpy(&d, counter, sizeof(d), cudaMemcpyDeviceToHost));
  return d;
}

/// The median of `reps` timings (CUDA events on the default stream) of launch(), after 2 warm-ups.
template <class F>
double median_ms(F launch, int reps) {
  cudaEvent_t a, b;
  CUSH_CUDA_CHECK(cudaEventCreate(&a));
  CUSH_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 2; ++i) launch();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    CUSH_CUDA_CHECK(cudaEventRecord(a));
    launch();
    CUSH_CUDA_CHECK(cudaEventRecord(b));
    CUSH_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    CUSH_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CUSH_CUDA_CHECK(cudaEventDestroy(a));
  CUSH_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// True where `name` contains `texts` or one of its parts split by '|' (an empty text matches all).
inline bool matches(const std::string& name, const std::string& texts) {
  std::size_t from = 0;
  while (true) {
    const std::size_t bar = texts.find('|', from);
    if (name.find(texts.substr(from, bar == std::string::npos ? std::string::npos : bar - from)) != std::string::npos)
      return true;
    if (bar == std::string::npos) return false;
    from = bar + 1;
  }
}

}  // namespace probe
