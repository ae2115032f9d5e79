#pragma once
// Case "lbm": the update of one cell, shared by the GPU kernels (kernels.cu) and the host
// emulation of the tests (test_lbm.cpp), which therefore run the same code: velocity set, the
// collision (BGK with Guo forcing, on shifted populations), the storage formats, and where each
// pattern loads and stores a cell's 19 populations (the slots). Everything is CUSH_HOST_DEVICE;
// the host path uses only standard C++ and the host half conversions of <cuda_fp16.h>.
//
// Arithmetic. The collision is written with mul / add / sub / fma / div below: on the GPU the
// round-to-nearest intrinsics (__fmul_rn, ...), which nvcc never contracts into other FMAs, on the
// host the plain operators and std::fma. So every kernel that collides computes the same bits
// whatever the surrounding code (A-B and esoteric pull agree bit for bit on the same duct), and
// the host emulation computes the same bits as the GPU.
//
// Bounce-back. Both patterns use halfway bounce-back: a population that would stream in from a
// solid cell is the cell's own opposite population after the previous collision. For A-B pull
// that is from[opposite(i)] at the cell itself. For esoteric pull it is a slot swap: the slot
// pattern of FluidX3D (spec §3) with solid cells never processed returns a population that
// enters a solid cell two steps later (full-way bounce-back, same steady state, lagging by a
// step), so where the neighbour n + c_i (n - c_i) is solid the load takes the other slot of the
// pair at that neighbour (at n), the one the cell stored into at the previous step: the slot
// index flips with the parity, `parity ^ wall`. Those slots belong to the solid cell, which no
// other cell touches, so the update stays in place and race-free, and it reads and writes as many
// slots as before.

#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <climits>
#include <cstdint>

#include "cush/host_device.hpp"
#include "kernels.hpp"

#if defined(__CUDA_ARCH__)
#define CUSH_LBM_UNROLL _Pragma("unroll")
#else
#define CUSH_LBM_UNROLL
#endif

