#include "diamond_kernel.hpp"

#include <cooperative_groups.h>
#include <cuda_pipeline.h>
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

/// prefetch_steps(R) as a constant the kernels can use.
template <int R>
constexpr int kAhead = prefetch_steps(R);

/// A prefetched step's reads (DiamondReads::prefetched): K steps' tower::StepReads in shared
/// memory, value i of step t for lane l at ring[((t % K) kValues + i) lanes + l]. Each thread
/// copies and reads only its own lane's values, so its own waits (cp.async groups, one a step)
/// order them: no barrier.
template <int R, int K>
struct Ring {
  static constexpr int kValues = tw::StepReads<R>::kValues;
  double* ring;
  int lane, lanes;
  /// Where step t's values for this thread's lane start (value i at slot(t)[i lanes]).
  __device__ __forceinline__ double* slot(int t) const { return ring + (t % K) * kValues * lanes + lane; }
  /// Starts the copies of step t's reads (none past the last step) and commits them as a group;
  /// a thread calls it once a step, after the last use of the slot's values it overwrites.
  __device__ __forceinline__ void request(int t, int steps, int bx, int by, tw::Block b, const double* even,
                                          const double* odd, int z) const {
    if (t < steps) {
      double* const to = slot(t);
      tw::step_reads<R>(t, steps, bx, by, b, even, odd, z, [&](int i, const double* from) {
        if (from)
          __pipeline_memcpy_async(to + i * lanes, from, sizeof(double));
        else
          to[i * lanes] = tw::nan_value();
      });
    }
    __pipeline_commit();
  }
  /// Waits for step t's copies: K groups are in flight before step t's wait, the newest K - 1 later ones.
  __device__ __forceinline__ const double* wait(int t) const {
    __pipeline_wait_prior(K - 1);
    return slot(t);
  }
};

/// Step s of a tower: cur names level s's parity, nxt the other; top and bottom hold the
/// vertices' neighbours at level s if Reads is step_ahead (read during step s - 1), and step
/// s + 1's after.
template <int R, DiamondReads Reads, bool Cluster>
__device__ __forceinline__ void tower_step(double (&cur)[tw::Shape<R>::kSlots], double (&nxt)[tw::Shape<R>::kSlots], int s,
                                           int steps, int bx, int cy, tw::Block b, double* even, double* odd, double* zs,
                                           tw::Coefficients k, double& top, double& bottom, const Place& p, int chunks) {
  constexpr int K = kAhead<R>;
  const int c = bx + s;
  double* const here = s & 1 ? odd : even;
  double* const older = s & 1 ? even : odd;
  double next_top = 0, next_bottom = 0;
  if constexpr (Reads == DiamondReads::step_ahead) {
    if (s + 1 < steps) tw::vertices<R>(older, b, c + 1, cy, p.z, next_top, next_bottom);
  }
  // Two planes by step parity, lanes + 2 slots a column: one barrier a step (a block's plane is
  // written again two steps later, after every block of the tower has passed the barrier between,
  // so after their reads of it). The prefetch ring follows the planes.
  const int stride = p.lanes + 2;
  double* const plane = zs + (s & 1) * tw::Shape<R>::kCells * stride;
  const Ring<R, K> ring{zs + 2 * tw::Shape<R>::kCells * stride, p.lane, p.lanes};
  const double* fetched = nullptr;
  if constexpr (Reads == DiamondReads::prefetched) fetched = ring.wait(s);
  tw::publish_with_halos<R>(cur, p.chunk, chunks, p.lane, p.lanes,
                            [&](int chunk) { return chunk == p.chunk ? plane : in_block<Cluster>(plane, chunk); });
  step_barrier<Cluster>();
  if constexpr (Reads == DiamondReads::in_step) tw::vertices<R>(here, b, c, cy, p.z, top, bottom);
  if constexpr (Reads == DiamondReads::prefetched) {
    top = fetched[0];
    bottom = fetched[p.lanes];
  }
  tw::update<R>(cur, nxt, plane, p.lane + 1, stride, top, bottom, k);
  if constexpr (Reads == DiamondReads::prefetched) {
    tw::move<R>(cur, nxt, s, steps, c, cy, b, here, older, p.z, [&](int r, double& cur_value, double& nxt_value) {
      cur_value = fetched[(2 + 2 * r) * p.lanes];
      nxt_value = fetched[(3 + 2 * r) * p.lanes];
    });
    ring.request(s + K, steps, bx, cy, b, even, odd, p.z);  // into the slot just used
  } else {
    tw::move<R>(cur, nxt, s, steps, c, cy, b, here, older, p.z);
  }
  if constexpr (Reads == DiamondReads::step_ahead) {
    top = next_top;
    bottom = next_bottom;
  }
}

