// probe_diamond: a first GPU kernel of DiamondTorre's schedule (cases/wave/diamond.hpp), the wave
// case at order 2 in FP64, against the host model bit for bit and against the same run's copy.
//
// One block per tower, one thread per z node of the tower's (x, y) columns (z periodic, nz <= 256),
// one launch per stage of diamond_stages; the thread's work is cases/wave/diamond_tower.cuh (a
// host test checks it against the host model without a GPU). The block is z fastest.
//
//   usage: probe_diamond [n] [nz] [T] [reps]   (defaults 1024 256 16 5): a plane of n^2 columns
//   with T ghost columns a side, nz z nodes, T steps a sweep; radius R = 2 and 3 (compiled).
//
// Prints, per R: registers and spilled bytes of the kernel, the bits against the host model
// (37^2 x 64 and 96^2 x 128 blocks, T = 5 and 8: every column of the block), the time of a sweep,
// useful updates per second (n^2 nz T / time) and that over R1w = copy / 24 B.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "coefficients.hpp"
#include "cush/error.hpp"
#include "diamond.hpp"
#include "diamond_tower.cuh"
#include "probe_support.cuh"

namespace {

namespace wv = cases::wave;
namespace tw = cases::wave::tower;
using tw::Block;
using tw::Coefficients;
template <int R>
using Shape = tw::Shape<R>;

/// Step s of a tower (diamond_tower.cuh): cur names level s's parity, nxt the other.
template <int R>
__device__ __forceinline__ void step(double (&cur)[Shape<R>::kSlots], double (&nxt)[Shape<R>::kSlots], int s, int steps,
                                     int c, int cy, Block b, double* even, double* odd, double* zs, Coefficients k) {
  const int z = threadIdx.x, nz = blockDim.x;
  double* const here = s & 1 ? odd : even;
  double* const older = s & 1 ? even : odd;
  // Two planes by step parity: one barrier a step.
  double* const plane = zs + (s & 1) * Shape<R>::kCells * nz;
  tw::publish<R>(cur, plane, z, nz);
  __syncthreads();
  tw::update<R>(cur, nxt, plane, z, nz, c, cy, b, here, k);
  tw::move<R>(cur, nxt, s, steps, c, cy, b, here, older, z);
}

/// The towers of one stage, one a block, a thread a z node; dynamic shared memory 2 |D| nz doubles.
template <int R>
__global__ void __launch_bounds__(256) tower_kernel(const int2* bases, int steps, Block b, double* even, double* odd,
                                                     Coefficients k) {
  extern __shared__ double zs[];
  const int2 base = bases[blockIdx.x];
  double a[Shape<R>::kSlots], o[Shape<R>::kSlots];  // level parity 0 / 1 of every slot, as named at step 0
  tw::start<R>(a, o, base.x, base.y, b, even, odd, static_cast<int>(threadIdx.x));
  for (int s = 0; s < steps; s += 2) {
    step<R>(a, o, s, steps, base.x + s, base.y, b, even, odd, zs, k);
    if (s + 1 < steps) step<R>(o, a, s + 1, steps, base.x + s + 1, base.y, b, even, odd, zs, k);
  }
}

/// One sweep: every stage's towers, a launch a stage.
template <int R>
void sweep(const std::vector<int2*>& stage_bases, const std::vector<int>& stage_sizes, int steps, Block b, double* even,
           double* odd, Coefficients k) {
  const std::size_t smem = 2 * static_cast<std::size_t>(Shape<R>::kCells) * b.z * sizeof(double);
  for (std::size_t i = 0; i < stage_bases.size(); ++i)
    tower_kernel<R><<<stage_sizes[i], b.z, smem>>>(stage_bases[i], steps, b, even, odd, k);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

/// The stages of a sweep on the device.
struct DeviceStages {
  std::vector<int2*> bases;
  std::vector<int> sizes;
  DeviceStages(const std::vector<std::vector<wv::TowerBase>>& stages) {
    for (const auto& stage : stages) {
      std::vector<int2> h(stage.size());
      for (std::size_t i = 0; i < stage.size(); ++i) h[i] = {static_cast<int>(stage[i].x), static_cast<int>(stage[i].y)};
      int2* d = nullptr;
      CUSH_CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int2)));
      CUSH_CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(int2), cudaMemcpyHostToDevice));
      bases.push_back(d);
      sizes.push_back(static_cast<int>(h.size()));
    }
  }
  ~DeviceStages() {
    for (int2* d : bases) (void)cudaFree(d);  // a destructor cannot throw; a failed free leaks only
  }
  DeviceStages(const DeviceStages&) = delete;
  DeviceStages& operator=(const DeviceStages&) = delete;
};

Coefficients coefficients_of(double courant) {
  const auto c = wv::coefficients(2);
  const double c2 = courant * courant;
  return {c[1], c2, 2 + 6 * c[0] * c2};
}