namespace cases {
namespace lbm {
namespace cell {

// --- D3Q19 (spec §1: pairs (2k - 1, 2k) are opposites) ------------------------------------------

CUSH_HOST_DEVICE constexpr int cx(int i) {
  constexpr int c[kQ] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0};
  return c[i];
}
CUSH_HOST_DEVICE constexpr int cy(int i) {
  constexpr int c[kQ] = {0, 0, 0, 1, -1, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 1, -1};
  return c[i];
}
CUSH_HOST_DEVICE constexpr int cz(int i) {
  constexpr int c[kQ] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, -1, 1, -1, 1};
  return c[i];
}
CUSH_HOST_DEVICE constexpr float w(int i) { return i == 0 ? 1.0f / 3.0f : (i <= 6 ? 1.0f / 18.0f : 1.0f / 36.0f); }
CUSH_HOST_DEVICE constexpr int opposite(int i) { return i == 0 ? 0 : (i % 2 == 1 ? i + 1 : i - 1); }

// --- arithmetic (see the top of the file) --------------------------------------------------------

#if defined(__CUDA_ARCH__)
__device__ inline float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline float add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ inline float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ inline float div(float a, float b) { return __fdiv_rn(a, b); }
#else
inline float mul(float a, float b) { return a * b; }
inline float add(float a, float b) { return a + b; }
inline float sub(float a, float b) { return a - b; }
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
inline float div(float a, float b) { return a / b; }
#endif

// --- storage (spec §6: populations stored shifted, f_i - w_i; FP16S scales them by 2^15) --------

inline constexpr float kHalfScale = 32768.0f;

/// Populations as loaded and stored: FP32 as they are, FP16S in units of 2^-15 (the half's value,
/// not rescaled: the collision works in these units, scale() below, which is exact, since
/// scaling by a power of two commutes with rounding, and saves two multiplies per population).
// On the GPU every population load asks L2 to fetch the 256 bytes around it from DRAM (PTX
// ld.global.L2::256B, sm_80 and later): more bytes in flight per load at the same occupancy. One
// H200, 256^3, single reference, MLUPS esoteric FP32 / FP16S / A-B FP32, plain : 128 B : 256 B =
// 24,608 : 24,947 : 25,023 / 37,189 : 40,185 : 40,413 / 21,494 : 21,720 : 21,942 (README, Kernels).
// CUSH_LBM_L2_FETCH=0 (CMake CUSH_LBM_TUNING) restores plain loads. The asm is not volatile and
// names no memory: it may move, but never after a store of the same cell, which needs its value.
#ifndef CUSH_LBM_L2_FETCH
#define CUSH_LBM_L2_FETCH 256
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CUSH_LBM_L2_FETCH > 0
#define CUSH_LBM_STR2(x) #x
#define CUSH_LBM_STR(x) CUSH_LBM_STR2(x)
CUSH_HOST_DEVICE inline float load(const float* a) {
  float v;
  asm("ld.global.L2::" CUSH_LBM_STR(CUSH_LBM_L2_FETCH) "B.f32 %0, [%1];" : "=f"(v) : "l"(a));
  return v;
}
CUSH_HOST_DEVICE inline float load(const __half* a) {
  unsigned short v;
  asm("ld.global.L2::" CUSH_LBM_STR(CUSH_LBM_L2_FETCH) "B.b16 %0, [%1];" : "=h"(v) : "l"(a));
  return __half2float(__ushort_as_half(v));
}
#else
CUSH_HOST_DEVICE inline float load(const float* a) { return *a; }
CUSH_HOST_DEVICE inline float load(const __half* a) { return __half2float(*a); }
#endif
CUSH_HOST_DEVICE inline float load(const float* f, std::uint32_t k) { return load(f + k); }
CUSH_HOST_DEVICE inline float load(const __half* f, std::uint32_t k) { return load(f + k); }
CUSH_HOST_DEVICE inline void store(float* a, float v) { *a = v; }
CUSH_HOST_DEVICE inline void store(__half* a, float v) { *a = __float2half_rn(v); }
CUSH_HOST_DEVICE inline void store(float* f, std::uint32_t k, float v) { store(f + k, v); }
CUSH_HOST_DEVICE inline void store(__half* f, std::uint32_t k, float v) { store(f + k, v); }
/// The units of the stored populations: 1 for FP32, 2^15 for FP16S.
template <class T>
CUSH_HOST_DEVICE constexpr float scale() { return sizeof(T) == 2 ? kHalfScale : 1.0f; }

// --- the collision ---------------------------------------------------------------------------

/// c_i . (x, y, z), adding only the nonzero terms, in the order x, y, z.
CUSH_HOST_DEVICE inline float dot_c(int i, float x, float y, float z) {
  float r = 0.0f;
  bool any = false;
  const auto term = [&](int c, float v) {
    if (c == 0) return;
    if (!any) r = c > 0 ? v : -v;
    else r = c > 0 ? add(r, v) : sub(r, v);
    any = true;
  };
  term(cx(i), x);
  term(cy(i), y);
  term(cz(i), z);
  return r;
}

/// The moments of a cell's 19 shifted populations f (as streamed in): rho - 1 (their sum), rho
/// (1 added last), and u = (sum f_i c_i + F / 2) / rho with F = (0, 0, force_z).
struct Moments {
  float rhom1, rho, ux, uy, uz;
};
/// `f` in the stored units (scale<T>()): the sums are taken in them and brought back exactly.
template <class T>
CUSH_HOST_DEVICE inline Moments moments(const float (&f)[kQ], float force_z) {
  Moments m;
  float s = f[0];
  CUSH_LBM_UNROLL
  for (int i = 1; i < kQ; ++i) s = add(s, f[i]);
  if constexpr (scale<T>() != 1.0f) s = mul(s, 1.0f / scale<T>());
  m.rhom1 = s;
  m.rho = add(s, 1.0f);
  // Pairs of opposites first: differences of nearly equal numbers, exact more often.
  float jx = 0.0f, jy = 0.0f, jz = 0.0f;
  bool fx = false, fy = false, fz = false;
  CUSH_LBM_UNROLL
  for (int i = 1; i < kQ; i += 2) {
    const float d = sub(f[i], f[i + 1]);  // c_{i+1} = -c_i
    if (cx(i) != 0) { jx = fx ? (cx(i) > 0 ? add(jx, d) : sub(jx, d)) : (cx(i) > 0 ? d : -d); fx = true; }
    if (cy(i) != 0) { jy = fy ? (cy(i) > 0 ? add(jy, d) : sub(jy, d)) : (cy(i) > 0 ? d : -d); fy = true; }
    if (cz(i) != 0) { jz = fz ? (cz(i) > 0 ? add(jz, d) : sub(jz, d)) : (cz(i) > 0 ? d : -d); fz = true; }
  }
  if constexpr (scale<T>() != 1.0f) {
    jx = mul(jx, 1.0f / scale<T>());
    jy = mul(jy, 1.0f / scale<T>());
    jz = mul(jz, 1.0f / scale<T>());
  }
  const float r = div(1.0f, m.rho);
  m.ux = mul(jx, r);
  m.uy = mul(jy, r);
  m.uz = mul(add(jz, 0.5f * force_z), r);
  return m;
}

/// BGK collision with Guo forcing, in place, on shifted populations:
///   f*_i = f_i + omega (feq_i - f_i) + S_i,
///   feq_i - w_i = w_i (rho - 1) + w_i rho [3 c_i.u + 4.5 (c_i.u)^2 - 1.5 u.u],
///   S_i = (1 - omega / 2) w_i [3 (c_i - u).F + 9 (c_i.u)(c_i.F)],
/// which for F = (0, 0, F) is w_i g [c_iz (1 + 3 c_i.u) - u_z] with g = 3 F (1 - omega / 2). Written
/// as f*_i = (1 - omega) f_i + (omega feq_i + S_i) with the per-weight factors hoisted: about
/// eight operations per population, so that FP16S stays bandwidth-bound.
/// `f` in the stored units (scale<T>()); feq and the source are brought into them.
template <class T>
CUSH_HOST_DEVICE inline void collide(float (&f)[kQ], Physics p) {
  const Moments m = moments<T>(f, p.force_z);
  const float ux3 = mul(3.0f, m.ux), uy3 = mul(3.0f, m.uy), uz3 = mul(3.0f, m.uz);
  const float u15 = mul(1.5f, fma(m.ux, m.ux, fma(m.uy, m.uy, mul(m.uz, m.uz))));
  const float om1 = sub(1.0f, p.omega);
  const float g = mul(mul(3.0f, p.force_z), sub(1.0f, mul(0.5f, p.omega)));
  // Per weight class (w_0, 1/18, 1/36): w rho, w (rho - 1), w g, and S for c_z = 0, +1, -1 less
  // its c.u term: -w g u_z, w g (1 - u_z), w g (-1 - u_z).
  float rhos[3], rhom1s[3], wg[3], s0[3], sp[3], sm[3];
  CUSH_LBM_UNROLL
  for (int k = 0; k < 3; ++k) {
    const float wk = w(k == 0 ? 0 : (k == 1 ? 1 : 7));
    rhos[k] = mul(wk, m.rho);
    rhom1s[k] = mul(wk, m.rhom1);
    wg[k] = mul(wk, g);
    if constexpr (scale<T>() != 1.0f) {
      rhos[k] = mul(rhos[k], scale<T>());
      rhom1s[k] = mul(rhom1s[k], scale<T>());
      wg[k] = mul(wg[k], scale<T>());
    }
    s0[k] = -mul(wg[k], m.uz);
    sp[k] = mul(wg[k], sub(1.0f, m.uz));
    sm[k] = mul(wg[k], sub(-1.0f, m.uz));
  }
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) {
    const int k = i == 0 ? 0 : (i <= 6 ? 1 : 2);
    const float cu3 = i == 0 ? 0.0f : dot_c(i, ux3, uy3, uz3);  // 3 c_i.u
    const float q = i == 0 ? -u15 : fma(cu3, fma(0.5f, cu3, 1.0f), -u15);
    const float feq = fma(rhos[k], q, rhom1s[k]);
    const float source = cz(i) == 0 ? s0[k] : (cz(i) > 0 ? fma(wg[k], cu3, sp[k]) : fma(-wg[k], cu3, sm[k]));
    f[i] = fma(om1, f[i], fma(p.omega, feq, source));
  }
}

