#pragma once
// Case "wave": DiamondTorre as a variant of the case (the stretch variant, spec temporal.md §5):
// the single-GPU reference's problem and interface, order 2, stepped by DiamondSweep
// (diamond_kernel.hpp) a sweep of T steps at a time.
//
//     Diamond v(problem, gpus, {.radius = 3, .steps = 16});
//     v.upload(prev, cur);   // u^{-1} and u^0, n^3 values each, x fastest (unchanged until wait())
//     v.run(steps);          // asynchronous
//     v.download(prev, cur); // the levels now (prev may be null); returns when they are there
//
// The grid lives on gpus.cuda[0] as (n + 2T)^2 columns of n nodes, z fastest (diamond_ghosts.cuh),
// T = options.steps ghost columns a side in x and y; before every sweep the ghost columns of both
// levels are filled from the periodic grid. A run of k steps is k / T sweeps of T steps and one of
// k % T. Every step gives step_host's bits. Bad input throws std::invalid_argument before any GPU
// is used.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <memory>

#include "devices.hpp"
#include "diamond_kernel.hpp"
#include "wave.hpp"

namespace cases {
namespace wave {

struct DiamondOptions {
  int radius = 3;          ///< the diamonds' radius (DiamondSweep: 1 .. 3)
  std::size_t steps = 16;  ///< T, the steps of a sweep
  DiamondReads reads = DiamondReads::prefetched;  ///< when a tower reads the columns it does not keep
  std::size_t chunks = 0;  ///< blocks a tower (0: diamond_chunks' choice)
};

class Diamond {
 public:
  /// What the constructor checks before it uses a GPU: order 2, n 3 .. 2048, the Courant number,
  /// radius 1 .. 3, 1 .. 1024 steps a sweep, a column split diamond_chunks accepts.
  static void check(const Problem& p, const DiamondOptions& options);

  Diamond(Problem p, const Devices& gpus, DiamondOptions options = {});
  ~Diamond();
  Diamond(const Diamond&) = delete;
  Diamond& operator=(const Diamond&) = delete;
  void upload(const double* prev, const double* cur);
  void run(std::size_t steps);
  void wait();
  void download(double* prev, double* cur);

 private:
  const DiamondSweep& sweep_of(std::size_t steps);
  void fill_ghosts();
  void release() noexcept;
  Problem p_;
  DiamondOptions options_;
  int device_;
  std::size_t side_;
  cudaStream_t stream_ = nullptr;
  double* older_ = nullptr;    // u^{n-1} in the block's layout
  double* current_ = nullptr;  // u^n
  double* staging_ = nullptr;  // n^3 values, x fastest: what upload and download move
  std::map<std::size_t, std::unique_ptr<DiamondSweep>> sweeps_;  // by steps: T, and what a run leaves
};

}  // namespace wave
}  // namespace cases
