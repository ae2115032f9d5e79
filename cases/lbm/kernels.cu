// Case "lbm": the GPU kernels shared by every variant (kernels.hpp): one thread per cell (the
// FP16S esoteric kernel: two adjacent cells of a row, Cells below), x fastest, the cell's update
// from cell.hpp (which the host tests run too). No shared memory: a warp loads and stores each
// population of 32 consecutive cells of a row, 128 bytes (FP32, or FP16S pairs) on rows that
// start 128-byte aligned, and the neighbours' populations shifted by one cell, which the L1 and
// L2 caches serve; each population is loaded and stored once per step.
//
// Launch shape: blocks of kBlockCells (256) threads, bx along x (a multiple of 32, up to 256)
// times 256 / bx rows; the grid covers the fluid rows (y = 1 .. ny - 2) of the z range, a layer per grid
// z index (ranges deeper than 65535 layers in several launches). The threads of the wall columns
// x = 0 and nx - 1 return at once (keeping warps aligned with the rows costs less than the
// misaligned accesses of an offset). Templates over the stored type (float, __half); the moments
// kernel over the pattern and parity too; the esoteric kernel takes its parity's slots as offsets
// (cell::EsotericOffsets, 32-bit where they fit).
//
// Why the esoteric exchange sets of kernels.hpp are what they are (slots of spec §3): a step of
// parity p at cell n touches F[p ? i : i+1][n] and F[p ? i+1 : i][n + c_i] for odd i. After it, a
// slot F[s][m] holds what the step wrote, and the next step (parity 1 - p) reads it at the cell
// that the other parity assigns it to. Across the top face of a lower slab L (owned layer nz - 1,
// ghost layer nz = the upper slab U's layer 0), for odd i with c_iz = +1 (5, 9, 11) and with
// c_iz = -1 (15, 17):
//   - L's top cells wrote F[p ? i+1 : i][n + c_i], i in {5, 9, 11}, into L's ghost layer: U's
//     bottom cells own those slots next step -> return_up = p ? {6, 10, 12} : {5, 9, 11};
//   - U's bottom cells wrote F[p ? i+1 : i][n + c_i], i in {15, 17}, into U's ghost layer -1: L's
//     top cells own them next -> return_down = p ? {16, 18} : {15, 17};
//   - L's top cells read next F[p ? i : i+1][n + c_i] (parity 1 - p), i in {5, 9, 11}, at U's
//     bottom cells, which wrote them as own slots F[p ? i : i+1] -> fill_down = p ? {5, 9, 11} :
//     {6, 10, 12};
//   - U's bottom cells read next F[p ? i : i+1][n + c_i], i in {15, 17}, at L's top cells ->
//     fill_up = p ? {15, 17} : {16, 18}.
// The halfway bounce-back of cell.hpp reads, at a solid neighbour in a ghost layer, the slot the
// cell itself wrote there at the previous step; no exchange set writes those slots (they are the
// return sets of the other parity), so ghosts keep them.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cell.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace lbm {