// --- where a cell is -------------------------------------------------------------------------

/// Solid: the wall layer on the x and y sides.
CUSH_HOST_DEVICE inline bool solid(const Slab& s, int x, int y) { return x == 0 || x == s.nx - 1 || y == 0 || y == s.ny - 1; }

/// A fluid cell of a slab: its element within a population's array, the elements to its z
/// neighbours, and which of its x and y neighbours are solid. Elements within one population fit
/// 32 bits (check_range() in kernels.cu refuses a slab whose population arrays do not): the slots
/// below are a population and a 32-bit element, so the addresses a thread keeps across the
/// collision are 32-bit offsets from the per-population base addresses, which are the same for
/// every thread.
struct Site {
  std::uint32_t n;
  std::int32_t up, down;  // to the cell at z + 1, z - 1 (periodic wrap when the slab has no ghosts)
  std::int32_t pitch;
  bool xm, xp, ym, yp;    // the cell at x - 1, x + 1, y - 1, y + 1 is solid
};
CUSH_HOST_DEVICE inline Site site(const Slab& s, int x, int y, int z) {
  Site c;
  const auto pitch = static_cast<std::int32_t>(s.pitch);
  const std::int32_t layer = pitch * s.ny;
  c.n = static_cast<std::uint32_t>(x + pitch * (y + s.ny * (z + s.ghost)));
  c.up = layer;
  c.down = -layer;
  if (s.ghost == 0) {
    if (z == s.nz - 1) c.up = -layer * (s.nz - 1);
    if (z == 0) c.down = layer * (s.nz - 1);
  }
  c.pitch = pitch;
  c.xm = x == 1;
  c.xp = x == s.nx - 2;
  c.ym = y == 1;
  c.yp = y == s.ny - 2;
  return c;
}
/// Elements from the cell to its neighbour n + c_i.
CUSH_HOST_DEVICE inline std::int32_t offset(const Site& c, int i) {
  return cx(i) + cy(i) * c.pitch + (cz(i) > 0 ? c.up : (cz(i) < 0 ? c.down : 0));
}
/// Whether the neighbour n + c_i is solid.
CUSH_HOST_DEVICE inline bool wall(const Site& c, int i) {
  return (cx(i) > 0 && c.xp) || (cx(i) < 0 && c.xm) || (cy(i) > 0 && c.yp) || (cy(i) < 0 && c.ym);
}

