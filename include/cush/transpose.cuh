#pragma once
/// @file transpose.cuh
/// @brief cush::transpose with a device function applied to every element on the way (for .cu
/// files; transpose.hpp has the plain one and the semantics).
///
/// `f(value, row, col)` is called once per element with the element of src and its global row
/// and column in the rows x cols source matrix, and returns what dst gets. It runs in the
/// transpose's kernel, so it costs no pass over memory of its own: a distributed FFT's twiddle
/// factors W_N^(row * col), a scaling, a conversion. `f` is copied to the device by value.
///
/// @code
/// struct Twiddle {
///   std::size_t n;
///   __device__ float2 operator()(float2 v, std::size_t r, std::size_t c) const;
/// };
/// cush::transpose(a, b, n2, n1, Twiddle{n});
/// @endcode

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/transpose.hpp"

namespace cush {

namespace detail {

inline constexpr int transpose_tile = 32;
inline constexpr int transpose_block_rows = 8;

/// One source device's rows: each block moves 32 x 32 tiles of the columns of target blockIdx.z
/// (tile blockIdx.x of them) through shared memory, reading rows and writing columns with whole
/// warps; row tiles from blockIdx.y on, gridDim.y apart.
template <class T, class F>
__global__ void __launch_bounds__(transpose_tile* transpose_block_rows)
    transpose_tiles(const T* __restrict__ src, std::size_t row0, std::size_t rows, std::size_t cols,
                    const __grid_constant__ TransposeTargets targets, F f) {
  __shared__ T tile[transpose_tile][transpose_tile + 1];
  const TransposeTarget& t = targets.t[blockIdx.z];
  const std::size_t c0 = t.col0 + static_cast<std::size_t>(blockIdx.x) * transpose_tile;
  const std::size_t c_end = t.col0 + t.cols;
  if (c0 >= c_end) return;
  T* out = static_cast<T*>(t.data);
  for (std::size_t r0 = static_cast<std::size_t>(blockIdx.y) * transpose_tile; r0 < rows;
       r0 += static_cast<std::size_t>(gridDim.y) * transpose_tile) {
    const std::size_t c = c0 + threadIdx.x;
    for (int k = static_cast<int>(threadIdx.y); k < transpose_tile; k += transpose_block_rows) {
      const std::size_t r = r0 + static_cast<std::size_t>(k);
      if (r < rows && c < c_end) tile[k][threadIdx.x] = f(src[r * cols + c], row0 + r, c);
    }
    __syncthreads();
    const std::size_t r = r0 + threadIdx.x;
    for (int k = static_cast<int>(threadIdx.y); k < transpose_tile; k += transpose_block_rows) {
      const std::size_t cc = c0 + static_cast<std::size_t>(k);
      if (r < rows && cc < c_end) out[(cc - t.col0) * t.pitch + (row0 + r - t.row_base)] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

/// Launches source `s`'s kernel on its stream (its device must be current).
template <class T, class F>
void launch_transpose(const TransposeSource& s, std::size_t cols, const F& f) {
  const std::size_t row_tiles = (s.rows + transpose_tile - 1) / transpose_tile;
  const std::size_t col_tiles = (s.targets.max_cols + transpose_tile - 1) / transpose_tile;
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<std::size_t>(row_tiles, 65535)),
                  static_cast<unsigned>(s.targets.count));
  const dim3 block(transpose_tile, transpose_block_rows);
  transpose_tiles<T, F><<<grid, block, 0, s.stream>>>(static_cast<const T*>(s.data), s.row0, s.rows, cols, s.targets, f);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

/// Runs a transpose with `f` applied on the way.
template <class T, class F>
void transpose_with(const PlanBase& src, PlanBase& dst, std::size_t rows, std::size_t cols, const F& f,
                    const TransposeOptions& options, const char* where) {
  static_assert(sizeof(T) * transpose_tile * (transpose_tile + 1) <= 48 * 1024,
                "cush::transpose: elements of at most 46 bytes (the kernel's 32 x 33 tile of them in 48 KiB of "
                "shared memory)");
  TransposeOp op(src, dst, rows, cols, sizeof(T), options, where);
  op.preload(reinterpret_cast<const void*>(&transpose_tiles<T, F>));
  const std::size_t chunks = op.chunks();
  for (std::size_t k = 0; k < chunks; ++k)
    for (std::size_t i = 0; i < op.sources(); ++i) {
      if (k >= op.chunks(i)) continue;
      const TransposeSource s = op.prepare(i, k);
      {
        DeviceGuard guard(s.device);
        launch_transpose<T>(s, cols, f);
      }
      op.launched(i, k, s.stream);
    }
  op.finish();
}

}  // namespace detail

/// dst = the transpose of src with f applied to every element: dst element (c, r) is
/// f(src element (r, c), r, c). Same requirements as cush::transpose (transpose.hpp), for any
/// trivially copyable T of at most 46 bytes.
template <class T, class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, TransposeOptions>)
void transpose(const Plan<T>& src, Plan<T>& dst, std::size_t rows, std::size_t cols, F f,
               const TransposeOptions& options = {}) {
  detail::transpose_with<T>(src, dst, rows, cols, f, options, "cush::transpose");
}

}  // namespace cush