namespace {

// Threads per block and the esoteric kernel's launch bound (blocks per SM). Measured on one H200,
// 256^3, single-GPU reference, MLUPS esoteric FP32 / FP16S, A-B FP32 / FP16S:
//   128 threads, bound 8:  24,383 / 34,832 / 21,468 / 32,734
//   128 threads, no bound: 24,395 / 33,800 / 21,468 / 32,733
//   256 threads, bound 4:  24,614 / 35,605 / 21,573 / 33,166   (chosen)
//    64 threads, bound 16: 23,733 / 34,602 / 21,443 / 32,279
// (cases/lbm/README.md; CMake's CUSH_LBM_TUNING overrides them for such experiments.)
#ifndef CUSH_LBM_BLOCK
#define CUSH_LBM_BLOCK 256
#endif
#ifndef CUSH_LBM_MIN_BLOCKS
#define CUSH_LBM_MIN_BLOCKS 5
#endif
#ifndef CUSH_LBM_CELLS_16
#define CUSH_LBM_CELLS_16 2
#endif
#ifndef CUSH_LBM_MIN_BLOCKS_16
#define CUSH_LBM_MIN_BLOCKS_16 4
#endif
#ifndef CUSH_LBM_MIN_BLOCKS_16_ROWS
#define CUSH_LBM_MIN_BLOCKS_16_ROWS 4
#endif
#ifndef CUSH_LBM_MIN_BLOCKS_16_ONE
#define CUSH_LBM_MIN_BLOCKS_16_ONE 6
#endif
constexpr int kBlockCells = CUSH_LBM_BLOCK;

// The cells one thread of the esoteric kernel updates.
enum class Cells {
  one,   ///< one (cell::update_esoteric)
  rows,  ///< (x, y) and (x, y + 1) (cell::update_esoteric_rows)
  pair,  ///< (x0, y) and (x0 + 1, y), x0 even, FP16S on a slab that cell::esoteric_pairs_fit (cell::update_esoteric_pair)
};
// What FP16S takes with 32-bit offsets (CUSH_LBM_CELLS_16: 0 one, 1 rows, 2 pair); FP32 takes one
// (two rows lost: README, "Two cells per thread").
constexpr Cells kCells16 = CUSH_LBM_CELLS_16 == 0 ? Cells::one : (CUSH_LBM_CELLS_16 == 1 ? Cells::rows : Cells::pair);

// The esoteric kernel's launch bound (blocks of 256 threads per SM) per stored type and shape.
// Registers (ptxas, sm_90, CUDA 13), none spilled: FP32, one cell: 48 (5 blocks); FP16S, pair
// and rows: 64 (4 blocks), one cell: 40 (6 blocks). FP16S with 64-bit offsets (the largest slabs)
// takes one cell (two spill even at 4 blocks), and FP16S on a slab that does not suit pairs two
// rows. A-B pull 53-54 unbounded, moments 34-47. FP16S keeps half the bytes in flight per load
// that FP32 does, and gains from whatever puts more in flight. One H200, 256^3, single reference,
// FP16S MLUPS, each line one run: one cell with 4 / 5 / 6 blocks 39,742 / 41,009 / 42,346; one
// cell (6) 41,706, rows (4) 44,006; rows 44,959, pair (4) 47,123, pair with 5 blocks (48
// registers, 116 bytes spilled) 30,374 (README, "Kernels").
template <class T, Cells C>
constexpr int kMinBlocks = sizeof(T) == 4 ? CUSH_LBM_MIN_BLOCKS
                                          : (C == Cells::pair ? CUSH_LBM_MIN_BLOCKS_16
                                                              : (C == Cells::rows ? CUSH_LBM_MIN_BLOCKS_16_ROWS : CUSH_LBM_MIN_BLOCKS_16_ONE));
static_assert(CUSH_LBM_CELLS_16 >= 0 && CUSH_LBM_CELLS_16 <= 2, "CUSH_LBM_CELLS_16: 0, 1 or 2");

template <class T>
__global__ void ab_kernel(Slab from, Slab to, int z0, Physics p) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = 1 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x < 1 || x > from.nx - 2 || y > from.ny - 2) return;
  const T* __restrict__ a = static_cast<const T*>(from.f);
  T* __restrict__ b = static_cast<T*>(to.f);
  cell::update_ab<T>(a, b, from, x, y, z0 + static_cast<int>(blockIdx.z), p);
}

template <class T, class Offset, Cells C>
__global__ void __launch_bounds__(kBlockCells, (kMinBlocks<T, C>))
    esoteric_kernel(Slab s, int z0, Physics p, const __grid_constant__ cell::EsotericOffsets<Offset> o) {
  const int tx = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int ty = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  const int z = z0 + static_cast<int>(blockIdx.z);
  T* f = static_cast<T*>(s.f);  // read and written: no __restrict__ / read-only loads
  if constexpr (C == Cells::pair) {
    const int x0 = 2 * tx, y = 1 + ty;
    if (x0 > s.nx - 2 || y > s.ny - 2) return;
    cell::update_esoteric_pair<Offset>(f, s, o, x0, y, z, p);
  } else {
    const int x = tx, y = 1 + (C == Cells::rows ? 2 : 1) * ty;
    if (x < 1 || x > s.nx - 2 || y > s.ny - 2) return;
    if constexpr (C == Cells::rows) cell::update_esoteric_rows<T, Offset>(f, s, o, x, y, z, p);
    else cell::update_esoteric<T, Offset>(f, s, o, x, y, z, p);
  }
}

