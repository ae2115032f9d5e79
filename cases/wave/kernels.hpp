#pragma once
// Case "wave": the GPU kernels shared by every variant (kernels.cu). A level of the field is stored
// with h ghost layers on every side (h >= the stencil's radius), x fastest, rows padded as the
// advection case pads them: padded_pitch(n, h) cells apart, lead(h) cells before the first ghost
// cell, so that every row's first owned cell lies on a 128-byte boundary.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/block.hpp"
#include "cush/grid.hpp"

namespace cases {
namespace wave {

constexpr std::size_t kRowAlign = 16;
inline std::size_t lead(std::size_t h) { return (kRowAlign - h % kRowAlign) % kRowAlign; }
inline std::size_t padded_pitch(std::size_t n, std::size_t h) { return (n + 2 * h + kRowAlign - 1) / kRowAlign * kRowAlign; }

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
/// seed's update in place over the older level), not `cur`.
void launch_step(const double* prev, const double* cur, double* next, const Box& box, const Leapfrog& l,
                 cudaStream_t stream);

/// Copy parameters between `planes` z planes of a host array (n^3, x fastest, from plane `first`)
/// and a slab stored with h ghost layers (`dev`: its first ghost cell), host to device when
/// `to_device`. For cudaMemcpy3DAsync.
cudaMemcpy3DParms slab_copy(std::size_t n, const double* host, double* dev, std::size_t first, std::size_t planes,
                            bool to_device, std::size_t h);

/// Fills the x and y ghosts (h layers, periodic within the plane) of the stored planes
/// [z_begin, z_end) of a slab of n x n planes stored as slab_copy() says.
void launch_xy_halo(double* u, std::size_t n, std::size_t z_begin, std::size_t z_end, std::size_t h,
                    cudaStream_t stream);

/// Fills the h-layer ghost shell of an n^3 grid held whole, periodic on every axis.
void launch_periodic_halo(double* u, std::size_t n, std::size_t h, cudaStream_t stream);

}  // namespace wave
}  // namespace cases
