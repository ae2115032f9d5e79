#pragma once
// Case "wave" (seed 004): the leapfrog wave equation on the periodic unit cube, the three variants.
// Every variant keeps two time levels, the older and the current, and steps in place as the seed
// does: the new level overwrites the older one (kernels.hpp's launch_step), so after a step the
// roles swap. Every variant computes step_host's bits (reference.hpp).
//
//     Variant v(problem, gpus, options);   // allocates on the devices (a cases::Devices)
//     v.upload(prev, cur);                 // u^{-1} and u^0 (n^3 values each, x fastest; both must
//                                          // stay unchanged until wait())
//     v.run(steps);                        // asynchronous
//     v.wait();
//     v.download(prev, cur);               // the levels now (prev may be null); returns when there
//
// The grid is split along z into one slab per GPU. With Options::steps = T > 1 a launch of the
// streaming kernel (kernels.hpp's launch_steps) does T steps per exchange of T radius ghost
// layers: out of place, so every variant then keeps four levels (two pairs) instead of two. Bad
// input throws std::invalid_argument.

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/field.hpp"
#include "devices.hpp"
#include "kernels.hpp"

namespace cases {
namespace wave {

/// n^3 nodes, the stencil's order (2, 4, 6, 8) and the Courant number c dt / h.
struct Problem {
  std::size_t n = 0;
  int order = 2;
  double courant = 0.5;
  [[nodiscard]] std::size_t points() const noexcept { return n * n * n; }
};

/// leapfrog(p.order, p.courant), after checking that a side has at least 2 radius + 1 nodes (the
/// host reference's limit); std::invalid_argument otherwise.
inline Leapfrog checked_leapfrog(const Problem& p) {
  const Leapfrog l = leapfrog(p.order, p.courant);
  if (p.n < 2 * static_cast<std::size_t>(l.radius) + 1)
    throw std::invalid_argument("cases::wave: " + std::to_string(p.n) + " nodes a side at order " +
                                std::to_string(p.order) + " (at least " + std::to_string(2 * l.radius + 1) + ")");
  return l;
}

/// How a step meets the halo exchange (the multi-GPU variants).
enum class Schedule {
  bulk,     ///< exchange, then every owned node
  overlap,  ///< the nodes that need no ghost during the exchange, then the rest
};

struct Options {
  Schedule schedule = Schedule::bulk;
  /// Steps a launch fuses (1 .. max_fused_steps(order)), each exchange filling steps x radius
  /// ghost layers; the last launch of a run takes what is left.
  std::size_t steps = 1;
};

/// Single-GPU reference on gpus.cuda[0]: the grid whole with `radius` ghost layers, the periodic
/// halo of the current level filled before every step (fused: steps x radius layers of both
/// levels before every launch).
class Single {
 public:
  Single(Problem p, const Devices& gpus, Options options = {});
  ~Single();
  Single(const Single&) = delete;
  Single& operator=(const Single&) = delete;
  void upload(const double* prev, const double* cur);
  void run(std::size_t steps);
  void wait();
  void download(double* prev, double* cur);

 private:
  Problem p_;
  Leapfrog l_;
  std::size_t fused_;  // steps a launch
  std::size_t h_;
  int device_;
  cudaStream_t stream_ = nullptr;
  std::array<double*, 4> levels_{};  // u^{n-1}, u^n; fused: where the launch puts u^{n+T-1}, u^{n+T}
};

/// Multi-GPU raw CUDA: z slabs with `radius` ghost layers; per step each GPU fills its x and y
/// ghosts, pushes its first and last `radius` planes of the current level into its neighbours'
/// ghost planes (cudaMemcpyPeerAsync on a second stream) and steps its slab; events order the
/// GPUs. Needs `radius` z planes per GPU. Fused: steps x radius ghost layers, both levels' planes
/// pushed, the launch out of place into the other pair.
class MultiCuda {
 public:
  MultiCuda(Problem p, const Devices& gpus, Options options = {});
  ~MultiCuda();
  MultiCuda(const MultiCuda&) = delete;
  MultiCuda& operator=(const MultiCuda&) = delete;
  void upload(const double* prev, const double* cur);
  void run(std::size_t steps);
  void wait();
  void download(double* prev, double* cur);

 private:
  void step(std::size_t steps);
  Problem p_;
  Leapfrog l_;
  std::size_t fused_;  // steps a launch
  std::size_t h_;
  std::vector<int> ids_;
  int gpus_;
  Options options_;
  std::vector<std::size_t> planes_, first_plane_;
  std::vector<cudaStream_t> compute_, comm_;
  std::vector<cudaEvent_t> ready_, sent_;
  std::vector<double*> older_, current_, next_older_, next_;  // the last two fused only
};

/// Multi-GPU cush: the two levels as two cush::Fields made alike, stepped by cush::advance with
/// one step per exchange of `radius` layers (bulk or overlapped): each update writes the new level
/// over the older field's cells and the roles swap. Fused: the two levels as the two components
/// of a field, cush::advance's fused cycles from it into a field made alike.
class MultiCush {
 public:
  MultiCush(Problem p, const Devices& gpus, Options options = {});
  void upload(const double* prev, const double* cur);
  void run(std::size_t steps);
  void wait();
  void download(double* prev, double* cur);

 private:
  cush::Field<double>& current() { return swapped_ ? b_ : a_; }
  cush::Field<double>& older() { return swapped_ ? a_ : b_; }
  Problem p_;
  Leapfrog l_;
  Options options_;
  cush::Field<double> a_, b_;  // fused: each holds both levels (older, current), a_ the input first
  bool swapped_ = false;       // the current level (fused: the levels) in b_
};

}  // namespace wave
}  // namespace cases