template <int R>
void allow_shared(int nz) {
  const int smem = 2 * Shape<R>::kCells * nz * static_cast<int>(sizeof(double));
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(tower_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
}

/// The GPU sweep against the host model's on an nx x ny x nz block of random levels: the columns
/// of the block whose bits differ (NaN on both sides counts as equal: the edges).
template <int R>
long differing_from_model(int nx, int ny, int nz, int steps, double courant) {
  const Block b{nx, ny, nz};
  const std::size_t cells = static_cast<std::size_t>(nx) * ny * nz;
  std::vector<double> even(cells), odd(cells);
  std::srand(static_cast<unsigned>(nx * 7919 + steps));
  for (std::size_t i = 0; i < cells; ++i) {
    even[i] = std::rand() / static_cast<double>(RAND_MAX) - 0.5;
    odd[i] = std::rand() / static_cast<double>(RAND_MAX) - 0.5;
  }
  // The host model is x fastest; the device block z fastest.
  std::vector<double> de(cells), dodd(cells);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const std::size_t h = x + static_cast<std::size_t>(nx) * (y + static_cast<std::size_t>(ny) * z);
        de[b.at(x, y, z)] = even[h];
        dodd[b.at(x, y, z)] = odd[h];
      }
  const auto stages = wv::diamond_stages(nx, ny, R, steps);
  const auto order = wv::diamond_towers(nx, ny, R, steps);
  const Coefficients k = coefficients_of(courant);
  if (wv::diamond_sweep_host(k.courant2, nx, ny, nz, R, steps, order, even, odd).broken != 0)
    throw std::logic_error("the host model broke");
  double *ge = nullptr, *go = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&ge, cells * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&go, cells * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMemcpy(ge, de.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
  CUSH_CUDA_CHECK(cudaMemcpy(go, dodd.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
  {
    DeviceStages d(stages);
    sweep<R>(d.bases, d.sizes, steps, b, ge, go, k);
    CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUSH_CUDA_CHECK(cudaMemcpy(de.data(), ge, cells * sizeof(double), cudaMemcpyDeviceToHost));
  CUSH_CUDA_CHECK(cudaMemcpy(dodd.data(), go, cells * sizeof(double), cudaMemcpyDeviceToHost));
  CUSH_CUDA_CHECK(cudaFree(ge));
  CUSH_CUDA_CHECK(cudaFree(go));
  const auto same = [](double p, double q) {
    return (std::isnan(p) && std::isnan(q)) || std::memcmp(&p, &q, sizeof(double)) == 0;
  };
  long bad = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const std::size_t h = x + static_cast<std::size_t>(nx) * (y + static_cast<std::size_t>(ny) * z);
        if (!same(de[b.at(x, y, z)], even[h]) || !same(dodd[b.at(x, y, z)], odd[h])) ++bad;
      }
  return bad;
}

template <int R>
void measure(int n, int nz, int steps, int reps, double r1w) {
  allow_shared<R>(std::max(nz, 128));
  cudaFuncAttributes attr{};
  CUSH_CUDA_CHECK(cudaFuncGetAttributes(&attr, tower_kernel<R>));
  const long bad_small = differing_from_model<R>(37, 41, 64, 5, 0.5);
  const long bad_medium = differing_from_model<R>(96, 90, 128, 8, 0.3);
  // The timed sweep: n^2 columns and steps ghost columns a side, random levels.
  const int side = n + 2 * steps;
  const Block b{side, side, nz};
  const std::size_t cells = static_cast<std::size_t>(side) * side * nz;
  double *ge = nullptr, *go = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&ge, cells * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&go, cells * sizeof(double)));
  probe::fill_kernel<<<4096, 256>>>(ge, static_cast<long>(cells), 1);
  probe::fill_kernel<<<4096, 256>>>(go, static_cast<long>(cells), 2);
  CUSH_CUDA_CHECK(cudaGetLastError());
  const DeviceStages d(wv::diamond_stages(side, side, R, steps));
  // Each timed sweep starts from the last one's levels: the same work (values stay finite
  // inside; the edges turn NaN, which costs the same).
  const Coefficients k = coefficients_of(0.5);
  const double ms = probe::median_ms([&] { sweep<R>(d.bases, d.sizes, steps, b, ge, go, k); }, reps);
  CUSH_CUDA_CHECK(cudaFree(ge));
  CUSH_CUDA_CHECK(cudaFree(go));
  const double useful = static_cast<double>(n) * n * nz * steps / (ms * 1e-3) / 1e9;
  std::printf("| %d | %d | %d | %zu | %ld | %ld | %zu | %.3f | %.1f | %.2f |\n", R, attr.numRegs,
              static_cast<int>(attr.localSizeBytes), d.sizes.size(), bad_small, bad_medium,
              2 * static_cast<std::size_t>(Shape<R>::kCells) * nz * sizeof(double), ms, useful, useful / r1w);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
    const int nz = argc > 2 ? std::atoi(argv[2]) : 256;
    const int steps = argc > 3 ? std::atoi(argv[3]) : 16;
    const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
    if (n < 8 || nz < 64 || nz > 256 || nz % 32 != 0 || steps < 1 || steps > 64 || reps < 1) {
      std::fprintf(stderr, "usage: probe_diamond [n >= 8] [nz: 64 .. 256, a multiple of 32] [T: 1 .. 64] [reps]\n");
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
    std::printf("| R | regs | spilled B | stages | differing (37x41x64, T 5) | differing (96x90x128, T 8) | shared B | ms a sweep | useful G updates/s | x R1w |\n"
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    measure<2>(n, nz, steps, reps, r1w);
    measure<3>(n, nz, steps, reps, r1w);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "probe_diamond: %s\n", e.what());
    return 1;
  }
}
