#pragma once
// probe_wave's variants of the wave case's staged kernel (cases/wave/wave_staged.cuh), to find
// what bounds it at order 8:
//  - Mapping 0 is the case's copy loop (a flat index over the stage's pairs: a division by the
//    row's pairs and clamps for every copy); Mapping 1 gives each warp whole rows (row = warp, a
//    lane a pair; the pairs past 32 in a second, packed pass), so the index arithmetic is a few
//    instructions a copy;
//  - Skip 1 leaves out the rows of u^n above and below the tile, Skip 2 also the pairs left and
//    right of it: the L2 reads the halo costs. Their results are wrong (stale shared memory);
//    they time what reading the halo costs, an upper bound on what sharing it between blocks
//    could save;
//  - MinBlocks 2 asks for two blocks an SM (at most 128 registers a thread at 256 threads), two
//    barrier domains instead of one.
// The computation is the case's (leapfrog_cell), so Mapping 1 with Skip 0 gives its bits.
// Below them, the staged kernel with each row moved by cp.async.bulk on an mbarrier, with and
// without the block-wide barrier a plane: both slower than the case's (runs 148-149); one tensor
// copy a stage instead was faster, and is the case's kernel now (cases/wave/wave_staged_tensor.cuh).

#include "wave_staged.cuh"
#include "wave_staged_tensor.cuh"  // the mbarrier helpers

