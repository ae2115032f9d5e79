// Case "karst": the resident path (resident.hpp). The streaming path reads and writes every rock
// node once per step from HBM: 16 bytes per node-step, so it runs at the memory's speed (README,
// "Where the time goes"). Here a member's rock stays in the shared memory of a cluster of blocks
// for the whole run, and the step costs what its arithmetic and synchronization cost.
//
// Per two steps (the LU/UL schedule of kernels.cu), every block of the cluster:
//
//   down pass over its columns (row 0 and w^(s-1) of its columns from block 0)
//   up pass over its columns, then rows 0 (x^s_0) and 1 of its columns to block 0
//   cluster barrier
//   block 0 only: water of step s (then row 0 of step s + 1's elimination), water of step s + 1
//   cluster barrier
//
// Block 0 keeps rows 0 and 1 of every column beside the water, so the water step reads and writes
// its own shared memory; each block moves its rows with one store and one load per column.
//
// A thread owns one column. With R = 64 its rows 0..63 stay in registers and only the rest in
// shared memory: a member of M = 128 then needs half the shared memory, and the GPU runs twice as
// many members at once (resident_shape() picks the shape that runs the most). The step is bound by
// latency (a pass is two recurrences down a column; the water step runs on one block while the
// others wait at the barrier), so members at once is what the throughput scales with.
//
// The factors of a step are recomputed in shared memory when dt (rock) or dt and v (water)
// change, by one thread as the streaming kernels do; a forcing that changes at most steps often
// is what this path is for (kernels.cu chooses).

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "passes.cuh"
#include "resident.hpp"

