#pragma once
// Case "karst": the GPU side every variant shares. One GPU advances a batch of members (an
// ensemble, or its part on that GPU) together: every kernel covers all members, so a step costs
// a few launches whatever the batch size.
//
// The rock (heat model only): each member has N columns of M nodes, stored i-major (member k's
// row i is N contiguous doubles), one thread per column. Every column of a member has the same
// M x M matrix, so its factors are computed once per member per time step (and only when dt
// changes). Steps alternate LU and UL factorizations so that one pass over a column does the
// substitution of one step and the elimination of the next in the same direction: the rock is
// read and written once per step, not twice (kernels.cu explains the schedule).
// The water: one block per member; with the Thomas pivots cached while dt and v stay the same, both
// sweeps are affine recurrences, which the block scans in parallel.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <vector>

#include "cush/device_buffer.hpp"
#include "karst.hpp"

namespace cases::karst {

/// One GPU's part of an ensemble run, as device pointers.
struct Batch {
  const Groups* members = nullptr;  ///< count members
  const double* forcing = nullptr;  ///< 3 x steps: dt*, then v, then inlet (pack())
  double* curves = nullptr;         ///< count x steps: curves[k * steps + s], member k's outlet after step s
  std::size_t count = 0;
};

/// What every variant checks before a run: check(model, grid, forcing, members), and an observed
/// curve of `forcing.steps()` values or none (std::invalid_argument naming the variant).
void check_run(const char* variant, Model model, const Grid& grid, const Forcing& forcing,
               std::span<const Groups> members, std::span<const double> observed);

/// The forcing as one array of 3 x steps values (dt*, v, inlet), as Batch::forcing holds it.
std::vector<double> pack(const Forcing& forcing);

/// The device memory a GPU needs to advance up to `capacity` members of `grid`: rock (heat), water
/// and the factors. Allocated on `device` (a CUDA id) at construction.
class Workspace {
 public:
  Workspace(int device, Model model, const Grid& grid, std::size_t capacity);
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] Model model() const { return model_; }
  [[nodiscard]] const Grid& grid() const { return grid_; }
  /// The state after a run: member k's rock node i of column j is rock()[(k * M + i) * N + j]
  /// (heat only), its water node j is water()[k * N + j].
  [[nodiscard]] const double* rock() const { return static_cast<const double*>(rock_.data()); }
  [[nodiscard]] const double* water() const { return static_cast<const double*>(water_.data()); }
  /// Bytes a workspace of `capacity` members takes.
  static std::size_t bytes(Model model, const Grid& grid, std::size_t capacity);

 private:
  friend class Forward;
  int device_;
  Model model_;
  Grid grid_;
  std::size_t capacity_;
  cush::DeviceBuffer rock_, water_;
  cush::DeviceBuffer rock_elim_[2], rock_sub_[2], rock_wall_[2];  // [0]: LU factors, [1]: UL factors
  cush::DeviceBuffer water_factors_;
};

/// Enqueues a whole forward run of the batch on `stream` (the caller's current device must be the
/// workspace's): every member starts at the initial condition (all fields 1) and steps through
/// `forcing`, whose values the host needs to decide when factors change; `batch.forcing` holds the
/// same values on the device. `path` picks the kernels (karst.hpp's Path). Throws
/// std::invalid_argument for a batch larger than the workspace, a workspace made for another model
/// or grid, or Path::resident where it cannot run (the solute model, a device before compute
/// capability 9.0, a member too large for a cluster's shared memory).
/// Asynchronous: the curves are complete when the stream is.
void launch_forward(Model model, const Grid& grid, Outlet outlet, const Forcing& forcing, const Batch& batch,
                    Workspace& work, cudaStream_t stream, Path path = Path::automatic);

/// misfits[k] = the RMS over `steps` of curves[k * steps + s] - observed[s], for `count` members.
void launch_misfits(const double* curves, const double* observed, std::size_t count, std::size_t steps,
                    double* misfits, cudaStream_t stream);

}  // namespace cases::karst
