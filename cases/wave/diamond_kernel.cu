#include "diamond_kernel.hpp"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <random>
#include <stdexcept>
#include <string>

#include "coefficients.hpp"
#include "cush/error.hpp"
#include "diamond.hpp"
#include "diamond_tower.cuh"

namespace cases {
namespace wave {
namespace {

namespace tw = tower;
namespace cg = cooperative_groups;

/// A thread's place: its tower, its block's chunk of the tower's column, its lane and z node.
struct Place {
  int tower, chunk, lane, lanes, z;
};

template <bool Cluster>
__device__ __forceinline__ Place place_of(int chunks) {
  const int lane = static_cast<int>(threadIdx.x), lanes = static_cast<int>(blockDim.x);
  if constexpr (!Cluster) return {static_cast<int>(blockIdx.x), 0, lane, lanes, lane};  // the column whole
  const int chunk = static_cast<int>(blockIdx.x) % chunks;
  return {static_cast<int>(blockIdx.x) / chunks, chunk, lane, lanes, chunk * lanes + lane};
}

/// The barrier of a step: the block's, or the cluster's where a tower spans several blocks.
template <bool Cluster>
__device__ __forceinline__ void step_barrier() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Cluster) {
    cg::this_cluster().sync();
    return;
  }
#endif
  __syncthreads();
}

/// Where block `chunk` of the cluster keeps what this block keeps at `mine` (its own shared
/// memory without a cluster).
template <bool Cluster>
__device__ __forceinline__ double* in_block(double* mine, int chunk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Cluster) return cg::this_cluster().map_shared_rank(mine, static_cast<unsigned>(chunk));
#endif
  (void)chunk;
  return mine;
}

/// Step s of a tower: cur names level s's parity, nxt the other; top and bottom hold the
/// vertices' neighbours at level s if Ahead (read during step s - 1), and step s + 1's after.
template <int R, bool Ahead, bool Cluster>
__device__ __forceinline__ void tower_step(double (&cur)[tw::Shape<R>::kSlots], double (&nxt)[tw::Shape<R>::kSlots], int s,
                                           int steps, int c, int cy, tw::Block b, double* even, double* odd, double* zs,
                                           tw::Coefficients k, double& top, double& bottom, const Place& p, int chunks) {
  double* const here = s & 1 ? odd : even;
  double* const older = s & 1 ? even : odd;
  double next_top = 0, next_bottom = 0;
  if constexpr (Ahead) {
    if (s + 1 < steps) tw::vertices<R>(older, b, c + 1, cy, p.z, next_top, next_bottom);
  }
  // Two planes by step parity, lanes + 2 slots a column: one barrier a step (a block's plane is
  // written again two steps later, after every block of the tower has passed the barrier between,
  // so after their reads of it).
  const int stride = p.lanes + 2;
  double* const plane = zs + (s & 1) * tw::Shape<R>::kCells * stride;
  tw::publish_with_halos<R>(cur, p.chunk, chunks, p.lane, p.lanes,
                            [&](int chunk) { return chunk == p.chunk ? plane : in_block<Cluster>(plane, chunk); });
  step_barrier<Cluster>();
  if constexpr (!Ahead) tw::vertices<R>(here, b, c, cy, p.z, top, bottom);
  tw::update<R>(cur, nxt, plane, p.lane + 1, stride, top, bottom, k);
  tw::move<R>(cur, nxt, s, steps, c, cy, b, here, older, p.z);
  if constexpr (Ahead) {
    top = next_top;
    bottom = next_bottom;
  }
}

