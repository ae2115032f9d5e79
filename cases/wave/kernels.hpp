#pragma once
// Case "wave": the GPU kernels shared by every variant (kernels.cu). A level of the field is stored
// with h ghost layers on every side (h >= the stencil's radius), x fastest, rows padded as every
// stencil case pads them (padded_grid.hpp): padded_pitch(n, h) cells apart, lead(h) cells before
// the first ghost cell, so that every row's first owned cell lies on a 128-byte boundary.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/block.hpp"
#include "cush/grid.hpp"
#include "padded_grid.hpp"

namespace cases {
namespace wave {

/// The leapfrog's constants, passed to the kernel by value.
struct Leapfrog {
  int radius = 1;       ///< order / 2
  double c[5] = {};     ///< C_0 .. C_radius (coefficients.hpp)
  double courant2 = 0;  ///< s^2
  double centre = 0;    ///< 2 + 6 C_0 s^2, computed as the host reference computes it
};

/// The constants for `order` and Courant number `courant`; std::invalid_argument for an order not
/// in the table or an unstable (or non-positive) Courant number.
Leapfrog leapfrog(int order, double courant);

/// The cells a launch updates: from stored cell (x0, y0, z0) (ghosts included), nx x ny x nz, in
/// an array pitch_x cells wide and pitch_y rows deep.
struct Box {
  long x0 = 0, y0 = 0, z0 = 0;
  long nx = 0, ny = 0, nz = 0;
  long pitch_x = 0, pitch_y = 0;
};

/// The kernel box of `cells` (local coordinates of block `b`).
inline Box stored_box(const cush::Block<double>& b, const cush::Box& cells) {
  return Box{cells.lo[0] + static_cast<long>(b.halo()[0]), cells.lo[1] + static_cast<long>(b.halo()[1]),
             cells.lo[2] + static_cast<long>(b.halo()[2]), static_cast<long>(cells.size[0]),
             static_cast<long>(cells.size[1]),         static_cast<long>(cells.size[2]),
             static_cast<long>(b.alloc()[0]),          static_cast<long>(b.alloc()[1])};
}

/// One leapfrog step over `box`: next = fma(s^2, sum, fma(centre, cur, -prev)), sum the FMA chain
/// over k = 1 .. radius and the axes x, y, z of C_k (cur[+k] + cur[-k]): step_host's order, so
/// the same bits. `cur` needs `radius` valid layers around the box. `next` may be `prev` (the
/// seed's update in place over the older level), not `cur`. The faster one-step kernel for the
/// order (bench/probes/probe_wave.cu, README.md): at order 2 the column kernel with its z
/// neighbours in registers (launch_queue_step); at 4, 6 and 8 the tensor-copy kernel
/// (launch_tensor_step) where the GPU and the arrays allow it, else at 4 and 8 the staged kernel
/// (launch_staged_step) where the arrays fit it, else the streaming kernel (which the staged one
/// only ties at order 6).
void launch_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                 cudaStream_t stream);

/// The same with the column kernel at every order (a thread per (x, y) column, the neighbours
/// through the read-only cache): the tests' and probe's reference for the streaming kernel.
void launch_column_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream);

/// The same with the column's z neighbours kept in registers as a thread marches z (the column
/// kernel reads 2 radius + 1 of them a node through the cache); x and y neighbours as the column
/// kernel reads them. Same bits as launch_column_step.
void launch_queue_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                       cudaStream_t stream);

/// True where launch_staged_step serves `box` of these arrays at this order: orders 4, 6 and 8,
/// `prev` 16-byte aligned at x0, `cur` 16-byte aligned at x0 - radius rounded up to even (where a
/// staged row starts), and an even row pitch (every row copied 16 bytes at a time then starts on a
/// 16-byte boundary, as the padded layout above gives).
bool staged_step_fits(const double* prev, const double* cur, const Box& box, const Leapfrog& l);

/// The same step with the kernel of wave_staged.cuh: each block's input planes reach shared memory
/// by asynchronous copies a few planes ahead of the plane it computes. Same bits as
/// launch_column_step; std::invalid_argument where staged_step_fits is false (order 2, or rows
/// off 16-byte boundaries).
void launch_staged_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream);

/// True where the current device has Hopper's tensor copies (compute capability 9.0 or later),
/// which launch_tensor_step needs.
bool device_has_tensor_copies();

/// True where launch_tensor_step serves `box` of these arrays at this order on the current device:
/// orders 4, 6 and 8, a GPU of compute capability 9.0 or later (Hopper's tensor copies), the rows
/// of staged_step_fits, and a row pitch of at least nx + 2 radius (+ 1 at an odd radius).
bool tensor_step_fits(const double* prev, const double* cur, const Box& box, const Leapfrog& l);

/// The same step with the kernel of wave_staged_tensor.cuh: the staged kernel's planes moved by
/// the copy engine, one tensor copy a plane and level. Same bits as launch_column_step;
/// std::invalid_argument where tensor_step_fits is false. At an odd radius it reads (and does not
/// use) the cell x0 - radius - 1 of each row, which the array must have (the padded layout does).
void launch_tensor_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                        cudaStream_t stream);

/// The levels a launch of several steps reads (n - 1 and n) and writes (n + T - 1 and n + T).
struct WaveLevels {
  const double* older = nullptr;    ///< u^{n-1}
  const double* current = nullptr;  ///< u^n
  double* next_older = nullptr;     ///< u^{n+T-1}; may be null for T = 1 (then only `next` is written)
  double* next = nullptr;           ///< u^{n+T}; for T = 1 and no next_older it may be `older` (in place)
};

/// The most steps one launch fuses at `order`: 4 at order 2, 2 at order 4, 1 at orders 6 and 8
/// (the streaming kernel keeps T (order + 1) doubles a cell in registers; README.md).
std::size_t max_fused_steps(int order);

/// `steps`, or std::invalid_argument unless 1 <= steps <= max_fused_steps(order).
std::size_t checked_fused_steps(int order, std::size_t steps);

/// `steps` (1 .. max_fused_steps) leapfrog steps over `box` in one launch of the streaming kernel
/// (wave_steps.cuh), the bits of `steps` one-step launches: `current` needs steps x radius valid
/// layers around the box, `older` (steps - 1) x radius; the outputs are written on the box only
/// and must not overlap the inputs (except `next` over `older` for one step without next_older).
void launch_steps(const WaveLevels& levels, const Box& box, const Leapfrog& l, std::size_t steps, cudaStream_t stream);

}  // namespace wave
}  // namespace cases
