#pragma once
// Case "lbm" (seed 002 §2.6.4, chapter 3, Appendix B): single-component D3Q19 BGK
// lattice-Boltzmann flow through a rectangular duct, walls on x and y, periodic along z, driven
// by a body force along z; split along z between GPUs. Model, validation and bandwidth figures:
// README.md and ../shared/specs/lbm.md.
//
// Every variant has one interface, so one test checks them all and one benchmark times them all:
//
//     Variant v(duct, gpus, options);   // allocates, the fluid at rest (rho = 1, u = 0)
//     v.run(steps);                     // `steps` time steps (asynchronous)
//     v.wait();
//     Moments m = v.moments();          // rho and u of every cell now (blocks)

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "devices.hpp"
#include "kernels.hpp"

namespace cases {
namespace lbm {

/// The duct: nx x ny x nz cells including the one-cell solid wall layer on the x and y sides, so
/// (nx - 2) x (ny - 2) fluid cells per cross-section; relaxation time tau (viscosity
/// nu = (tau - 1/2) / 3) and body force per unit volume `force` along z.
struct Duct {
  std::size_t nx = 0, ny = 0, nz = 0;
  double tau = 0.8;
  double force = 0.0;
  [[nodiscard]] std::size_t cells() const noexcept { return nx * ny * nz; }
  [[nodiscard]] double viscosity() const noexcept { return (tau - 0.5) / 3.0; }
};

/// Throws std::invalid_argument for a duct without fluid (nx or ny < 3, nz < 1), tau <= 1/2, or
/// a non-finite force.
void check(const Duct& duct);

/// The kernels' parameters for `duct`.
Physics physics(const Duct& duct);

/// The analytic fully developed velocity u_z at fluid cell (x, y) (1 <= x <= nx - 2) of the duct,
/// rho0 = 1 (White, Viscous Fluid Flow: the rectangular-duct series, walls midway between the
/// solid layer and the first fluid cells), summed until the terms fall below 1e-16 of the sum.
double analytic_uz(const Duct& duct, std::size_t x, std::size_t y);

/// The body force that makes the analytic centre-line velocity of `duct` equal `u_max`.
double force_for(const Duct& duct, double u_max);

/// rho, ux, uy, uz of every cell, x fastest (nx * ny * nz values each).
struct Moments {
  std::vector<float> rho, ux, uy, uz;
};

/// The relative L2 error of u_z against analytic_uz over the fluid cells of cross-section z
/// (sqrt(sum (u - u_a)^2 / sum u_a^2)).
double l2_error(const Duct& duct, const Moments& m, std::size_t z);

/// How a variant runs.
struct Options {
  Pattern pattern = Pattern::esoteric;
  Storage storage = Storage::fp32;
  /// Multi-GPU: update the slab's interior while the z faces cross, then its two boundary
  /// layers (false: exchange, then update the whole slab).
  bool overlap = true;
  /// Start from rest plus a density perturbation of this amplitude (launch_perturb), so that every
  /// z layer differs (tests); 0: at rest.
  float perturbation = 0.0f;
};

/// Single-GPU CUDA reference on gpus.cuda[0]: one slab, periodic along z inside the kernels.
class Single {
 public:
  Single(const Duct& duct, const Devices& gpus, Options options = {});
  ~Single();
  Single(const Single&) = delete;
  Single& operator=(const Single&) = delete;
  void run(std::size_t steps);
  void wait();
  Moments moments();

 private:
  Duct duct_;
  Options options_;
  int device_;
  cudaStream_t stream_ = nullptr;
  Slab a_, b_;          // b_.f is null for esoteric pull
  float* out_ = nullptr;  // the moments
  std::size_t steps_ = 0;
};

/// Multi-GPU raw CUDA: z slabs with one ghost layer; per step each GPU copies the populations
/// that cross its faces into its neighbours (cudaMemcpyPeerAsync of whole population planes on
/// a copy stream), updating its interior meanwhile; events order everything across GPUs.
class MultiCuda {
 public:
  MultiCuda(const Duct& duct, const Devices& gpus, Options options = {});
  ~MultiCuda();
  MultiCuda(const MultiCuda&) = delete;
  MultiCuda& operator=(const MultiCuda&) = delete;
  void run(std::size_t steps);
  void wait();
  Moments moments();

 private:
  struct Gpu;
  void exchange();
  void step();
  Duct duct_;
  Options options_;
  std::vector<Gpu> gpus_;
  std::size_t steps_ = 0;
};

/// Multi-GPU cush: the lattice is a cush::Field of 19 components on a grid split along z,
/// whose exchange moves only the populations that cross each face.
class MultiCush {
 public:
  MultiCush(const Duct& duct, const Devices& gpus, Options options = {});
  ~MultiCush();
  MultiCush(MultiCush&&) noexcept;
  void run(std::size_t steps);
  void wait();
  Moments moments();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Bytes a step moves per cell at least: every population loaded and stored once.
inline constexpr std::size_t bytes_per_update(Storage s) { return 2 * kQ * storage_bytes(s); }

}  // namespace lbm
}  // namespace cases