/// The towers of one stage, `chunks` blocks a tower (Cluster: a cluster of them; else 1), a thread
/// a z node; dynamic shared memory shared_bytes<R>.
template <int R, DiamondReads Reads, bool Cluster>
__global__ void __launch_bounds__(256) tower_kernel(const int2* bases, int steps, tw::Block b, double* even, double* odd,
                                                     tw::Coefficients k, int chunks) {
  extern __shared__ double zs[];
  const Place p = place_of<Cluster>(chunks);
  const int2 base = bases[p.tower];
  double a[tw::Shape<R>::kSlots], o[tw::Shape<R>::kSlots];  // level parity 0 / 1 of every slot at step 0
  if constexpr (Reads == DiamondReads::prefetched) {
    const Ring<R, kAhead<R>> ring{zs + 2 * tw::Shape<R>::kCells * (p.lanes + 2), p.lane, p.lanes};
    for (int t = 0; t < kAhead<R>; ++t) ring.request(t, steps, base.x, base.y, b, even, odd, p.z);
  }
  tw::start<R>(a, o, base.x, base.y, b, even, odd, p.z);
  double top = 0, bottom = 0;
  if constexpr (Reads == DiamondReads::step_ahead) tw::vertices<R>(even, b, base.x, base.y, p.z, top, bottom);
  // In a cluster, no block's shared memory is written before every block of it runs.
  if constexpr (Cluster) step_barrier<Cluster>();
  for (int s = 0; s < steps; s += 2) {
    tower_step<R, Reads, Cluster>(a, o, s, steps, base.x, base.y, b, even, odd, zs, k, top, bottom, p, chunks);
    if (s + 1 < steps) tower_step<R, Reads, Cluster>(o, a, s + 1, steps, base.x, base.y, b, even, odd, zs, k, top, bottom, p, chunks);
  }
  // No block leaves while another of its cluster may still read its shared memory.
  if constexpr (Cluster) step_barrier<Cluster>();
}

/// The kernel's dynamic shared memory: two z planes of the diamond's columns (lanes + 2 slots a
/// column), and for DiamondReads::prefetched the ring of prefetch_steps(R) steps' reads.
template <int R>
std::size_t shared_bytes(int lanes, DiamondReads reads) {
  const std::size_t planes = 2 * static_cast<std::size_t>(tw::Shape<R>::kCells) * static_cast<std::size_t>(lanes + 2);
  const std::size_t ring = reads == DiamondReads::prefetched
                               ? static_cast<std::size_t>(kAhead<R>) * tw::StepReads<R>::kValues * static_cast<std::size_t>(lanes)
                               : 0;
  return (planes + ring) * sizeof(double);
}

template <int R, bool Cluster>
auto kernel_of(DiamondReads r) {
  if (r == DiamondReads::prefetched) return tower_kernel<R, DiamondReads::prefetched, Cluster>;
  return r == DiamondReads::step_ahead ? tower_kernel<R, DiamondReads::step_ahead, Cluster> : tower_kernel<R, DiamondReads::in_step, Cluster>;
}

/// The kernel of a radius, a DiamondReads and whether a tower spans a cluster.
template <int R>
auto kernel_of(DiamondReads r, bool cluster) {
  return cluster ? kernel_of<R, true>(r) : kernel_of<R, false>(r);
}

/// Calls f(kernel_of<R>(r, cluster), shared_bytes<R>) for R = radius.
template <class F>
auto with_kernel(int radius, DiamondReads r, bool cluster, F&& f) {
  switch (radius) {
    case 1: return f(kernel_of<1>(r, cluster), shared_bytes<1>);
    case 2: return f(kernel_of<2>(r, cluster), shared_bytes<2>);
    default: return f(kernel_of<3>(r, cluster), shared_bytes<3>);
  }
}

}  // namespace

DiamondSweep::DiamondSweep(int radius, std::size_t nx, std::size_t ny, std::size_t nz, std::size_t steps,
                           DiamondReads reads, std::size_t chunks)
    : radius_(radius), nx_(static_cast<int>(nx)), ny_(static_cast<int>(ny)), nz_(static_cast<int>(nz)),
      steps_(static_cast<int>(steps)), reads_(reads) {
  if (radius < 1 || radius > 3 || nx == 0 || ny == 0 || nx > (1u << 20) || ny > (1u << 20) || nz < 3 || nz > 2048 ||
      steps < 1 || steps > 1024)
    throw std::invalid_argument("cases::wave::DiamondSweep: radius " + std::to_string(radius) + " (1 .. 3), a block of " +
                                std::to_string(nx) + " x " + std::to_string(ny) + " columns of " + std::to_string(nz) +
                                " nodes (3 .. 2048) and " + std::to_string(steps) + " steps (1 .. 1024)");
  if (!known(reads)) throw std::invalid_argument("cases::wave::DiamondSweep: not a DiamondReads");
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
  with_kernel(radius, reads, chunks_.chunks > 1, [&](auto kernel, auto bytes) {
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes(chunks_.lanes, reads))));
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
  with_kernel(radius_, reads_, chunks_.chunks > 1, [&](auto kernel, auto) { CUSH_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel)); });
  return a;
}

void DiamondSweep::run(double* even, double* odd, double courant, cudaStream_t stream) const {
  check_courant(2, courant);
  const auto c = coefficients(2);
  const double c2 = courant * courant;
  const tw::Coefficients k{c[1], c2, 2 + 6 * c[0] * c2};
  const tw::Block b{nx_, ny_, nz_};
  const int chunks = chunks_.chunks;
  with_kernel(radius_, reads_, chunks > 1, [&](auto kernel, auto bytes) {
    cudaLaunchConfig_t config{};
    config.blockDim = dim3(static_cast<unsigned>(chunks_.lanes));
    config.dynamicSmemBytes = bytes(chunks_.lanes, reads_);
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