namespace cases::karst {

namespace {

namespace cg = cooperative_groups;
using namespace device;

constexpr int kMaxCluster = 16;  // blocks per cluster at most (16: "non-portable")
constexpr int kMaxThreads = 256;  // columns per block at most (and at least kWaterThreads threads)

// Rows 0 and 1 of every column, in block 0, in the water's strided layout (passes.cuh): row i of
// the column at index a at rows[i * extent + a].
struct WallRows {
  double* rows;
  int extent;
  __device__ double& operator()(int i, int a) const { return rows[i * extent + a]; }
};

struct StepForcing {
  double dt = 0.0, v = 0.0, inlet = 0.0;
};

// The water arrays' length in the strided layout: 128 runs of ceil(N / 128) nodes.
__host__ __device__ inline std::size_t water_extent(std::size_t n) { return (n + kWaterThreads - 1) / kWaterThreads * kWaterThreads; }

// The dynamic shared memory of a block, in bytes, for M rows (the first `registers` of them in
// registers), N water nodes and `columns` columns.
std::size_t shared_bytes(std::size_t n, std::size_t m, std::size_t columns, int registers) {
  const std::size_t e = water_extent(n);
  return (2 * m + e) * sizeof(double2) + (2 * m + 3 * e + (m - registers) * columns) * sizeof(double);
}

// The passes over a column whose rows 0..R-1 are in registers (top) and R..M-1 in shared memory
// (row i at y[(i - R) * columns]); M >= R.
template <bool Substitute, bool Eliminate, int R>
__device__ inline void down_split(double (&top)[R], double* y, int columns, int m, const double* e, const double2* el,
                                  double coupling, double water) {
  double x = 0.0, d = 0.0;
  top[0] = down_head<Eliminate>(top[0], coupling, water, el[0], x, d);
#pragma unroll
  for (int i = 1; i < R; ++i)
    top[i] = down_row<Substitute, Eliminate>(top[i], Substitute ? e[i] : 0.0, Eliminate ? el[i] : double2{}, x, d);
  down_rows<Substitute, Eliminate>(y, columns, R, m, e, el, x, d);
}
template <bool Eliminate, int R>
__device__ inline void up_split(double (&top)[R], double* y, int columns, int m, const double* cp, const double2* el) {
  double x = 0.0, g = 0.0;
  up_rows<Eliminate>(y, columns, R, m, cp, el, x, g);
#pragma unroll
  for (int i = R - 1; i >= 1; --i) top[i] = up_row<Eliminate>(top[i], cp[i], Eliminate ? el[i] : double2{}, x, g);
  top[0] = up_head(top[0], cp[0], x);
}

// R: the rows of a column kept in registers (1: only row 0). Holding half the rock in registers
// halves the shared memory a member needs, so twice as many members fit the GPU at once.
template <int R>
__global__ void __launch_bounds__(kMaxThreads) resident_kernel(ResidentRun run, int columns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cg::cluster_group cluster = cg::this_cluster();
  const int size = static_cast<int>(cluster.num_blocks()), rank = static_cast<int>(cluster.block_rank());
  const std::size_t k = blockIdx.x / size;
  const int n = static_cast<int>(run.grid.n), m = static_cast<int>(run.grid.m);
  const int extent = static_cast<int>(water_extent(run.grid.n));
  const std::size_t steps = run.steps;

  extern __shared__ double2 dynamic[];
  double2* lu_elim = dynamic;
  double2* ul_elim = lu_elim + m;
  double2* pivots = ul_elim + m;  // the water's, block 0
  double* lu_sub = reinterpret_cast<double*>(pivots + extent);
  double* ul_sub = lu_sub + m;
  double* w = ul_sub + m;            // the water, block 0 (strided layout)
  double* rows = w + extent;         // rows 0 and 1 of every column (WallRows), block 0
  double* rock = rows + 2 * extent;  // this block's columns' rows R.., row i of local column c at (i - R) * columns + c
  __shared__ double walls[2];  // 2 FoBi of the LU and the UL factors
  __shared__ Affine scan[kMaxThreads / 32];  // the water step's, one per warp

  const double* w0 = cluster.map_shared_rank(w, 0);
  double* rows0 = cluster.map_shared_rank(rows, 0);
  const Groups g = run.members[k];
  const int c = static_cast<int>(threadIdx.x), j = rank * columns + c;
  const bool mine = c < columns && j < n;
  const int node = mine ? strided_node(j, water_run(n)) : 0;  // column j's index in block 0's water arrays
  double top[R];  // this thread's column's rows 0..R-1
#pragma unroll
  for (int i = 0; i < R; ++i) top[i] = 1.0;
  for (int i = c; i < (m - R) * columns; i += blockDim.x) rock[i] = 1.0;
  if (rank == 0) {
    for (int i = c; i < extent; i += blockDim.x) w[i] = 1.0;
    for (int i = c; i < 2 * extent; i += blockDim.x) rows[i] = 1.0;
  }
  cluster.sync();

  // Step s's forcing, loaded an iteration before it is needed: the load hides behind the passes.
  const auto load = [&](std::size_t s) {
    return s < steps ? StepForcing{run.forcing[s], run.forcing[steps + s], run.forcing[2 * steps + s]} : StepForcing{};
  };
  const MemberFactors lu{lu_elim, lu_sub, &walls[0]}, ul{ul_elim, ul_sub, &walls[1]};
  bool have[2] = {false, false}, have_water = false;
  double factored_dt[2] = {0.0, 0.0}, water_dt = 0.0, water_v = 0.0;

  // Factorization p (0: LU, 1: UL) for a step of `step_dt`, unless it holds that one already.
  const auto factor = [&](int p, double step_dt) {
    if (have[p] && factored_dt[p] == step_dt) return;
    __syncthreads();  // nobody reads the old factors any more
    if (threadIdx.x == 0) {
      if (p == 0) lu_factors(g, m, run.grid.dr, step_dt, lu);
      else ul_factors(g, m, run.grid.dr, step_dt, ul);
    }
    __syncthreads();
    have[p] = true;
    factored_dt[p] = step_dt;
  };
  const auto down = [&](bool substitute, bool eliminate) {
    if (!mine) return;
    top[0] = rows0[node];  // row 0 as the water step left it
    const double wj = eliminate ? w0[node] : 0.0;
    if (substitute && eliminate) down_split<true, true>(top, rock + c, columns, m, ul_sub, lu_elim, walls[0], wj);
    else if (substitute) down_split<true, false>(top, rock + c, columns, m, ul_sub, lu_elim, walls[0], wj);
    else down_split<false, true>(top, rock + c, columns, m, ul_sub, lu_elim, walls[0], wj);
  };
  const auto up = [&](bool eliminate) {
    if (!mine) return;
    if (eliminate) up_split<true>(top, rock + c, columns, m, lu_sub, ul_elim);
    else up_split<false>(top, rock + c, columns, m, lu_sub, ul_elim);
    rows0[node] = top[0];
    if constexpr (R > 1) rows0[extent + node] = top[1];
    else rows0[extent + node] = rock[c];
  };
  // Block 0: the water of step s; `finish`: then row 0 of step s + 1's UL elimination. Every thread
  // of the block runs the water step (those past the first kWaterThreads own no nodes), so that it
  // meets at __syncthreads() rather than at a named barrier over the water threads alone: that is
  // as fast (cases/karst/README.md, "Sanitizers"), and racecheck can check it.
  const auto water = [&](std::size_t s, const StepForcing& f, bool finish) {
    if (!have_water || water_dt != f.dt || water_v != f.v) {
      __syncthreads();
      if (threadIdx.x == 0) water_pivots<true>(g, n, Model::heat, run.outlet, f.dt, f.v, pivots);
      __syncthreads();
      have_water = true;
      water_dt = f.dt;
      water_v = f.v;
    }
    const WaterStep ws{f.dt, f.v, f.inlet, s, run.curves + k * steps};
    const WallRows wall{rows, extent};
    if (finish)
      water_step<true, true, true>(g, n, Model::heat, run.outlet, ws, pivots, w, wall, ul_elim[0], walls[1], scan);
    else
      water_step<true, false, true>(g, n, Model::heat, run.outlet, ws, pivots, w, wall, make_double2(0.0, 0.0), 0.0, scan);
    __syncthreads();
  };

  StepForcing even = load(0), odd = load(1);
  factor(0, even.dt);
  down(false, true);
  for (std::size_t s = 0; s < steps; s += 2) {  // the rock holds step s's LU elimination
    const StepForcing next_even = load(s + 2), next_odd = load(s + 3);
    const bool odd_follows = s + 1 < steps;
    if (odd_follows) factor(1, odd.dt);
    up(odd_follows);
    cluster.sync();  // every wall x^s_0 is in place
    if (rank == 0) {
      water(s, even, odd_follows);
      if (odd_follows) water(s + 1, odd, false);
    }
    if (!odd_follows) break;
    cluster.sync();  // the water and the walls of step s + 1 are in place
    const bool even_follows = s + 2 < steps;
    if (even_follows) factor(0, next_even.dt);
    down(true, even_follows);
    if (!even_follows) break;
    even = next_even;
    odd = next_odd;
  }
  cluster.sync();  // no block reads another's shared memory any more

  if (mine) {
#pragma unroll
    for (int i = 0; i < R; ++i) run.rock[(k * m + i) * n + j] = top[i];
    for (int i = R; i < m; ++i) run.rock[(k * m + i) * n + j] = rock[(i - R) * columns + c];
  }
  if (rank == 0)
    for (int i = c; i < n; i += blockDim.x) run.water[k * n + i] = w[strided_node(i, water_run(n))];
#else
  (void)run;
  (void)columns;
#endif
}

// The launch configuration of `shape` (its cluster dimension in `attribute`).
cudaLaunchConfig_t config(const ResidentShape& shape, unsigned clusters, cudaStream_t stream,
                          cudaLaunchAttribute* attribute) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(clusters * static_cast<unsigned>(shape.cluster));
  cfg.blockDim = dim3(static_cast<unsigned>(shape.threads));
  cfg.dynamicSmemBytes = shape.shared;
  cfg.stream = stream;
  attribute->id = cudaLaunchAttributeClusterDimension;
  attribute->val.clusterDim.x = static_cast<unsigned>(shape.cluster);
  attribute->val.clusterDim.y = 1;
  attribute->val.clusterDim.z = 1;
  cfg.attrs = attribute;
  cfg.numAttrs = 1;
  return cfg;
}

using Kernel = void (*)(ResidentRun, int);
constexpr int kRegisterRows = 64;  // the register variant's R (the other keeps only row 0)
Kernel kernel(int registers) { return registers == kRegisterRows ? resident_kernel<kRegisterRows> : resident_kernel<1>; }

void allow(const ResidentShape& shape) {
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel(shape.registers), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shape.shared)));
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel(shape.registers), cudaFuncAttributeNonPortableClusterSizeAllowed,
                                       shape.cluster > 8 ? 1 : 0));
}