/// The towers of one stage, `chunks` blocks a tower (Cluster: a cluster of them; else 1), a thread
/// a z node; dynamic shared memory 2 |D| (lanes + 2) doubles.
template <int R, bool Ahead, bool Cluster>
__global__ void __launch_bounds__(256) tower_kernel(const int2* bases, int steps, tw::Block b, double* even, double* odd,
                                                     tw::Coefficients k, int chunks) {
  extern __shared__ double zs[];
  const Place p = place_of<Cluster>(chunks);
  const int2 base = bases[p.tower];
  double a[tw::Shape<R>::kSlots], o[tw::Shape<R>::kSlots];  // level parity 0 / 1 of every slot at step 0
  tw::start<R>(a, o, base.x, base.y, b, even, odd, p.z);
  double top = 0, bottom = 0;
  if constexpr (Ahead) tw::vertices<R>(even, b, base.x, base.y, p.z, top, bottom);
  // In a cluster, no block's shared memory is written before every block of it runs.
  if constexpr (Cluster) step_barrier<Cluster>();
  for (int s = 0; s < steps; s += 2) {
    tower_step<R, Ahead, Cluster>(a, o, s, steps, base.x + s, base.y, b, even, odd, zs, k, top, bottom, p, chunks);
    if (s + 1 < steps)
      tower_step<R, Ahead, Cluster>(o, a, s + 1, steps, base.x + s + 1, base.y, b, even, odd, zs, k, top, bottom, p, chunks);
  }
  // No block leaves while another of its cluster may still read its shared memory.
  if constexpr (Cluster) step_barrier<Cluster>();
}

template <int R>
std::size_t shared_bytes(int lanes) {
  return 2 * static_cast<std::size_t>(tw::Shape<R>::kCells) * static_cast<std::size_t>(lanes + 2) * sizeof(double);
}

/// The kernel of a radius, a DiamondVertices and whether a tower spans a cluster.
template <int R>
auto kernel_of(DiamondVertices v, bool cluster) {
  if (cluster) return v == DiamondVertices::step_ahead ? tower_kernel<R, true, true> : tower_kernel<R, false, true>;
  return v == DiamondVertices::step_ahead ? tower_kernel<R, true, false> : tower_kernel<R, false, false>;
}

/// Calls f(kernel_of<R>(v, cluster), shared_bytes<R>) for R = radius.
template <class F>
auto with_kernel(int radius, DiamondVertices v, bool cluster, F&& f) {
  switch (radius) {
    case 1: return f(kernel_of<1>(v, cluster), shared_bytes<1>);
    case 2: return f(kernel_of<2>(v, cluster), shared_bytes<2>);
    default: return f(kernel_of<3>(v, cluster), shared_bytes<3>);
  }
}

}  // namespace

DiamondSweep::DiamondSweep(int radius, std::size_t nx, std::size_t ny, std::size_t nz, std::size_t steps,
                           DiamondVertices vertices, std::size_t chunks)
    : radius_(radius), nx_(static_cast<int>(nx)), ny_(static_cast<int>(ny)), nz_(static_cast<int>(nz)),
      steps_(static_cast<int>(steps)), vertices_(vertices) {
  if (radius < 1 || radius > 3 || nx == 0 || ny == 0 || nx > (1u << 20) || ny > (1u << 20) || nz < 3 || nz > 2048 ||
      steps < 1 || steps > 1024)
    throw std::invalid_argument("cases::wave::DiamondSweep: radius " + std::to_string(radius) + " (1 .. 3), a block of " +
                                std::to_string(nx) + " x " + std::to_string(ny) + " columns of " + std::to_string(nz) +
                                " nodes (3 .. 2048) and " + std::to_string(steps) + " steps (1 .. 1024)");
  if (vertices != DiamondVertices::in_step && vertices != DiamondVertices::step_ahead)
    throw std::invalid_argument("cases::wave::DiamondSweep: not a DiamondVertices");
  chunks_ = diamond_chunks(nz, chunks);  // std::invalid_argument where the column does not fit 8 blocks
  if (chunks_.chunks > 1) {
    int device = 0, major = 0;
    CUSH_CUDA_CHECK(cudaGetDevice(&device));
    CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 9)
      throw std::invalid_argument("cases::wave::DiamondSweep: a column of " + std::to_string(nz) + " nodes runs in " +
                                  std::to_string(chunks_.chunks) +
                                  " blocks a tower, a thread-block cluster, which needs compute capability 9.0; this GPU has " +
                                  std::to_string(major) + ".x");
  }
  // The kernel's shared memory (over the 48 KiB default at R >= 2 and 256 lanes): allowed once,
  // when a sweep is made, not on every run.
  with_kernel(radius, vertices, chunks_.chunks > 1, [&](auto kernel, auto bytes) {
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes(chunks_.lanes))));
  });
  try {
    for (const std::vector<TowerBase>& stage : diamond_stages(nx, ny, radius, steps)) {
      std::vector<int2> h(stage.size());
      for (std::size_t i = 0; i < stage.size(); ++i) h[i] = int2{static_cast<int>(stage[i].x), static_cast<int>(stage[i].y)};
      void* d = nullptr;
      CUSH_CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int2)));
      bases_.push_back(d);
      sizes_.push_back(static_cast<int>(h.size()));
      CUSH_CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(int2), cudaMemcpyHostToDevice));
    }
  } catch (...) {
    for (void* d : bases_) (void)cudaFree(d);  // already failing: the first error is the one reported
    throw;
  }
}

