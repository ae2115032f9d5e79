#pragma once
// Case "karst": the resident path of the heat model (resident.cu). One thread-block cluster runs
// one member from its initial condition to its last step with the member's whole state in the
// cluster's shared memory: the rock split by columns over the blocks, the water and its pivots in
// block 0. HBM sees the forcing, the curve and, once at the end, the final state. It runs the
// streaming kernels' device code (passes.cuh) in the same order, so the two paths agree bit for bit.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

#include "karst.hpp"

namespace cases::karst {

/// How one member is laid over a cluster.
struct ResidentShape {
  int cluster = 0;          ///< blocks per member (1, 2, 4, 8 or 16)
  int columns = 0;          ///< rock columns per block
  int threads = 0;          ///< threads per block
  std::size_t shared = 0;   ///< dynamic shared memory per block [bytes]
  int registers = 1;        ///< rows of a column held in registers (the rest in shared memory)
  int active_clusters = 0;  ///< members the current device runs at once
};

/// The shape for `grid` on the current device, or none where the path cannot run there: compute
/// capability below 9.0 (no clusters), or a member's rock, water and factors too large for 16
/// blocks' shared memory. Of the shapes that fit, the one that runs the most members at once.
std::optional<ResidentShape> resident_shape(const Grid& grid);

/// A run of `count` members (device pointers; forcing packed as pack() does, 3 x steps).
struct ResidentRun {
  const Groups* members = nullptr;
  std::size_t count = 0;
  const double* forcing = nullptr;
  std::size_t steps = 0;
  Grid grid{};
  Outlet outlet = Outlet::advective;
  double* curves = nullptr;  ///< count x steps
  double* rock = nullptr;    ///< count x M x N, the final rock (Workspace layout)
  double* water = nullptr;   ///< count x N, the final water
};

/// Enqueues the run on `stream` (current device), one cluster of `shape` per member.
void launch_resident(const ResidentRun& run, const ResidentShape& shape, cudaStream_t stream);

}  // namespace cases::karst