template <class T, Pattern P, int Parity>
__global__ void moments_kernel(Slab s, int z0, Physics p, Slab out) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= s.nx || y >= s.ny) return;
  const T* f = static_cast<const T*>(s.f);
  float* o = static_cast<float*>(out.f);
  const int z = z0 + static_cast<int>(blockIdx.z);
  const cell::Output m = cell::observe<T>(P, f, s, x, y, z, Parity, p);
  const std::size_t k = static_cast<std::size_t>(x) +
                        out.pitch * (static_cast<std::size_t>(y) +
                                     static_cast<std::size_t>(out.ny) * static_cast<std::size_t>(z + out.ghost));
  o[k] = m.rho;
  o[k + out.stride] = m.ux;
  o[k + 2 * out.stride] = m.uy;
  o[k + 3 * out.stride] = m.uz;
}

constexpr int kMaxGridZ = 65535;

struct Shape {
  dim3 grid, block;
};
// Threads for x in [0, nx), rows [0, rows), `layers` layers (at most kMaxGridZ).
Shape shape(int nx, int rows, int layers) {
  const int bx = std::min(kBlockCells, (nx + 31) / 32 * 32);
  const int by = kBlockCells / bx;
  Shape s;
  s.block = dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by), 1);
  s.grid = dim3(static_cast<unsigned>((nx + bx - 1) / bx), static_cast<unsigned>((rows + by - 1) / by),
                static_cast<unsigned>(layers));
  return s;
}

void check_range(const char* where, const Slab& s, int z0, int z1) {
  // Elements within a population are 32-bit (cell.hpp, Site): the stored cells of a slab too.
  const std::size_t stored = s.pitch * static_cast<std::size_t>(s.ny) * static_cast<std::size_t>(s.nz + 2 * s.ghost);
  if (stored >= (std::size_t{1} << 31))
    throw std::invalid_argument(std::string(where) + ": a slab of " + std::to_string(stored) +
                                " cells; at most 2^31 - 1 per GPU (split the lattice over more GPUs)");
  if (z0 < 0 || z1 > s.nz || s.nx < 3 || s.ny < 3 || s.pitch < static_cast<std::size_t>(s.nx) ||
      (s.ghost != 0 && s.ghost != 1) || s.f == nullptr)
    throw std::invalid_argument(std::string(where) + ": bad slab or z range [" + std::to_string(z0) + ", " +
                                std::to_string(z1) + ") of a slab of " + std::to_string(s.nz) + " layers");
}

// The kernels take one layer per grid z index: ranges deeper than the grid's limit go in chunks.
template <class Launch>
void in_chunks(int z0, int z1, Launch launch) {
  for (int z = z0; z < z1; z += kMaxGridZ) launch(z, std::min(z1 - z, kMaxGridZ));
}

template <class T>
void ab_step(const Slab& from, const Slab& to, int z0, int z1, Physics p, cudaStream_t stream) {
  in_chunks(z0, z1, [&](int z, int layers) {
    const Shape sh = shape(from.nx, from.ny - 2, layers);
    ab_kernel<T><<<sh.grid, sh.block, 0, stream>>>(from, to, z, p);
    CUSH_CUDA_CHECK(cudaGetLastError());
  });
}

template <class T, class Offset, Cells C>
void esoteric_step(const Slab& f, int z0, int z1, int parity, Physics p, cudaStream_t stream) {
  const auto o = cell::esoteric_offsets<Offset>(f, parity);
  const int threads_x = C == Cells::pair ? (f.nx + 1) / 2 : f.nx;
  const int rows = C == Cells::rows ? (f.ny - 1) / 2 : f.ny - 2;
  in_chunks(z0, z1, [&](int z, int layers) {
    const Shape sh = shape(threads_x, rows, layers);
    esoteric_kernel<T, Offset, C><<<sh.grid, sh.block, 0, stream>>>(f, z, p, o);
    CUSH_CUDA_CHECK(cudaGetLastError());
  });
}
// 32-bit slot offsets where they fit (one instruction per address), else 64-bit (and one cell
// per thread); FP16S pairs where the slab suits them.
template <class T>
void esoteric_step(const Slab& f, int z0, int z1, int parity, Physics p, cudaStream_t stream) {
  if (!cell::esoteric_offsets_fit_32(f)) return esoteric_step<T, std::int64_t, Cells::one>(f, z0, z1, parity, p, stream);
  if constexpr (sizeof(T) == 4) {
    esoteric_step<T, std::int32_t, Cells::one>(f, z0, z1, parity, p, stream);
  } else {
    if (kCells16 == Cells::pair && !cell::esoteric_pairs_fit(f))
      return esoteric_step<T, std::int32_t, Cells::rows>(f, z0, z1, parity, p, stream);
    esoteric_step<T, std::int32_t, kCells16>(f, z0, z1, parity, p, stream);
  }
}