DiamondSweep::~DiamondSweep() {
  for (void* d : bases_) (void)cudaFree(d);  // a destructor cannot throw; a failed free leaks only this
}

void DiamondSweep::run_on_host(std::vector<double>& even, std::vector<double>& odd, double courant) const {
  const std::size_t cells = static_cast<std::size_t>(nx_) * ny_ * nz_;
  std::vector<double> e = z_fastest(even, nx_, ny_, nz_), o = z_fastest(odd, nx_, ny_, nz_);
  double* d[2] = {nullptr, nullptr};
  try {
    CUSH_CUDA_CHECK(cudaMalloc(&d[0], cells * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMalloc(&d[1], cells * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMemcpy(d[0], e.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
    CUSH_CUDA_CHECK(cudaMemcpy(d[1], o.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
    run(d[0], d[1], courant, nullptr);
    CUSH_CUDA_CHECK(cudaMemcpy(e.data(), d[0], cells * sizeof(double), cudaMemcpyDeviceToHost));
    CUSH_CUDA_CHECK(cudaMemcpy(o.data(), d[1], cells * sizeof(double), cudaMemcpyDeviceToHost));
  } catch (...) {
    for (double* p : d) (void)cudaFree(p);  // already failing: the first error is the one reported
    throw;
  }
  CUSH_CUDA_CHECK(cudaFree(d[0]));
  CUSH_CUDA_CHECK(cudaFree(d[1]));
  even = x_fastest(e, nx_, ny_, nz_);
  odd = x_fastest(o, nx_, ny_, nz_);
}

BlockComparison DiamondSweep::check_against_model(double courant, unsigned long long seed) const {
  const std::size_t cells = static_cast<std::size_t>(nx_) * ny_ * nz_;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> even(cells), odd(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    even[i] = u(rng);
    odd[i] = u(rng);
  }
  std::vector<double> got_even = even, got_odd = odd;
  run_on_host(got_even, got_odd, courant);
  const std::vector<TowerBase> order = diamond_towers(nx_, ny_, radius_, steps_);
  if (diamond_sweep_host(courant * courant, nx_, ny_, nz_, radius_, steps_, order, even, odd).broken != 0)
    throw std::logic_error("cases::wave::DiamondSweep::check_against_model: the host model's sweep broke");
  return compare_blocks(got_even, got_odd, even, odd, nx_, ny_, nz_, steps_);
}

cudaFuncAttributes DiamondSweep::attributes() const {
  cudaFuncAttributes a{};
  with_kernel(radius_, vertices_, chunks_.chunks > 1, [&](auto kernel, auto) { CUSH_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel)); });
  return a;
}

void DiamondSweep::run(double* even, double* odd, double courant, cudaStream_t stream) const {
  check_courant(2, courant);
  const auto c = coefficients(2);
  const double c2 = courant * courant;
  const tw::Coefficients k{c[1], c2, 2 + 6 * c[0] * c2};
  const tw::Block b{nx_, ny_, nz_};
  const int chunks = chunks_.chunks;
  with_kernel(radius_, vertices_, chunks > 1, [&](auto kernel, auto bytes) {
    cudaLaunchConfig_t config{};
    config.blockDim = dim3(static_cast<unsigned>(chunks_.lanes));
    config.dynamicSmemBytes = bytes(chunks_.lanes);
    config.stream = stream;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(chunks);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    if (chunks > 1) {  // a cluster only where a tower spans blocks (so that GPUs before 9.0 run the rest)
      config.attrs = &cluster;
      config.numAttrs = 1;
    }
    for (std::size_t i = 0; i < bases_.size(); ++i) {
      config.gridDim = dim3(static_cast<unsigned>(sizes_[i] * chunks));
      CUSH_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<const int2*>(bases_[i]), steps_, b, even, odd, k, chunks));
    }
  });
}

}  // namespace wave
}  // namespace cases