/// A slot: element `at` of population array `pop`.
struct Slot {
  int pop;
  std::uint32_t at;
};
CUSH_HOST_DEVICE inline std::uint32_t neighbour(const Site& c, int i) {
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(c.n) + offset(c, i));
}

// --- the slots: where the next step loads population i of a fluid cell ------------------------

/// A-B pull: f_i comes from n - c_i in `from`, or, if that cell is solid, is from[opposite(i)] at
/// the cell itself (halfway bounce-back). Stores go to slot i of the cell in `to`.
CUSH_HOST_DEVICE inline Slot ab_slot(const Site& c, int i) {
  if (i == 0) return {0, c.n};
  const int o = opposite(i);  // n - c_i = n + c_o
  return wall(c, o) ? Slot{o, c.n} : Slot{i, neighbour(c, o)};
}

/// Esoteric pull with parity p, j = n + c_i for odd i (spec §3, FluidX3D load_f / store_f):
///   load  f_i = F[p ? i : i + 1][n],      f_{i+1} = F[p ? i + 1 : i][j]
///   store F[p ? i + 1 : i][j] = f_i,      F[p ? i : i + 1][n] = f_{i+1}
/// with the slot of a load flipped where the cell it stands for is solid (halfway bounce-back,
/// see the top of the file): n - c_i for f_i, j for f_{i+1}.
CUSH_HOST_DEVICE inline Slot esoteric_load_slot(const Site& c, int parity, int i) {
  if (i == 0) return {0, c.n};
  if (i % 2 == 1) {
    const bool p = (parity != 0) != wall(c, i + 1);
    return {p ? i : i + 1, c.n};
  }
  const int k = i - 1;  // the odd partner: the population comes from j = n + c_k
  const bool p = (parity != 0) != wall(c, k);
  return {p ? k + 1 : k, neighbour(c, k)};
}
CUSH_HOST_DEVICE inline Slot esoteric_store_slot(const Site& c, int parity, int i) {
  if (i == 0) return {0, c.n};
  if (i % 2 == 1) return {parity ? i + 1 : i, neighbour(c, i)};
  return {parity ? i - 1 : i, c.n};
}

