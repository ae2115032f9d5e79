#pragma once
// Case "lbm": the GPU kernels shared by every variant (kernels.cu), and the layout they share.
//
// A GPU's part of the lattice is a z slab stored SoA: population i of the cell at local
// coordinates (x, y, z) lives at element
//
//     i * stride + x + pitch * (y + ny * (z + ghost))
//
// of the slab's buffer (Slab::f): x fastest, rows `pitch` elements apart (nx rounded up to
// kRowAlign, so every row starts 128-byte aligned when the buffer and `stride` are), z layers
// pitch * ny elements apart. With ghost = 1 the layers z = -1 and z = nz are ghost layers that an
// exchange fills (multi-GPU); with ghost = 0 the slab is the whole lattice and the kernels wrap
// z periodically themselves (one GPU).
//
// The duct: walls on x and y. The cells with x in {0, nx - 1} or y in {0, ny - 1} are solid
// (never updated; the wall lies midway between them and the first fluid cells), the others are
// fluid: a duct of (nx - 2) x (ny - 2) fluid cells, periodic along z, driven by a body force
// along z (Guo forcing).

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace cases {
namespace lbm {

/// D3Q19.
inline constexpr int kQ = 19;

/// Row alignment of every variant's slabs, in elements (128 bytes of floats).
inline constexpr std::size_t kRowAlign = 32;
inline constexpr std::size_t padded_pitch(std::size_t nx) { return (nx + kRowAlign - 1) / kRowAlign * kRowAlign; }

/// How populations stream (the memory-access pattern).
enum class Pattern {
  ab,        ///< A-B pull: read the neighbours' populations from lattice A, write the cell's to B; two lattices
  esoteric,  ///< esoteric pull (Lehmann 2022): one lattice, updated in place; slots swap with the step's parity
};

/// How populations are stored (arithmetic is FP32 either way; populations are stored shifted,
/// f_i - w_i).
enum class Storage {
  fp32,   ///< float
  fp16s,  ///< IEEE half of (f_i - w_i) * 2^15 (FluidX3D's FP16S)
};

/// Bytes of one stored population.
inline constexpr std::size_t storage_bytes(Storage s) { return s == Storage::fp32 ? 4 : 2; }

/// One GPU's slab (see the top of this file). `f` points to float or __half (Storage).
struct Slab {
  void* f = nullptr;
  std::size_t stride = 0;  ///< elements from one population to the next
  std::size_t pitch = 0;   ///< elements from one row to the next (>= nx)
  int nx = 0, ny = 0;      ///< the whole cross-section, wall layer included
  int nz = 0;              ///< owned z layers
  int ghost = 0;           ///< 0: periodic along z inside the kernels; 1: ghost layers -1 and nz
};

/// The model's parameters as the kernels take them.
struct Physics {
  float omega = 1.0f;    ///< collision frequency 1 / tau
  float force_z = 0.0f;  ///< body force per unit volume along z (lattice units)
};

/// One step of the A-B pull pattern on the owned layers [z0, z1): the populations streamed into
/// each fluid cell are read from `from` (bounce-back from solid neighbours), collided, and
/// written to the cell in `to`. `from` and `to` share the layout; with ghost = 1, `from`'s ghost
/// layers must hold the neighbours' populations that cross the z faces (kAbUp into layer -1,
/// kAbDown into layer nz).
void launch_ab_step(const Slab& from, const Slab& to, int z0, int z1, Storage storage, Physics physics,
                    cudaStream_t stream);

/// One step of esoteric pull with parity `parity` (0 or 1; the step number t counted from 1 has
/// parity t % 2) on the owned layers [z0, z1), in place. With ghost = 1 the exchange between steps
/// is esoteric_exchange(parity of the step just done). Bounce-back is halfway, as for A-B pull
/// (a load from a solid cell takes the other slot of its pair: cell.hpp), so both patterns give
/// the same bits.
void launch_esoteric_step(const Slab& f, int z0, int z1, int parity, Storage storage, Physics physics,
                          cudaStream_t stream);

/// The density and velocity u = (sum f_i c_i + F / 2) / rho of every owned cell as the next step
/// would see them (for esoteric pull, `parity` is that next step's parity; ignored for A-B),
/// into `out`: four float arrays (rho, ux, uy, uz) in out.f, out.stride elements apart, each laid
/// out like a component of a slab (out.pitch, out.ny, out.ghost; out.nx = nx, out.nz = nz). Solid
/// cells get rho = 1 and u = 0. With f.ghost = 1 the ghost layers must be current (the exchange
/// the next step needs done first).
void launch_moments(Pattern pattern, const Slab& f, int parity, Storage storage, Physics physics, const Slab& out,
                    cudaStream_t stream);

/// Sets every population of every cell (solid and ghost cells too) to its equilibrium at rest,
/// rho = 1, u = 0 (stored shifted: zero).
void launch_rest(const Slab& f, Storage storage, cudaStream_t stream);

/// Adds a density perturbation: population 0 of every owned fluid cell of layers [0, f.nz) set
/// (shifted) to `amplitude` times a smooth function of the global coordinates (x, y, z_first + z)
/// of a lattice nz_total layers deep. Tests start from it so that every z layer differs and an
/// exchange that moved the wrong layer would show.
void launch_perturb(const Slab& f, int z_first, int nz_total, float amplitude, Storage storage, cudaStream_t stream);

// --- the populations that cross a z face ------------------------------------------------------

/// A-B pull: the populations with c_z = +1 (pulled from the layer below: fill ghost layer -1 from
/// the neighbour below) and with c_z = -1 (fill ghost layer nz from the neighbour above).
inline constexpr std::array<int, 5> kAbUp{5, 9, 11, 16, 18};
inline constexpr std::array<int, 5> kAbDown{6, 10, 12, 15, 17};

/// Esoteric pull: what the exchange after a step of parity p moves across every z face between a
/// lower slab L and an upper slab U, as population slots (see kernels.cu for the derivation):
///   fill_up:     L's top owned layer -> U's ghost layer -1      (slots U's bottom cells read next)
///   fill_down:   U's bottom owned layer -> L's ghost layer nz
///   return_up:   L's ghost layer nz -> U's bottom owned layer    (slots L's top cells wrote into
///                                                                  the ghosts that stand for U's cells)
///   return_down: U's ghost layer -1 -> L's top owned layer
struct EsotericExchange {
  std::array<int, 2> fill_up;
  std::array<int, 3> fill_down;
  std::array<int, 3> return_up;
  std::array<int, 2> return_down;
};
/// The exchange after a step of parity `parity`.
inline constexpr EsotericExchange esoteric_exchange(int parity) {
  // Slots at the neighbour j = n + c_i touched by a step of parity p, for odd i: p ? i + 1 : i.
  // Crossing the top face: i in {5, 9, 11} (c_z = +1); the bottom face: i in {15, 17} (c_z = -1).
  // A step of parity p writes its ghosts' slots S(p); the next step (parity 1 - p) reads the
  // slots S(1 - p), which the neighbour owns and last wrote.
  if (parity == 0) return {{16, 18}, {6, 10, 12}, {5, 9, 11}, {15, 17}};
  return {{15, 17}, {5, 9, 11}, {6, 10, 12}, {16, 18}};
}

}  // namespace lbm
}  // namespace cases