// The shape of `grid` over clusters of `cluster` blocks with `registers` rows in registers (R), its
// active_clusters left 0; none where a block would have more than kMaxThreads columns.
std::optional<ResidentShape> shape_of(const Grid& grid, int cluster, int registers) {
  if (cluster < 1) return std::nullopt;
  const std::size_t columns = (grid.n + cluster - 1) / cluster;
  if (columns > static_cast<std::size_t>(kMaxThreads)) return std::nullopt;
  ResidentShape shape;
  shape.cluster = cluster;
  shape.columns = static_cast<int>(columns);
  shape.threads = std::max(kWaterThreads, (shape.columns + 31) / 32 * 32);
  shape.shared = shared_bytes(grid.n, grid.m, columns, registers);
  shape.registers = registers;
  return shape;
}

}  // namespace

std::optional<ResidentShape> resident_shape(const Grid& grid) {
  int device = 0, major = 0, optin = 0;
  CUSH_CUDA_CHECK(cudaGetDevice(&device));
  CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (major < 9 || grid.m < 2 || grid.n < 2) return std::nullopt;
  // Of the shapes that fit, the one that runs the most members at once; on a tie, the first (rows
  // in registers before not, then the smaller cluster).
  std::optional<ResidentShape> best;
  for (int registers : {kRegisterRows, 1}) {
    if (grid.m < static_cast<std::size_t>(registers)) continue;
    cudaFuncAttributes attributes{};
    CUSH_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel(registers)));
    for (int cluster = 1; cluster <= kMaxCluster; cluster *= 2) {
      std::optional<ResidentShape> fits = shape_of(grid, cluster, registers);
      if (!fits || fits->shared + attributes.sharedSizeBytes > static_cast<std::size_t>(optin)) continue;
      ResidentShape& shape = *fits;
      allow(shape);
      cudaLaunchAttribute attribute{};
      const cudaLaunchConfig_t cfg = config(shape, 1, nullptr, &attribute);
      CUSH_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&shape.active_clusters, kernel(registers), &cfg));
      if (shape.active_clusters > (best ? best->active_clusters : 0)) best = shape;
    }
  }
  return best;
}

void launch_resident(const ResidentRun& run, const ResidentShape& shape, cudaStream_t stream) {
  if (run.count == 0 || run.steps == 0) return;
  if (run.count > 0x7fffffffU / static_cast<unsigned>(shape.cluster))
    throw std::invalid_argument("cases::karst::launch_resident: " + std::to_string(run.count) +
                                " members exceed one launch's blocks");
  allow(shape);
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t cfg = config(shape, static_cast<unsigned>(run.count), stream, &attribute);
  CUSH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel(shape.registers), run, shape.columns));
}

}  // namespace cases::karst