/// Population `pop`'s array.
template <class T>
CUSH_HOST_DEVICE inline T* population(T* f, std::size_t stride, int pop) {
  return f + static_cast<std::size_t>(pop) * stride;
}
template <class T>
CUSH_HOST_DEVICE inline float load(T* f, std::size_t stride, Slot s) {
  return load(population(f, stride, s.pop), s.at);
}
template <class T>
CUSH_HOST_DEVICE inline void store(T* f, std::size_t stride, Slot s, float v) {
  store(population(f, stride, s.pop), s.at, v);
}

// --- the updates -----------------------------------------------------------------------------

/// One A-B pull step of fluid cell (x, y, z): load from `from`, collide, store to `to`. Solid cells
/// are left alone.
template <class T>
CUSH_HOST_DEVICE inline void update_ab(const T* from, T* to, const Slab& s, int x, int y, int z, Physics p) {
  if (solid(s, x, y)) return;
  const Site c = site(s, x, y, z);
  float f[kQ];
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) f[i] = load(from, s.stride, ab_slot(c, i));
  collide<T>(f, p);
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) store(to, s.stride, Slot{i, c.n}, f[i]);
}

/// `p` as the compiler cannot see through: the kernel's addresses are then one 64-bit pointer plus
/// a 32-bit offset each (IMAD.WIDE); without it nvcc folds the cell's element into every offset
/// and adds the 64-bit sums separately (5 instructions per address instead of 2). The assumption
/// that it is global keeps the stores global (STG, not generic ST).
template <class T>
CUSH_HOST_DEVICE inline T* opaque(T* p) {
#if defined(__CUDA_ARCH__)
  asm("mov.b64 %0, %0;" : "+l"(p));
  __builtin_assume(__isGlobal(p));
#endif
  return p;
}

/// The slots of one parity's esoteric pull (esoteric_load_slot, esoteric_store_slot) as element
/// offsets from a fluid cell's own element of population 0, for a cell whose z neighbours are the
/// adjacent layers (no periodic wrap): load[i][w] where population i's load slot is flipped (w = 1:
/// the cell its slot stands for is solid) or not, and store[i]. They depend on the slab's layout
/// and the parity only, so the host computes them once per launch, and the kernel adds one to a
/// per-thread address for each access (one IMAD.WIDE with 32-bit offsets) where each slot's
/// address would otherwise take a 64-bit multiply and adds (README, "Kernels"). `Offset` is
/// std::int32_t where every address fits (esoteric_offsets_fit_32), else std::int64_t.
template <class Offset>
struct EsotericOffsets {
  Offset load[kQ][2];
  Offset store[kQ];
};
/// The slot's pair partner that decides whether load slot i flips: the cell n - c_i for odd i
/// (wall(c, i + 1)), n + c_{i - 1} for even i (wall(c, i - 1)); esoteric_load_slot.
CUSH_HOST_DEVICE constexpr int flip_direction(int i) { return i == 0 ? 0 : (i % 2 == 1 ? i + 1 : i - 1); }
/// The z direction (c_z) of the cell whose element slot i is at: loads of even i and stores of
/// odd i are at the neighbour n + c_k, k the odd one of the pair; the others at n.
CUSH_HOST_DEVICE constexpr int load_z(int i) { return i > 0 && i % 2 == 0 ? cz(i - 1) : 0; }
CUSH_HOST_DEVICE constexpr int store_z(int i) { return i % 2 == 1 ? cz(i) : 0; }

/// Whether every address update_esoteric forms from a slab's offsets fits 32 bits: the last
/// population's slots, plus how far a z neighbour can be (a layer, or across the periodic wrap of
/// a slab without ghosts, nz layers), a row and a cell.
inline bool esoteric_offsets_fit_32(const Slab& s) {
  const auto layer = static_cast<std::int64_t>(s.pitch) * s.ny;
  const std::int64_t reach = s.ghost == 0 ? layer * s.nz : layer;
  return static_cast<std::int64_t>(kQ - 1) * static_cast<std::int64_t>(s.stride) + reach +
             static_cast<std::int64_t>(s.pitch) + 1 <=
         std::int64_t{INT32_MAX};
}

