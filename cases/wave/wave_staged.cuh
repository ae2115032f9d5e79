#pragma once
// Case "wave": a one-step kernel whose input planes reach shared memory by asynchronous copies
// (cp.async, 16 bytes each, around L1), D planes ahead of the plane it computes, so that the
// bytes in flight no longer cost registers (the streaming kernel, wave_steps.cuh, holds its next
// plane's loads in registers: at order 8 it sits at its register cap with one plane in flight).
// On GPUs of compute capability 9.0 the case takes its twin with tensor copies instead
// (wave_staged_tensor.cuh, this file's shapes and cell, faster at orders 6 and 8).
//
// A block owns a W x H tile of (x, y) columns (W x TY threads, NY rows each) and marches a z run.
// Shared memory holds S = R + D + 1 stages of u^n, each the tile grown by R on every side (rows
// of W + 2 A cells, A = R rounded up to even: the x and y neighbours, corners and at an odd
// radius one cell at each end of a row copied and unused), and D + 1 stages of
// u^{n-1} over the tile. When plane p has arrived, a thread pushes its columns' cells of plane p
// into a register queue of 2 R + 1 planes (the z neighbours) and computes plane q = p - R from
// the queue, stage q's x and y neighbours and u^{n-1} at q; meanwhile plane p + D is in flight.
// Stage q is overwritten only by plane q + S = p + D + 1, issued after the next barrier.
//
// Every cell is step_host's chain of FMAs (x pair, y pair, z pair for k = 1 .. R), so the bits
// are the column kernel's. u^{n-1} may be the output (in place): a block reads u^{n-1} only on its
// own tile, at planes it has not yet written. The 16-byte copies need every row they stage to
// start on a 16-byte boundary (W even, an even row pitch, and the first rows aligned at x0 - A
// and x0: the padded layout of padded_grid.hpp gives it): wave_staged_fits says where,
// launch_wave_staged refuses the rest. No copy reads a cell beyond the R the stencil reaches: at an
// odd radius a row's first copy moves 8 bytes, and a pair that ends past the box's reach moves one
// cell or none.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "leapfrog_cell.cuh"