namespace probe {

namespace wave = cases::wave;

template <class C, int Mapping, int Skip, int MinBlocks>
__global__ void __launch_bounds__(C::kThreads, MinBlocks)
    staged_variant_kernel(const double* older, const double* __restrict__ current, double* next, wave::Box box,
                          wave::Leapfrog l, int run) {
  namespace staged = wave::staged;
  constexpr int R = C::kR, W = C::kW, H = C::kH, NY = C::kNY, D = C::kD, P = C::kPitch, S = C::kStages, A = C::kLead;
  constexpr int kWarps = C::kThreads / 32, kPairs = P / 2;
  static_assert(C::kThreads % 32 == 0);
  extern __shared__ __align__(16) double shared[];
  double* const planes = shared;
  double* const olders = shared + static_cast<std::size_t>(S) * C::kPlane;
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(W);
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(H);
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  const long first = z_begin - R, last = z_end + R;

  // One pair of u^n: staged row `row`, pair `pair` of it.
  const auto copy_pair = [&](double* stage, const double* plane, int row, int pair) {
    if constexpr (Skip >= 1)
      if (row < R || row >= R + H) return;
    if constexpr (Skip >= 2)
      if (2 * pair < A || 2 * pair >= A + W) return;
    long gy = y0 - R + row;
    gy = gy < box.y0 - R ? box.y0 - R : (gy < box.y0 + box.ny + R ? gy : box.y0 + box.ny + R - 1);
    const double* from = plane + gy * box.pitch_x;
    const int col = 2 * pair;
    const long gx = x0 - A + col;
    if (A != R && col == 0) {
      staged::copy8(stage + row * P + 1, from + gx + 1);
      return;
    }
    const long reach = box.x0 + box.nx + R - gx;
    const int cells = reach >= 2 ? 2 : (reach > 0 ? static_cast<int>(reach) : 0);
    staged::copy16(stage + row * P + col, from + (cells > 0 ? gx : box.x0), cells);
  };
  const auto copy_older = [&](double* ostage, const double* oplane, int row, int pair) {
    const int col = 2 * pair;
    const long gy = y0 + row, gx = x0 + col;
    const long inside = gy < box.y0 + box.ny ? box.x0 + box.nx - gx : 0;
    const int cells = inside >= 2 ? 2 : (inside > 0 ? static_cast<int>(inside) : 0);
    staged::copy16(ostage + row * W + col, oplane + (cells > 0 ? gy * box.pitch_x + gx : box.y0 * box.pitch_x + box.x0),
                   cells);
  };

  const auto issue = [&](long p) {
    if (p < last) {
      double* stage = planes + static_cast<int>((p - first) % S) * C::kPlane;
      const double* plane = current + p * sz;
      if constexpr (Mapping == 0) {
        for (int i = static_cast<int>(threadIdx.x); i < C::kRows * kPairs; i += C::kThreads)
          copy_pair(stage, plane, i / kPairs, i % kPairs);
      } else {
        // Rows to warps, pairs to lanes; then the pairs past 32, packed over the threads.
        for (int row = warp; row < C::kRows; row += kWarps)
          if (lane < kPairs) copy_pair(stage, plane, row, lane);
        if constexpr (kPairs > 32) {
          constexpr int kRest = kPairs - 32;
          for (int i = static_cast<int>(threadIdx.x); i < C::kRows * kRest; i += C::kThreads)
            copy_pair(stage, plane, i / kRest, 32 + i % kRest);
        }
      }
      const long q = p - R;
      if (q >= z_begin && q < z_end) {
        double* ostage = olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane;
        const double* oplane = older + q * sz;
        if constexpr (Mapping == 0) {
          for (int i = static_cast<int>(threadIdx.x); i < H * (W / 2); i += C::kThreads)
            copy_older(ostage, oplane, i / (W / 2), i % (W / 2));
        } else {
          static_assert(Mapping == 0 || W / 2 == 32, "Mapping 1: a warp's lanes cover a row of the tile");
          for (int row = warp; row < H; row += kWarps) copy_older(ostage, oplane, row, lane);
        }
      }
    }
    staged::commit();
  };

  for (int i = 0; i < D; ++i) issue(first + i);
  double queue[2 * R + 1][NY];
#pragma unroll
  for (int i = 0; i < 2 * R + 1; ++i)
#pragma unroll
    for (int j = 0; j < NY; ++j) queue[i][j] = 0;
  const int self = (R + ty * NY) * P + A + tx;

  for (long p = first; p < last; ++p) {
    staged::wait_all_but<D - 1>();
    __syncthreads();
    issue(p + D);
    staged::push<C>(queue, planes + static_cast<int>((p - first) % S) * C::kPlane + self);
    const long q = p - R;
    if (q < z_begin) continue;
    staged::store<C>(queue, planes + static_cast<int>((q - first) % S) * C::kPlane + self,
                     olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane + ty * NY * W + tx,
                     next, box, l, q, x0 + tx, y0 + ty * NY);
  }
  staged::wait_all_but<0>();
}

/// launch_wave_staged's grid and checks, for a variant.
template <class C, int Mapping, int Skip, int MinBlocks>
void launch_staged_variant(const double* older, const double* current, double* next, const wave::Box& box,
                           const wave::Leapfrog& l, cudaStream_t stream) {
  if (l.radius != C::kR || !wave::wave_staged_fits<C>(older, current, box))
    throw std::invalid_argument("probe: the staged variant does not fit this box");
  const long tiles = ((box.nx + C::kW - 1) / C::kW) * ((box.ny + C::kH - 1) / C::kH);
  long run = 128;
  while (run > 8 && tiles * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + C::kW - 1) / C::kW), static_cast<unsigned>((box.ny + C::kH - 1) / C::kH),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  const auto kernel = staged_variant_kernel<C, Mapping, Skip, MinBlocks>;
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(C::kSharedBytes)));
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  kernel
      <<<grid, C::kThreads, C::kSharedBytes, stream>>>(older, current, next, box, l, static_cast<int>(run));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace probe