template <class Offset>
EsotericOffsets<Offset> esoteric_offsets(const Slab& s, int parity) {
  // A cell away from every edge, all its neighbours fluid (w = 0) or all solid (w = 1).
  Site c{};
  c.pitch = static_cast<std::int32_t>(s.pitch);
  c.up = static_cast<std::int32_t>(s.pitch * static_cast<std::size_t>(s.ny));
  c.down = -c.up;
  c.n = static_cast<std::uint32_t>(2 * c.up + 2 * c.pitch + 2);
  const auto offset = [&](Slot k) {
    return static_cast<Offset>(static_cast<std::int64_t>(k.pop) * static_cast<std::int64_t>(s.stride) +
                               static_cast<std::int64_t>(k.at) - static_cast<std::int64_t>(c.n));
  };
  EsotericOffsets<Offset> o{};
  for (int i = 0; i < kQ; ++i) {
    c.xm = c.xp = c.ym = c.yp = false;
    o.load[i][0] = offset(esoteric_load_slot(c, parity, i));
    o.store[i] = offset(esoteric_store_slot(c, parity, i));
    c.xm = c.xp = c.ym = c.yp = true;
    o.load[i][1] = offset(esoteric_load_slot(c, parity, i));
  }
  return o;
}

/// Where one fluid cell's esoteric slots are (esoteric_offsets): its own element as a pointer the
/// compiler cannot see through (opaque), and how far the periodic wrap moves its z neighbours (0
/// unless the slab wraps and the cell is in its first or last layer).
template <class T>
struct EsotericCell {
  Site c;
  T* q;
  std::int32_t wrap_up, wrap_down;
};
template <class T>
CUSH_HOST_DEVICE inline EsotericCell<T> esoteric_cell(T* f_, const Slab& s, int x, int y, int z) {
  EsotericCell<T> e;
  e.c = site(s, x, y, z);
  const std::int32_t layer = e.c.pitch * s.ny;
  e.q = opaque(f_ + e.c.n);
  e.wrap_up = e.c.up - layer;
  e.wrap_down = e.c.down + layer;
  return e;
}
template <class T, class Offset>
CUSH_HOST_DEVICE inline T* esoteric_at(const EsotericCell<T>& e, int dz, Offset k) {
  return e.q + (dz > 0 ? k + e.wrap_up : (dz < 0 ? k + e.wrap_down : k));
}
/// The cell's 19 populations as its step streams them in. Next to a wall a load slot flips
/// (halfway bounce-back): a select between two offsets. (Loading the common slot and loading again
/// where it flips, in a branch that only the cells next to a wall take, issues fewer instructions
/// but was slower: the second load waits for the first, whose register it reuses, and a quarter of
/// the warps at 256^3 hold a wall cell. README.)
template <class T, class Offset>
CUSH_HOST_DEVICE inline void esoteric_load(const EsotericCell<T>& e, const EsotericOffsets<Offset>& o, float (&f)[kQ]) {
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i)
    f[i] = load(esoteric_at(e, load_z(i), wall(e.c, flip_direction(i)) ? o.load[i][1] : o.load[i][0]));
}
template <class T, class Offset>
CUSH_HOST_DEVICE inline void esoteric_store(const EsotericCell<T>& e, const EsotericOffsets<Offset>& o,
                                            const float (&f)[kQ]) {
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) store(esoteric_at(e, store_z(i), o.store[i]), f[i]);
}

/// One esoteric-pull step of fluid cell (x, y, z), in place, with the slots `o` of its parity
/// (esoteric_offsets). Solid cells are left alone.
template <class T, class Offset>
CUSH_HOST_DEVICE inline void update_esoteric(T* f_, const Slab& s, const EsotericOffsets<Offset>& o, int x, int y,
                                             int z, Physics p) {
  if (solid(s, x, y)) return;
  const EsotericCell<T> e = esoteric_cell(f_, s, x, y, z);
  float f[kQ];
  esoteric_load(e, o, f);
  collide<T>(f, p);
  esoteric_store(e, o, f);
}

