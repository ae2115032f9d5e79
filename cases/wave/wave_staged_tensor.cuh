#pragma once
// Case "wave": the staged kernel (wave_staged.cuh) with its planes moved by Hopper's copy engine:
// one tensor copy (cp.async.bulk.tensor.3d) a stage of u^n and one a stage of u^{n-1}, issued by
// one thread and counted in by the stage's mbarrier, instead of 16-byte copies by every thread.
// The threads' copy loop was 40 % of the staged kernel's instructions; without it the kernel holds
// fewer registers and makes 0.78-0.85 R1w at order 8 against 0.68-0.71 in the same call
// (README.md, "The tensor-copy kernel").
//
// The tensor maps cover exactly the cells the stencil reaches: u^n's from x0 - A (A = R rounded
// up to even, for a 16-byte aligned start) to R past the box in x and R around it in y and z,
// u^{n-1}'s the box. A tile's copy that overhangs them gets zeros from the copy engine, so no copy
// reads past the grown box; only at an odd radius (order 6) the cell x0 - R - 1 of each row is
// read (and unused): the array must have it, as the padded layout (padded_grid.hpp) does.
//
// The block-wide barrier a plane stays: plane p + D is copied into the stage of plane p - R - 1
// after every thread has read it. Every cell is leapfrog_cell, so the bits are the column
// kernel's. u^{n-1} may be the output (in place): a block reads u^{n-1} only on its own tile, at
// planes it has not yet written.

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "leapfrog_cell.cuh"
#include "wave_staged.cuh"

namespace cases {
namespace wave {

namespace tensor_copy {

// Hopper's instructions (sm_90); built for an older GPU the kernel traps (the launcher checks the
// device first).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CUSH_WAVE_SM90(...) __trap()
#else
#define CUSH_WAVE_SM90(...) __VA_ARGS__
#endif

__device__ inline unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ inline void init(unsigned long long* bar, unsigned count) {
  CUSH_WAVE_SM90(asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem(bar)), "r"(count) : "memory"));
}
__device__ inline void fence_init() { CUSH_WAVE_SM90(asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory")); }
/// This thread's arrival, announcing `bytes` more to come by copies that signal `bar`.
__device__ inline void arrive_expect(unsigned long long* bar, unsigned bytes) {
  CUSH_WAVE_SM90(
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem(bar)), "r"(bytes) : "memory"));
}
/// The box of `map` at (x, y, z) into shared memory (128-byte aligned), its bytes signalled to `bar`.
__device__ inline void copy(void* shared, const CUtensorMap* map, int x, int y, int z, unsigned long long* bar) {
  CUSH_WAVE_SM90(asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          smem(shared)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem(bar))
      : "memory"));
}
/// Until the phase of `bar` with this parity has completed.
__device__ inline void wait(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  do {
    CUSH_WAVE_SM90(asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem(bar)), "r"(parity)
        : "memory"));
  } while (!done);
}

#undef CUSH_WAVE_SM90

}  // namespace tensor_copy

/// Shape C's shared memory with its stages' mbarriers; stages on 128-byte boundaries.
template <class C>
struct TensorStaged {
  static constexpr std::size_t kBarriers = C::kSharedBytes;  ///< where the mbarriers start, in bytes
  static constexpr std::size_t kBytes = C::kSharedBytes + sizeof(unsigned long long) * C::kStages;
  static_assert(C::kPlane * sizeof(double) % 128 == 0 && C::kOlderPlane * sizeof(double) % 128 == 0,
                "tensor copies land on 128-byte boundaries");
  static_assert(kBytes <= 227 * 1024, "more shared memory than a block of an H100 or H200 may have");
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    wave_tensor_kernel(const __grid_constant__ CUtensorMap current_map, const __grid_constant__ CUtensorMap older_map,
                       double* next, Box box, Leapfrog l, int run) {
  constexpr int R = C::kR, W = C::kW, H = C::kH, NY = C::kNY, D = C::kD, S = C::kStages;
  extern __shared__ __align__(128) double shared[];
  double* const planes = shared;                                            // S stages of u^n
  double* const olders = shared + static_cast<std::size_t>(S) * C::kPlane;  // D + 1 stages of u^{n-1}
  auto* const full = reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(shared) + TensorStaged<C>::kBarriers);
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(W);
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(H);
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long first = z_begin - R, last = z_end + R;  // input planes [first, last)
  if (threadIdx.x == 0) {
    if (tensor_copy::smem(shared) % 128 != 0) __trap();  // the copies' destinations would be misaligned
    for (int i = 0; i < S; ++i) tensor_copy::init(full + i, 1);
  }
  tensor_copy::fence_init();
  __syncthreads();
  const int tile_x = static_cast<int>(blockIdx.x) * W, tile_y = static_cast<int>(blockIdx.y) * H;