namespace probe {

// The staged kernel with its planes moved by the copy engine (cp.async.bulk, one instruction a
// row) instead of 16-byte copies by every thread: the first kRows + H threads issue a row each
// (u^n's grown rows, then u^{n-1}'s tile rows), and each stage's mbarrier counts the bytes in.
// The cells a bulk copy cannot move without reading beyond the stencil's reach (at an odd radius
// a row's second cell; a row's last cell where its reach is odd) go by an 8-byte cp.async that
// the same mbarrier tracks. Bits as the case's kernel.
namespace bulk {

// Hopper's instructions (sm_90); built for older GPUs the kernel traps.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CUSH_PROBE_SM90(...) __trap()
#else
#define CUSH_PROBE_SM90(...) __VA_ARGS__
#endif

using wave::tensor_copy::init;
using wave::tensor_copy::smem;
using wave::tensor_copy::wait;

__device__ inline void expect(unsigned long long* bar, unsigned bytes) {
  CUSH_PROBE_SM90(asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem(bar)), "r"(bytes) : "memory"));
}
/// The mbarrier's arrival once this thread's earlier cp.async (not bulk) copies have landed.
__device__ inline void arrive_after_copies(unsigned long long* bar) {
  CUSH_PROBE_SM90(asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem(bar)) : "memory"));
}
__device__ inline void arrive(unsigned long long* bar) {
  CUSH_PROBE_SM90(asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem(bar)) : "memory"));
}
__device__ inline void copy(void* shared, const void* global, unsigned bytes, unsigned long long* bar) {
  CUSH_PROBE_SM90(asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                                   smem(shared)),
                               "l"(global), "r"(bytes), "r"(smem(bar))
                               : "memory"));
}
}  // namespace bulk

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    staged_bulk_kernel(const double* older, const double* __restrict__ current, double* next, wave::Box box,
                       wave::Leapfrog l, int run) {
  namespace staged = wave::staged;
  constexpr int R = C::kR, W = C::kW, H = C::kH, NY = C::kNY, D = C::kD, P = C::kPitch, S = C::kStages, A = C::kLead;
  constexpr int kIssuers = C::kRows + H;  // a thread a row
  static_assert(kIssuers <= C::kThreads && C::kOlderStages <= S);
  extern __shared__ __align__(16) double shared[];
  double* const planes = shared;
  double* const olders = shared + static_cast<std::size_t>(S) * C::kPlane;
  auto* const bars = reinterpret_cast<unsigned long long*>(olders + static_cast<std::size_t>(C::kOlderStages) * C::kOlderPlane);
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(W);
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(H);
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  const long first = z_begin - R, last = z_end + R;
  const int me = static_cast<int>(threadIdx.x);

  // This thread's row, fixed for every plane: an offset in a plane, a place in a stage, the
  // cells [lo, hi) by the bulk copy and up to two single cells.
  long from = 0;
  int to = 0, lo = 0, hi = 0, single0 = -1, single1 = -1;
  bool is_older = false;
  if (me < C::kRows) {
    long gy = y0 - R + me;
    gy = gy < box.y0 - R ? box.y0 - R : (gy < box.y0 + box.ny + R ? gy : box.y0 + box.ny + R - 1);
    from = gy * box.pitch_x + x0 - A;
    to = me * P;
    const long reach = box.x0 + box.nx + R - (x0 - A);  // cells of the row the stencil reaches
    const int end = reach < P ? static_cast<int>(reach) : P;
    lo = A - R;  // 0, or 1 at an odd radius
    if (lo % 2) single0 = lo, lo += 1;
    hi = end - end % 2;
    if (end % 2) single1 = end - 1;
  } else if (me < kIssuers) {
    is_older = true;
    const long gy = y0 + (me - C::kRows);
    from = gy * box.pitch_x + x0;
    to = (me - C::kRows) * W;
    const long inside = gy < box.y0 + box.ny ? box.x0 + box.nx - x0 : 0;
    const int end = inside < W ? static_cast<int>(inside) : W;
    hi = end - end % 2;
    if (end % 2) single1 = end - 1;
  }
  if (me < S) bulk::init(bars + me, kIssuers);
  CUSH_PROBE_SM90(asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"));
  __syncthreads();

  const auto issue = [&](long p) {
    if (p >= last || me >= kIssuers) return;
    const int slot = static_cast<int>((p - first) % S);
    unsigned long long* bar = bars + slot;
    double* dst = nullptr;
    const double* src = nullptr;
    if (!is_older) {
      dst = planes + slot * C::kPlane + to;
      src = current + p * sz + from;
    } else {
      const long q = p - R;
      if (q >= z_begin && q < z_end) {
        dst = olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane + to;
        src = older + q * sz + from;
      }
    }
    if (dst != nullptr) {
      if (hi > lo) {
        bulk::expect(bar, 8u * static_cast<unsigned>(hi - lo));
        bulk::copy(dst + lo, src + lo, 8u * static_cast<unsigned>(hi - lo), bar);
      }
      if (single0 >= 0) staged::copy8(dst + single0, src + single0);
      if (single1 >= 0) staged::copy8(dst + single1, src + single1);
    }
    bulk::arrive_after_copies(bar);
  };

  for (int i = 0; i < D; ++i) issue(first + i);
  double queue[2 * R + 1][NY];
#pragma unroll
  for (int i = 0; i < 2 * R + 1; ++i)
#pragma unroll
    for (int j = 0; j < NY; ++j) queue[i][j] = 0;
  const int self = (R + ty * NY) * P + A + tx;

  for (long p = first; p < last; ++p) {
    __syncthreads();  // every thread is done with plane p - R - 1's stage
    issue(p + D);
    const int slot = static_cast<int>((p - first) % S);
    bulk::wait(bars + slot, static_cast<unsigned>((p - first) / S) & 1u);
    staged::push<C>(queue, planes + slot * C::kPlane + self);
    const long q = p - R;
    if (q < z_begin) continue;
    staged::store<C>(queue, planes + static_cast<int>((q - first) % S) * C::kPlane + self,
                     olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane + ty * NY * W + tx,
                     next, box, l, q, x0 + tx, y0 + ty * NY);
  }
}

template <class C>
void launch_staged_bulk(const double* older, const double* current, double* next, const wave::Box& box,
                        const wave::Leapfrog& l, cudaStream_t stream) {
  if (l.radius != C::kR || !wave::wave_staged_fits<C>(older, current, box))
    throw std::invalid_argument("probe: the bulk-copy variant does not fit this box");
  const long tiles = ((box.nx + C::kW - 1) / C::kW) * ((box.ny + C::kH - 1) / C::kH);
  long run = 128;
  while (run > 8 && tiles * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + C::kW - 1) / C::kW), static_cast<unsigned>((box.ny + C::kH - 1) / C::kH),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  const std::size_t bytes = C::kSharedBytes + sizeof(unsigned long long) * C::kStages;
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(staged_bulk_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  staged_bulk_kernel<C><<<grid, C::kThreads, bytes, stream>>>(older, current, next, box, l, static_cast<int>(run));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace probe

namespace probe {

/// The bulk-copy kernel's shared memory beyond its config: a stage more of u^n and of u^{n-1}
/// (the copy of plane p + D overwrites the stage read two planes before, not one) and two
/// mbarriers a stage (its bytes in, its readers done).
template <class C>
struct Decoupled {
  static constexpr int kStages = C::kStages + 1, kOlderStages = C::kOlderStages + 1;
  static constexpr std::size_t kBytes = sizeof(double) * (static_cast<std::size_t>(kStages) * C::kPlane +
                                                          static_cast<std::size_t>(kOlderStages) * C::kOlderPlane) +
                                        2 * sizeof(unsigned long long) * kStages;
};

// The bulk-copy kernel without a block-wide barrier a plane: each warp, done with a stage, arrives
// on the stage's "readers done" mbarrier (16 arrivals: the warps); the threads that copy a plane
// into a stage wait for it first. With a stage to spare that wait finds the stage free unless a
// warp is two planes behind, so no warp waits for the copying ones. Bits as the case's kernel.
template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    staged_decoupled_kernel(const double* older, const double* __restrict__ current, double* next, wave::Box box,
                            wave::Leapfrog l, int run) {
  namespace staged = wave::staged;
  using E = Decoupled<C>;
  constexpr int R = C::kR, W = C::kW, H = C::kH, NY = C::kNY, D = C::kD, P = C::kPitch, S = E::kStages, A = C::kLead;
  constexpr int kIssuers = C::kRows + H, kWarps = C::kThreads / 32;
  static_assert(kIssuers <= C::kThreads && C::kThreads % 32 == 0);
  extern __shared__ __align__(16) double shared[];
  double* const planes = shared;
  double* const olders = shared + static_cast<std::size_t>(S) * C::kPlane;
  auto* const full = reinterpret_cast<unsigned long long*>(olders + static_cast<std::size_t>(E::kOlderStages) * C::kOlderPlane);
  unsigned long long* const empty = full + S;
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(W);
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(H);
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  const long first = z_begin - R, last = z_end + R;
  const int me = static_cast<int>(threadIdx.x);

  long from = 0;
  int to = 0, lo = 0, hi = 0, single0 = -1, single1 = -1;
  bool is_older = false;
  if (me < C::kRows) {
    long gy = y0 - R + me;
    gy = gy < box.y0 - R ? box.y0 - R : (gy < box.y0 + box.ny + R ? gy : box.y0 + box.ny + R - 1);
    from = gy * box.pitch_x + x0 - A;
    to = me * P;
    const long reach = box.x0 + box.nx + R - (x0 - A);
    const int end = reach < P ? static_cast<int>(reach) : P;
    lo = A - R;
    if (lo % 2) single0 = lo, lo += 1;
    hi = end - end % 2;
    if (end % 2) single1 = end - 1;
  } else if (me < kIssuers) {
    is_older = true;
    const long gy = y0 + (me - C::kRows);
    from = gy * box.pitch_x + x0;
    to = (me - C::kRows) * W;
    const long inside = gy < box.y0 + box.ny ? box.x0 + box.nx - x0 : 0;
    const int end = inside < W ? static_cast<int>(inside) : W;
    hi = end - end % 2;
    if (end % 2) single1 = end - 1;
  }
  if (me < S) {
    bulk::init(full + me, kIssuers);
    bulk::init(empty + me, kWarps);
  }
  CUSH_PROBE_SM90(asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"));
  __syncthreads();

  // Plane p into its stage (u^n) and u^{n-1} at p - R; the stage's previous plane, p - S, must be
  // read by every warp first.
  const auto issue = [&](long p) {
    if (p >= last || me >= kIssuers) return;
    const int slot = static_cast<int>((p - first) % S);
    if (p - S >= first) bulk::wait(empty + slot, static_cast<unsigned>((p - S - first) / S) & 1u);
    unsigned long long* bar = full + slot;
    double* dst = nullptr;
    const double* src = nullptr;
    if (!is_older) {
      dst = planes + slot * C::kPlane + to;
      src = current + p * sz + from;
    } else {
      const long q = p - R;
      if (q >= z_begin && q < z_end) {
        dst = olders + static_cast<int>((p - first) % E::kOlderStages) * C::kOlderPlane + to;
        src = older + q * sz + from;
      }
    }
    if (dst != nullptr) {
      if (hi > lo) {
        bulk::expect(bar, 8u * static_cast<unsigned>(hi - lo));
        bulk::copy(dst + lo, src + lo, 8u * static_cast<unsigned>(hi - lo), bar);
      }
      if (single0 >= 0) staged::copy8(dst + single0, src + single0);
      if (single1 >= 0) staged::copy8(dst + single1, src + single1);
    }
    bulk::arrive_after_copies(bar);
  };
  // This warp is done with plane p - R's stage and plane p's stage of u^{n-1}.
  const auto release = [&](long p) {
    __syncwarp();
    if (me % 32 == 0 && p - R >= first) bulk::arrive(empty + static_cast<int>((p - R - first) % S));
  };

  for (int i = 0; i < D; ++i) issue(first + i);
  double queue[2 * R + 1][NY];
#pragma unroll
  for (int i = 0; i < 2 * R + 1; ++i)
#pragma unroll
    for (int j = 0; j < NY; ++j) queue[i][j] = 0;
  const int self = (R + ty * NY) * P + A + tx;

  for (long p = first; p < last; ++p) {
    issue(p + D);
    const int slot = static_cast<int>((p - first) % S);
    bulk::wait(full + slot, static_cast<unsigned>((p - first) / S) & 1u);
    staged::push<C>(queue, planes + slot * C::kPlane + self);
    const long q = p - R;
    if (q >= z_begin)
      staged::store<C>(queue, planes + static_cast<int>((q - first) % S) * C::kPlane + self,
                       olders + static_cast<int>((p - first) % E::kOlderStages) * C::kOlderPlane + ty * NY * W + tx,
                       next, box, l, q, x0 + tx, y0 + ty * NY);
    release(p);
  }
}

template <class C>
void launch_staged_decoupled(const double* older, const double* current, double* next, const wave::Box& box,
                             const wave::Leapfrog& l, cudaStream_t stream) {
  if (l.radius != C::kR || !wave::wave_staged_fits<C>(older, current, box))
    throw std::invalid_argument("probe: the decoupled bulk-copy variant does not fit this box");
  const long tiles = ((box.nx + C::kW - 1) / C::kW) * ((box.ny + C::kH - 1) / C::kH);
  long run = 128;
  while (run > 8 && tiles * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + C::kW - 1) / C::kW), static_cast<unsigned>((box.ny + C::kH - 1) / C::kH),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  const std::size_t bytes = Decoupled<C>::kBytes;
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(staged_decoupled_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(bytes)));
  staged_decoupled_kernel<C><<<grid, C::kThreads, bytes, stream>>>(older, current, next, box, l, static_cast<int>(run));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace probe