template <class T>
void moments(Pattern pattern, const Slab& f, int parity, Physics p, const Slab& out, cudaStream_t stream) {
  in_chunks(0, f.nz, [&](int z, int layers) {
    const Shape sh = shape(f.nx, f.ny, layers);
    if (pattern == Pattern::ab) moments_kernel<T, Pattern::ab, 0><<<sh.grid, sh.block, 0, stream>>>(f, z, p, out);
    else if (parity == 0) moments_kernel<T, Pattern::esoteric, 0><<<sh.grid, sh.block, 0, stream>>>(f, z, p, out);
    else moments_kernel<T, Pattern::esoteric, 1><<<sh.grid, sh.block, 0, stream>>>(f, z, p, out);
    CUSH_CUDA_CHECK(cudaGetLastError());
  });
}

// Population 0 of the owned fluid cells of layers [0, nz): its shifted value set to a times a
// smooth function of the global coordinates (x, y, z_first + z).
template <class T>
__global__ void perturb_kernel(Slab s, int z_first, int nz_total, float a) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y);
  const int z = static_cast<int>(blockIdx.z);
  if (x >= s.nx || cell::solid(s, x, y)) return;
  const float phase = 6.2831853f * static_cast<float>(z_first + z) / static_cast<float>(nz_total);
  const float v = a * (sinf(phase + 0.37f * static_cast<float>(x)) + 0.5f * cosf(0.23f * static_cast<float>(y * (z + z_first + 1))));
  cell::store(static_cast<T*>(s.f), cell::site(s, x, y, z).n, v * cell::scale<T>());
}

}  // namespace

void launch_perturb(const Slab& f, int z_first, int nz_total, float amplitude, Storage storage, cudaStream_t stream) {
  if (f.nz == 0 || amplitude == 0.0f) return;
  const dim3 grid(static_cast<unsigned>((f.nx + 127) / 128), static_cast<unsigned>(f.ny), static_cast<unsigned>(f.nz));
  if (storage == Storage::fp32) perturb_kernel<float><<<grid, 128, 0, stream>>>(f, z_first, nz_total, amplitude);
  else perturb_kernel<__half><<<grid, 128, 0, stream>>>(f, z_first, nz_total, amplitude);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void launch_ab_step(const Slab& from, const Slab& to, int z0, int z1, Storage storage, Physics physics,
                    cudaStream_t stream) {
  check_range("cases::lbm::launch_ab_step", from, z0, z1);
  if (z1 <= z0) return;
  if (storage == Storage::fp32) ab_step<float>(from, to, z0, z1, physics, stream);
  else ab_step<__half>(from, to, z0, z1, physics, stream);
}

void launch_esoteric_step(const Slab& f, int z0, int z1, int parity, Storage storage, Physics physics,
                          cudaStream_t stream) {
  check_range("cases::lbm::launch_esoteric_step", f, z0, z1);
  if (z1 <= z0) return;
  if (storage == Storage::fp32) esoteric_step<float>(f, z0, z1, parity & 1, physics, stream);
  else esoteric_step<__half>(f, z0, z1, parity & 1, physics, stream);
}

void launch_moments(Pattern pattern, const Slab& f, int parity, Storage storage, Physics physics, const Slab& out,
                    cudaStream_t stream) {
  check_range("cases::lbm::launch_moments", f, 0, f.nz);
  if (f.nz == 0) return;
  if (storage == Storage::fp32) moments<float>(pattern, f, parity & 1, physics, out, stream);
  else moments<__half>(pattern, f, parity & 1, physics, out, stream);
}

void launch_rest(const Slab& f, Storage storage, cudaStream_t stream) {
  // Every slot of every stored cell (ghost layers and row padding included), population by
  // population: the gaps between populations may belong to someone else.
  const std::size_t bytes = storage_bytes(storage);
  const std::size_t stored = f.pitch * static_cast<std::size_t>(f.ny) * static_cast<std::size_t>(f.nz + 2 * f.ghost);
  for (int i = 0; i < kQ; ++i)
    CUSH_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(f.f) + static_cast<std::size_t>(i) * f.stride * bytes, 0,
                                    stored * bytes, stream));
}

}  // namespace lbm
}  // namespace cases
