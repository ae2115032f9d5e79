#pragma once
// Case "wave": DiamondTorre's sweep on a GPU (diamond.hpp's schedule, diamond_tower.cuh's work
// for a tower), order 2, FP64. A block a tower, or, for a column taller than a block holds, a
// cluster of blocks a tower (diamond_chunks); a thread a z node; one launch a stage.
//
//     DiamondSweep sweep(radius, nx, ny, nz, steps);  // the stages, computed and uploaded once
//     sweep.run(even, odd, courant, stream);          // one sweep of `steps` steps, asynchronous
//
// The block is nx x ny columns of nz nodes, z fastest (node (x, y, z) at z + nz (x + nx y)), z
// periodic; level L of a column lives in the array of L's parity: on entry `even` holds level 0
// and `odd` level -1, afterwards level `steps` is in the array of its parity and `steps` - 1 in
// the other. Columns within `steps` of the block's edge come out as garbage (NaN): a block for a
// periodic n^2 plane carries `steps` ghost columns a side, filled before each sweep.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "diamond.hpp"

namespace cases {
namespace wave {

/// When a tower's threads read what a step needs from memory besides its own columns: the two
/// columns beyond the diamond's top and bottom vertices (tower::vertices) and, after the update,
/// each row's entering column (tower::move). The results are the same bits in every schedule.
enum class DiamondReads {
  in_step,     ///< the vertices after the step's barrier, just before the update that needs them;
               ///< the entering columns after the update, into the registers the next step uses
  step_ahead,  ///< the vertices during the step before, so that its barrier and update cover the
               ///< loads' latency; the entering columns as in_step
  prefetched,  ///< both, several steps ahead (prefetch_steps), copied into shared memory by
               ///< asynchronous copies that nothing waits for until the step that uses them
};

/// "in_step", "step_ahead" or "prefetched" (the benchmark rows' and probes' labels).
constexpr const char* name(DiamondReads r) {
  return r == DiamondReads::in_step ? "in_step" : r == DiamondReads::step_ahead ? "step_ahead" : "prefetched";
}

/// Every DiamondReads, for tests, probes and benchmark rows.
constexpr DiamondReads kDiamondReads[] = {DiamondReads::in_step, DiamondReads::step_ahead, DiamondReads::prefetched};

/// Whether `r` is one of kDiamondReads (not a value cast from elsewhere).
constexpr bool known(DiamondReads r) {
  return r == DiamondReads::in_step || r == DiamondReads::step_ahead || r == DiamondReads::prefetched;
}

/// How many steps ahead DiamondReads::prefetched reads, by radius (the shared memory it takes:
/// that many steps' tower::StepReads, 8 bytes a value and a z node, beside the z planes).
constexpr int prefetch_steps(int radius) { return radius >= 3 ? 3 : 4; }

class DiamondSweep {
 public:
  /// Radius 1 .. 3 (the diamond of 2R^2 + 2R + 1 columns a thread keeps in registers), nz 3 ..
  /// 2048 nodes a column, steps 1 .. 1024, a block of at least one column. A column runs in
  /// `chunks` blocks a tower (0: the fewest of at most 256 threads; diamond_chunks), more than one
  /// a thread-block cluster, which needs compute capability 9.0. std::invalid_argument otherwise,
  /// before any kernel runs; the stages go to the current device.
  DiamondSweep(int radius, std::size_t nx, std::size_t ny, std::size_t nz, std::size_t steps,
               DiamondReads reads = DiamondReads::prefetched, std::size_t chunks = 0);
  ~DiamondSweep();
  DiamondSweep(const DiamondSweep&) = delete;
  DiamondSweep& operator=(const DiamondSweep&) = delete;

  /// One sweep on `stream` over the block's two level arrays (nx ny nz doubles each, on the
  /// current device), Courant number `courant` (checked as the case checks it).
  void run(double* even, double* odd, double courant, cudaStream_t stream) const;

  /// run() on host levels in the host model's layout (x fastest, diamond.hpp): copied to the
  /// current device z fastest, swept, copied back; for tests and probes. Synchronous.
  void run_on_host(std::vector<double>& even, std::vector<double>& odd, double courant) const;

  /// A sweep of random levels (uniform in [-1, 1), from `seed`) here and in the host model
  /// (diamond_sweep_host, sweep order), compared node for node (compare_blocks, the inside past
  /// `steps` columns required finite). std::logic_error if the model itself breaks.
  [[nodiscard]] BlockComparison check_against_model(double courant, unsigned long long seed) const;

  [[nodiscard]] std::size_t stages() const { return sizes_.size(); }
  /// The blocks a tower and the threads a block.
  [[nodiscard]] const DiamondChunks& chunks() const { return chunks_; }
  /// The kernel's registers and local (spilled) bytes, as the driver reports them.
  [[nodiscard]] cudaFuncAttributes attributes() const;

 private:
  int radius_;
  int nx_, ny_, nz_, steps_;
  DiamondReads reads_;
  DiamondChunks chunks_;
  std::vector<void*> bases_;  // per stage: the towers' centres (int2) on the device
  std::vector<int> sizes_;    // per stage: its towers
};

}  // namespace wave
}  // namespace cases