namespace cases {
namespace wave {

/// Radius R, W x TY threads holding NY rows each, D planes in flight.
template <int R, int W, int TY, int NY, int D>
struct WaveStagedConfig {
  static_assert(R >= 1 && R <= 4 && NY >= 1 && D >= 1);
  static_assert(W % 2 == 0, "16-byte copies: every staged row starts on an even cell");
  static constexpr int kR = R, kW = W, kTY = TY, kNY = NY, kD = D;
  static constexpr int kLead = R + R % 2;             ///< cells a staged row of u^n starts before the tile
  static constexpr int kH = TY * NY;                  ///< rows of the tile
  static constexpr int kThreads = W * TY;
  static constexpr int kPitch = W + 2 * kLead;        ///< a staged row of u^n
  static constexpr int kRows = kH + 2 * R;            ///< staged rows of u^n
  static constexpr int kPlane = kPitch * kRows;       ///< one stage of u^n, in doubles
  static constexpr int kStages = R + D + 1;
  static constexpr int kOlderPlane = W * kH;          ///< one stage of u^{n-1}
  static constexpr int kOlderStages = D + 1;
  static_assert(kStages * kPlane % 2 == 0, "the stages of u^{n-1} start on a 16-byte boundary");
  static constexpr std::size_t kSharedBytes =
      sizeof(double) * (static_cast<std::size_t>(kStages) * kPlane + static_cast<std::size_t>(kOlderStages) * kOlderPlane);
  static_assert(kSharedBytes <= 227 * 1024, "more shared memory than a block of an H100 or H200 may have");
};

namespace staged {

/// 16 bytes, of which the first `cells` (0, 1 or 2) doubles are read and the rest zero filled.
__device__ inline void copy16(void* shared, const void* global, int cells) {
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global), "r"(8 * cells));
}
/// 8 bytes (through L1: the only way cp.async moves 8).
__device__ inline void copy8(void* shared, const void* global) {
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, 8;\n" ::"r"(to), "l"(global));
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void wait_all_but() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// This thread's z queue, empty: the planes before the first the block stages read as zeros.
template <class C>
__device__ __forceinline__ void clear(double (&queue)[2 * C::kR + 1][C::kNY]) {
#pragma unroll
  for (int i = 0; i < 2 * C::kR + 1; ++i)
#pragma unroll
    for (int j = 0; j < C::kNY; ++j) queue[i][j] = 0;
}

/// Thread (tx, ty)'s first cell in a stage of u^n (rows C::kPitch apart, R ghost rows above).
template <class C>
__device__ __forceinline__ int first_cell(int tx, int ty) {
  return (C::kR + ty * C::kNY) * C::kPitch + C::kLead + tx;
}

/// This thread's NY cells of a plane into its z queue (the oldest plane drops out): `stage` is
/// its first cell in the plane's stage of u^n (rows C::kPitch apart).
template <class C>
__device__ __forceinline__ void push(double (&queue)[2 * C::kR + 1][C::kNY], const double* stage) {
#pragma unroll
  for (int j = 0; j < C::kNY; ++j) {
#pragma unroll
    for (int i = 0; i < 2 * C::kR; ++i) queue[i][j] = queue[i + 1][j];
    queue[2 * C::kR][j] = stage[j * C::kPitch];
  }
}

/// This thread's NY cells of plane q, column gx and rows gy0 .. gy0 + NY - 1, computed and stored
/// where they lie in the box: `c0` is its first cell in q's stage of u^n, `o0` in q's stage of
/// u^{n-1} (rows C::kW apart), the queue centred on q.
template <class C>
__device__ __forceinline__ void store(const double (&queue)[2 * C::kR + 1][C::kNY], const double* c0, const double* o0,
                                      double* next, const Box& box, const Leapfrog& l, long q, long gx, long gy0) {
  const long sz = box.pitch_x * box.pitch_y;
#pragma unroll
  for (int j = 0; j < C::kNY; ++j) {
    const double value = leapfrog_cell<C::kR, C::kNY, C::kPitch>(c0 + j * C::kPitch, queue, j, l, o0[j * C::kW]);
    const long gy = gy0 + j;
    if (gx < box.x0 + box.nx && gy < box.y0 + box.ny) next[q * sz + gy * box.pitch_x + gx] = value;
  }
}

}  // namespace staged

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    wave_staged_kernel(const double* older, const double* __restrict__ current, double* next, Box box, Leapfrog l, int run) {
  constexpr int R = C::kR, W = C::kW, H = C::kH, NY = C::kNY, D = C::kD, P = C::kPitch, S = C::kStages, A = C::kLead;
  extern __shared__ __align__(16) double shared[];
  double* const planes = shared;                                  // S stages of u^n
  double* const olders = shared + static_cast<std::size_t>(S) * C::kPlane;  // D + 1 stages of u^{n-1}
  const int tx = static_cast<int>(threadIdx.x) % W, ty = static_cast<int>(threadIdx.x) / W;
  const long x0 = box.x0 + blockIdx.x * static_cast<long>(W);
  const long y0 = box.y0 + blockIdx.y * static_cast<long>(H);
  const long z_begin = box.z0 + blockIdx.z * static_cast<long>(run);
  const long z_end = z_begin + run < box.z0 + box.nz ? z_begin + run : box.z0 + box.nz;
  const long sz = box.pitch_x * box.pitch_y;
  const long first = z_begin - R, last = z_end + R;  // input planes [first, last)

  // Plane p's u^n over the grown tile into its stage, and u^{n-1} at plane p - R over the tile;
  // one commit group a plane, empty past the run, so that the groups count planes.
  const auto issue = [&](long p) {
    if (p < last) {
      double* stage = planes + static_cast<int>((p - first) % S) * C::kPlane;
      const double* plane = current + p * sz;
      for (int i = static_cast<int>(threadIdx.x); i < C::kRows * (P / 2); i += C::kThreads) {
        const int row = i / (P / 2), col = 2 * (i % (P / 2));
        long gy = y0 - R + row;  // rows past the grown box feed no stored cell: clamped, in bounds
        gy = gy < box.y0 - R ? box.y0 - R : (gy < box.y0 + box.ny + R ? gy : box.y0 + box.ny + R - 1);
        const double* from = plane + gy * box.pitch_x;
        const long gx = x0 - A + col;
        if (A != R && col == 0) {  // odd radius: the row's first cell is beyond the stencil's reach
          staged::copy8(stage + row * P + 1, from + gx + 1);
          continue;
        }
        const long reach = box.x0 + box.nx + R - gx;  // cells of this pair the stencil reaches
        const int cells = reach >= 2 ? 2 : (reach > 0 ? static_cast<int>(reach) : 0);
        staged::copy16(stage + row * P + col, from + (cells > 0 ? gx : box.x0), cells);
      }
      const long q = p - R;
      if (q >= z_begin && q < z_end) {
        double* ostage = olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane;
        const double* oplane = older + q * sz;
        for (int i = static_cast<int>(threadIdx.x); i < H * (W / 2); i += C::kThreads) {
          const int row = i / (W / 2), col = 2 * (i % (W / 2));
          const long gy = y0 + row, gx = x0 + col;
          const long inside = gy < box.y0 + box.ny ? box.x0 + box.nx - gx : 0;  // cells of this pair in the box
          const int cells = inside >= 2 ? 2 : (inside > 0 ? static_cast<int>(inside) : 0);
          staged::copy16(ostage + row * W + col, oplane + (cells > 0 ? gy * box.pitch_x + gx : box.y0 * box.pitch_x + box.x0), cells);
        }
      }
    }
    staged::commit();
  };

  for (int i = 0; i < D; ++i) issue(first + i);
  double queue[2 * R + 1][NY];  // queue[i][j]: row j of this thread at plane p - 2 R + i
  staged::clear<C>(queue);
  const int self = staged::first_cell<C>(tx, ty);

  for (long p = first; p < last; ++p) {
    staged::wait_all_but<D - 1>();  // plane p has arrived (this thread's copies) ...
    __syncthreads();                // ... everyone's, and plane p - R - 1's stage is read
    issue(p + D);
    staged::push<C>(queue, planes + static_cast<int>((p - first) % S) * C::kPlane + self);
    const long q = p - R;
    if (q < z_begin) continue;
    staged::store<C>(queue, planes + static_cast<int>((q - first) % S) * C::kPlane + self,
                     olders + static_cast<int>((p - first) % C::kOlderStages) * C::kOlderPlane + ty * NY * W + tx,
                     next, box, l, q, x0 + tx, y0 + ty * NY);
  }
  staged::wait_all_but<0>();  // no copy may land after the block is gone
}

/// True where the 16-byte copies of shape C can serve `box` of these arrays: every staged row of
/// u^n starts A (R rounded up to even) cells before a tile's first column and every row of u^{n-1}
/// at it, tiles are an even W apart and rows an even pitch apart, so the first row of each decides.
template <class C>
bool wave_staged_fits(const double* older, const double* current, const Box& box) {
  const auto aligned = [](const double* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return box.pitch_x % 2 == 0 && aligned(current + box.x0 - C::kLead) && aligned(older + box.x0);
}

/// The tiles of shape C over `box`, z runs of `run` planes (0: as long as leave 2048 blocks, at
/// most 128), one step from (older, current) into next (which may be older).
template <class C>
void launch_wave_staged(const double* older, const double* current, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream, long run = 0) {
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) return;
  if (l.radius != C::kR)
    throw std::invalid_argument("cases::wave: a staged kernel of radius " + std::to_string(C::kR) + " for order " +
                                std::to_string(2 * l.radius));
  if (!wave_staged_fits<C>(older, current, box))
    throw std::invalid_argument("cases::wave: the staged kernel needs rows on 16-byte boundaries (an even row pitch, "
                                "u^{n-1} aligned at x0 and u^n at x0 - radius rounded up to even)");
  if (box.pitch_x * (box.pitch_y + 2 * C::kR) >= (1L << 31))
    throw std::invalid_argument("cases::wave: planes of 2^31 cells or more are beyond the staged kernel");
  const long tiles = ((box.nx + C::kW - 1) / C::kW) * ((box.ny + C::kH - 1) / C::kH);
  if (run <= 0) {
    run = 128;
    while (run > 8 && tiles * ((box.nz + run - 1) / run) < 2048) run /= 2;
  }
  const dim3 grid(static_cast<unsigned>((box.nx + C::kW - 1) / C::kW), static_cast<unsigned>((box.ny + C::kH - 1) / C::kH),
                  static_cast<unsigned>((box.nz + run - 1) / run));
  if constexpr (C::kSharedBytes > 48 * 1024)
    CUSH_CUDA_CHECK(cudaFuncSetAttribute(wave_staged_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(C::kSharedBytes)));
  wave_staged_kernel<C><<<grid, C::kThreads, C::kSharedBytes, stream>>>(older, current, next, box, l, static_cast<int>(run));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wave
}  // namespace cases
