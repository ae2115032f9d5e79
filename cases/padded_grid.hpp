#pragma once
// What the stencil cases (advection, wave) share: how their single-GPU and raw CUDA variants store
// a grid, or a z slab of one, with h ghost layers on every side (x fastest, rows padded so that
// every row's first owned cell lies on a 128-byte boundary), copies between such a slab and a
// host array, and the kernels that fill its periodic ghosts (padded_grid.cu).

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cases {

/// Rows are padded to a multiple of kRowAlign cells, with the first owned cell of each row 128
/// bytes aligned: the advection stencil ran 1.5x faster than on rows of nx + 2 cells, whose
/// misaligned stores each partly cover a memory sector (docs/results/advection.md). The cush
/// variants ask their fields for the same (cush::GridOptions::row_align). With h ghost layers,
/// lead(h) cells go before the first ghost cell of a buffer (cudaMalloc aligns its start) and rows
/// are padded_pitch(nx, h) cells apart.
constexpr std::size_t kRowAlign = 16;
inline std::size_t lead(std::size_t h) { return (kRowAlign - h % kRowAlign) % kRowAlign; }
inline std::size_t padded_pitch(std::size_t nx, std::size_t h = 1) {
  return (nx + 2 * h + kRowAlign - 1) / kRowAlign * kRowAlign;
}

/// `b` grown by `by` cells on every side: a box of the cases' stencil kernels (any type with x0,
/// y0, z0, nx, ny and nz), e.g. the cells a step of a fused launch computes.
template <class Box>
Box grown(Box b, long by) {
  b.x0 -= by;
  b.y0 -= by;
  b.z0 -= by;
  b.nx += 2 * by;
  b.ny += 2 * by;
  b.nz += 2 * by;
  return b;
}

/// Copy parameters between `planes` z planes of a host array (nx x ny x nz, x fastest, from plane
/// `first`) and a slab stored with h ghost layers (rows padded_pitch(nx, h) apart, ny + 2 h rows a
/// plane, planes + 2 h planes; `dev` is its first ghost cell), host to device when `to_device`.
/// For cudaMemcpy3DAsync.
cudaMemcpy3DParms slab_copy(std::size_t nx, std::size_t ny, const double* host, double* dev, std::size_t first,
                            std::size_t planes, bool to_device, std::size_t h = 1);

/// Fills the x and y ghost cells (h layers, periodic within the plane) of the stored planes
/// [z_begin, z_end) of a slab stored as slab_copy() says, from each plane's own owned cells.
void launch_xy_halo(double* u, std::size_t nx, std::size_t ny, std::size_t z_begin, std::size_t z_end,
                    cudaStream_t stream, std::size_t h = 1);

/// Fills the h-layer ghost shell of an nx x ny x nz grid held whole (stored as slab_copy() says,
/// nz + 2 h planes), periodic on every axis, from its owned cells: the x ghosts of the owned rows,
/// then the ghost rows whole, then the ghost planes whole (padding included), three launches.
void launch_periodic_halo(double* u, std::size_t nx, std::size_t ny, std::size_t nz, cudaStream_t stream,
                          std::size_t h = 1);

/// The same in one launch that takes each ghost from its owned cell, for any axis length (what
/// launch_periodic_halo falls back to where an axis has fewer cells than h): slower at large sizes
/// (bench/probes/probe_wave.cu times both), the same cells.
void launch_periodic_halo_general(double* u, std::size_t nx, std::size_t ny, std::size_t nz, cudaStream_t stream,
                                  std::size_t h = 1);

}  // namespace cases