/// The same step for the cells (x, y, z) and (x, y + 1, z), the second only if it is fluid: both
/// cells' populations are loaded before either is collided, twice the bytes in flight per thread
/// (README, "Two cells per thread"). Equal, bit for bit, to update_esoteric of each cell:
/// the slots a cell's step touches are touched by no other cell's, so loading the second cell's
/// before storing the first's changes nothing.
template <class T, class Offset>
CUSH_HOST_DEVICE inline void update_esoteric_rows(T* f_, const Slab& s, const EsotericOffsets<Offset>& o, int x,
                                                  int y, int z, Physics p) {
  if (solid(s, x, y)) return;
  if (solid(s, x, y + 1)) {
    update_esoteric(f_, s, o, x, y, z, p);
    return;
  }
  const EsotericCell<T> a = esoteric_cell(f_, s, x, y, z);
  const EsotericCell<T> b = esoteric_cell(f_, s, x, y + 1, z);
  float fa[kQ], fb[kQ];
  esoteric_load(a, o, fa);
  esoteric_load(b, o, fb);
  collide<T>(fa, p);
  esoteric_store(a, o, fa);
  collide<T>(fb, p);
  esoteric_store(b, o, fb);
}

// --- two cells of a row per thread (FP16S) ------------------------------------------------------

/// Stored halves as their bits: one (element a[0]) or two adjacent ones (a[0] in the low half, a[1]
/// in the high; a 4-byte aligned: one 32-bit access on the GPU, two on the host). The values stay
/// bits until the collision needs them (half_value): a loaded word holds two cells' populations
/// in one register.
CUSH_HOST_DEVICE inline std::uint32_t load_bits(const __half* a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CUSH_LBM_L2_FETCH > 0
  unsigned short v;
  asm("ld.global.L2::" CUSH_LBM_STR(CUSH_LBM_L2_FETCH) "B.b16 %0, [%1];" : "=h"(v) : "l"(a));
  return v;
#else
  return __half_raw(*a).x;
#endif
}
CUSH_HOST_DEVICE inline std::uint32_t load_bits_two(const __half* a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CUSH_LBM_L2_FETCH > 0
  unsigned v;
  asm("ld.global.L2::" CUSH_LBM_STR(CUSH_LBM_L2_FETCH) "B.b32 %0, [%1];" : "=r"(v) : "l"(a));
  return v;
#elif defined(__CUDA_ARCH__)
  return *reinterpret_cast<const unsigned*>(a);
#else
  return static_cast<std::uint32_t>(__half_raw(a[0]).x) | (static_cast<std::uint32_t>(__half_raw(a[1]).x) << 16);
#endif
}
/// The value of the half whose bits are the low (high = false) or high 16 bits of `bits`.
CUSH_HOST_DEVICE inline float half_value(std::uint32_t bits, bool high) {
  __half_raw r;
  r.x = static_cast<unsigned short>(high ? bits >> 16 : bits & 0xffffu);
  return __half2float(__half(r));
}
/// Two floats stored as the adjacent halves a[0] and a[1] (a 4-byte aligned), rounded to nearest
/// even each: the bits of two store() calls.
CUSH_HOST_DEVICE inline void store_two(__half* a, float lo, float hi) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<__half2*>(a) = __floats2half2_rn(lo, hi);
#else
  store(a, lo);
  store(a + 1, hi);
#endif
}

/// Whether a slot of population i is at an even element for a cell at an even element, given an
/// even pitch and population stride: its cell is the cell itself or a neighbour with c_x = 0.
CUSH_HOST_DEVICE constexpr bool load_even(int i) { return i == 0 || i % 2 == 1 || cx(i - 1) == 0; }
CUSH_HOST_DEVICE constexpr bool store_even(int i) { return i % 2 == 0 || cx(i) == 0; }

/// Whether the slot of every population whose slots are at even elements flips alike for the two
/// fluid cells of a pair: it flips only at a wall on the -x side (or on y, which both cells share),
/// and x0 + 1 is next to that wall only where x0 = 0 is solid. (The slot of an odd i is at the cell
/// and flips with the wall at -c_i, c_ix >= 0; an even i at a neighbour with c_x = 0 flips with
/// that neighbour, on y or z.)
constexpr bool even_slots_flip_alike() {
  for (int i = 0; i < kQ; ++i)
    if (load_even(i) && cx(flip_direction(i)) > 0) return false;
  return true;
}
static_assert(even_slots_flip_alike());