  // Plane p of u^n over the grown tile into its stage and u^{n-1} at p - R over the tile: one
  // phase of the stage's mbarrier, by thread 0.
  const auto issue = [&](long p) {
    if (p >= last || threadIdx.x != 0) return;
    const int slot = static_cast<int>((p - first) % S);
    const long q = p - R;
    const bool with_older = q >= z_begin && q < z_end;
    tensor_copy::arrive_expect(full + slot,
                               static_cast<unsigned>(sizeof(double) * (C::kPlane + (with_older ? C::kOlderPlane : 0))));
    tensor_copy::copy(planes + slot * C::kPlane, &current_map, tile_x, tile_y, static_cast<int>(p - (box.z0 - R)), full + slot);
    if (with_older)
      tensor_copy::copy(olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane, &older_map, tile_x, tile_y,
                        static_cast<int>(q - box.z0), full + slot);
  };

  for (int i = 0; i < D; ++i) issue(first + i);
  double queue[2 * R + 1][NY];  // queue[i][j]: row j of this thread at plane p - 2 R + i
  staged::clear<C>(queue);
  const int self = staged::first_cell<C>(tx, ty);

  for (long p = first; p < last; ++p) {
    __syncthreads();  // every thread is done with plane p - R - 1's stage, which plane p + D takes
    issue(p + D);
    const int slot = static_cast<int>((p - first) % S);
    tensor_copy::wait(full + slot, static_cast<unsigned>((p - first) / S) & 1U);
    staged::push<C>(queue, planes + slot * C::kPlane + self);
    const long q = p - R;
    if (q < z_begin) continue;
    staged::store<C>(queue, planes + static_cast<int>((q - first) % S) * C::kPlane + self,
                     olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane + ty * NY * W + tx,
                     next, box, l, q, x0 + tx, y0 + ty * NY);
  }
}

namespace tensor_copy {

/// A 3D tiled tensor map of doubles from `base` (16-byte aligned): extents x, y, z cells, rows
/// `pitch` and planes `plane` cells apart (both multiples of 2), boxes of bx x by x 1 cells, zeros
/// beyond the extents. std::runtime_error if the driver refuses it.
CUtensorMap tiled_map(const double* base, long x, long y, long z, long pitch, long plane, int bx, int by);

}  // namespace tensor_copy

/// True where launch_wave_tensor<C> serves `box` of these arrays on the current device: its
/// 16-byte rows as wave_staged_fits<C> wants them, a row pitch that holds a grown row (x0 - A to R
/// past the box) and a GPU with tensor copies.
template <class C>
bool wave_tensor_fits(const double* older, const double* current, const Box& box) {
  return wave_staged_fits<C>(older, current, box) && box.pitch_x >= box.nx + C::kLead + C::kR &&
         device_has_tensor_copies();
}

/// The tiles of shape C over `box`, z runs of up to 128 planes (halved while there are fewer than
/// 2048 blocks, down to 8), one step from (older, current) into next (which may be older).
template <class C>
void launch_wave_tensor(const double* older, const double* current, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream) {
  constexpr int R = C::kR, A = C::kLead;
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  if (l.radius != R)
    throw std::invalid_argument("cases::wave: a tensor-copy kernel of radius " + std::to_string(R) + " for order " +
                                std::to_string(2 * l.radius));
  if (!wave_tensor_fits<C>(older, current, box))
    throw std::invalid_argument("cases::wave: the tensor-copy kernel needs a GPU of compute capability 9.0 or later, "
                                "rows on 16-byte boundaries (an even row pitch, u^{n-1} aligned at x0 and u^n at x0 - "
                                "radius rounded up to even) and a row pitch of at least nx + 2 radius (+ 1 at an odd radius)");
  const long sz = box.pitch_x * box.pitch_y;
  const CUtensorMap current_map =
      tensor_copy::tiled_map(current + (box.z0 - R) * sz + (box.y0 - R) * box.pitch_x + box.x0 - A, box.nx + A + R,
                             box.ny + 2 * R, box.nz + 2 * R, box.pitch_x, sz, C::kPitch, C::kRows);
  const CUtensorMap older_map = tensor_copy::tiled_map(older + box.z0 * sz + box.y0 * box.pitch_x + box.x0, box.nx, box.ny,
                                                       box.nz, box.pitch_x, sz, C::kW, C::kH);
  const long tiles = ((box.nx + C::kW - 1) / C::kW) * ((box.ny + C::kH - 1) / C::kH);
  long run = 128;
  while (run > 8 && tiles * ((box.nz + run - 1) / run) < 2048) run /= 2;
  const dim3 grid(static_cast<unsigned>((box.nx + C::kW - 1) / C::kW), static_cast<unsigned>((box.ny + C::kH - 1) / C::kH),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  constexpr auto bytes = static_cast<int>(TensorStaged<C>::kBytes);
  CUSH_CUDA_CHECK(cudaFuncSetAttribute(wave_tensor_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  wave_tensor_kernel<C><<<grid, C::kThreads, bytes, stream>>>(current_map, older_map, next, box, l, static_cast<int>(run));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wave
}  // namespace cases