/// Whether a slab suits update_esoteric_pair: population arrays 4-byte aligned (an even stride
/// from an aligned start) and an even pitch, so that a cell at an even x is at an even element.
inline bool esoteric_pairs_fit(const Slab& s) {
  return s.stride % 2 == 0 && s.pitch % 2 == 0 && reinterpret_cast<std::uintptr_t>(s.f) % 4 == 0;
}

/// The esoteric-pull step of the cells x0 and x0 + 1 (x0 even) of fluid row y, layer z, FP16S, for
/// a slab that esoteric_pairs_fit: where both cells' slots of a population are the two halves of
/// one 32-bit word (the slot's cell is the cell itself or a neighbour with c_x = 0: 14 of 19 loads
/// and stores), one access moves both; the other slots, a half each. Half as many load and store
/// instructions as one cell per thread, and 24 registers for the 38 loaded values instead of 38
/// (README, "Two cells per thread"). The step of each fluid cell is update_esoteric's, bit for
/// bit. A solid cell of the pair (x0 = 0, or x0 + 1 = nx - 1 for even nx) is neither collided nor
/// stored; its half of a word and its own loads read slots of solid cells or of the row padding
/// (in bounds), which another thread may be writing at the same time: values never used.
template <class Offset>
CUSH_HOST_DEVICE inline void update_esoteric_pair(__half* f_, const Slab& s, const EsotericOffsets<Offset>& o, int x0,
                                                  int y, int z, Physics p) {
  const bool fluid_a = x0 >= 1 && x0 <= s.nx - 2;
  const bool fluid_b = x0 + 1 <= s.nx - 2;
  if (!fluid_a && !fluid_b) return;
  const EsotericCell<__half> a = esoteric_cell(f_, s, x0, y, z);
  Site b = a.c;  // x0 + 1: the next element, its own x walls
  b.xm = x0 + 1 == 1;
  b.xp = x0 + 1 == s.nx - 2;
  // bits[i]: both cells' population i, a's in the low half, b's in the high.
  std::uint32_t bits[kQ];
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) {
    const bool wa = wall(a.c, flip_direction(i)), wb = wall(b, flip_direction(i));
    const Offset ka = wa ? o.load[i][1] : o.load[i][0], kb = wb ? o.load[i][1] : o.load[i][0];
    if (load_even(i)) {
      // The word at the fluid cells' slot: where both are fluid their slots agree
      // (even_slots_flip_alike), where only b is, b's.
      bits[i] = load_bits_two(esoteric_at(a, load_z(i), fluid_a ? ka : kb));
    } else {
      bits[i] = load_bits(esoteric_at(a, load_z(i), ka)) | (load_bits(esoteric_at(a, load_z(i), kb) + 1) << 16);
    }
  }
  float fa[kQ], fb[kQ];
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) fa[i] = half_value(bits[i], false);
  if (fluid_a) collide<__half>(fa, p);
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) fb[i] = half_value(bits[i], true);
  if (fluid_b) collide<__half>(fb, p);
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i) {
    __half* const at = esoteric_at(a, store_z(i), o.store[i]);
    if (store_even(i) && fluid_a && fluid_b) {
      store_two(at, fa[i], fb[i]);
    } else {
      if (fluid_a) store(at, fa[i]);
      if (fluid_b) store(at + 1, fb[i]);
    }
  }
}

/// rho, ux, uy, uz of cell (x, y, z) as the next step would see them (esoteric: that step's
/// parity); solid cells: rho = 1, u = 0.
struct Output {
  float rho, ux, uy, uz;
};
template <class T>
CUSH_HOST_DEVICE inline Output observe(Pattern pattern, const T* f_, const Slab& s, int x, int y, int z, int parity,
                                       Physics p) {
  if (solid(s, x, y)) return {1.0f, 0.0f, 0.0f, 0.0f};
  const Site c = site(s, x, y, z);
  float f[kQ];
  CUSH_LBM_UNROLL
  for (int i = 0; i < kQ; ++i)
    f[i] = load(f_, s.stride, pattern == Pattern::ab ? ab_slot(c, i) : esoteric_load_slot(c, parity, i));
  const Moments m = moments<T>(f, p.force_z);
  return {m.rho, m.ux, m.uy, m.uz};
}

}  // namespace cell
}  // namespace lbm
}  // namespace cases
