#pragma once
/// @file field.hpp
/// @brief Values on a decomposed grid: one block per device, each in a buffer with ghost
/// layers, and the halo exchange that keeps the ghosts up to date.
///
/// Streams and validity (as for a Plan): scatter(), gather() and exchange_finish() are enqueued
/// on the blocks' streams (block(k).stream) and return at once; wait() blocks. The exchange runs
/// on a second stream per device between exchange_start() and exchange_finish(), so a kernel
/// the user enqueues on block(k).stream in between runs alongside it:
///
///     field.exchange_start();                 // after the work already on the blocks' streams
///     field.for_each([](cush::Block<double> b) { step(b, grid.interior(b.pos, 1)); });
///     field.exchange_finish();                // the blocks' streams wait for the ghosts
///     field.for_each([](cush::Block<double> b) { for (auto box : grid.boundary(b.pos, 1)) step(b, box); });
///
/// Between start and finish the kernels may read every owned cell but must not write the
/// cells the exchange sends (the outermost `halo` layers of each side with a neighbour) nor
/// touch the ghost cells: write the step's result into another field. Ghosts beyond a
/// non-periodic edge of the grid hold what the user puts there (boundary values); the exchange
/// never writes them from owned cells, but the edge and corner ghosts of a block that lie beyond
/// such an edge and also beyond a neighbour's face receive that neighbour's boundary ghosts.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/distribution.hpp"
#include "cush/grid.hpp"
#include "cush/plan.hpp"

#ifndef CUSH_HOST_DEVICE
#if defined(__CUDACC__)
#define CUSH_HOST_DEVICE __host__ __device__
#else
#define CUSH_HOST_DEVICE
#endif
#endif

namespace cush {

/// @brief One device's block of a Field: its buffer with ghost layers and where it lies.
template <class T>
struct Block {
  T* data = nullptr;       ///< the buffer, ghost layers included (x fastest)
  Extent3 alloc{};         ///< the buffer's sizes
  Extent3 halo{};          ///< ghost layers per side along each axis
  Box owned;               ///< the owned cells in global coordinates
  int device = -1;
  std::size_t pos = 0;     ///< the block's number in the Decomposition and the DeviceSet
  cudaStream_t stream = nullptr;

  /// The buffer position of the cell at local coordinates (x, y, z); ghosts are negative or
  /// >= the owned size. Usable in device code.
  CUSH_HOST_DEVICE std::size_t index(std::ptrdiff_t x, std::ptrdiff_t y, std::ptrdiff_t z) const {
    return static_cast<std::size_t>(x + static_cast<std::ptrdiff_t>(halo[0])) +
           alloc[0] * (static_cast<std::size_t>(y + static_cast<std::ptrdiff_t>(halo[1])) +
                       alloc[1] * static_cast<std::size_t>(z + static_cast<std::ptrdiff_t>(halo[2])));
  }
};

namespace detail {

/// The type-independent machinery of a Field: the exchange's streams, events and message
/// buffers, and the host <-> block copies.
class FieldEngine {
 public:
  FieldEngine(const DeviceSet& devices, const Decomposition& grid, std::size_t element_size);
  ~FieldEngine();
  FieldEngine(const FieldEngine&) = delete;
  FieldEngine& operator=(const FieldEngine&) = delete;

  void exchange_start(std::span<void* const> data, std::span<const cudaStream_t> streams);
  void exchange_finish(std::span<const cudaStream_t> streams);
  [[nodiscard]] bool exchanging() const noexcept;
  /// Host global array (no ghosts, x fastest) <-> the blocks' owned cells, on `streams`.
  void scatter(const void* host, std::span<void* const> data, std::span<const cudaStream_t> streams) const;
  void gather(void* host, std::span<void* const> data, std::span<const cudaStream_t> streams) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

[[noreturn]] void throw_block_count(std::size_t devices, std::size_t blocks);
/// Element counts of the blocks' buffers, for the plan that owns them.
Distribution block_distribution(const Decomposition& grid);
std::size_t total_cells(const Decomposition& grid);

}  // namespace detail

/// @brief A field of T on a grid decomposed over a device set (block k on devices[k]).
template <class T>
class Field {
 public:
  /// Throws InvalidArgument if the decomposition does not have one block per device.
  Field(DeviceSet devices, Decomposition grid)
      : grid_(std::move(grid)),
        plan_(checked(std::move(devices), grid_), detail::total_cells(grid_), detail::block_distribution(grid_)),
        engine_(std::make_unique<detail::FieldEngine>(plan_.devices(), grid_, sizeof(T))) {}
  /// A grid of `extent` cells with `dims` axes, decomposed over `devices` with `options`.
  Field(DeviceSet devices, const Extent3& extent, std::size_t dims, const GridOptions& options = {})
      : Field(devices, Decomposition(extent, dims, devices.size(), options)) {}
  Field(Field&&) noexcept = default;
  /// Not assignable: the old buffers could still be in use by an exchange in flight.
  Field& operator=(Field&&) = delete;

  [[nodiscard]] const Decomposition& grid() const noexcept { return grid_; }
  [[nodiscard]] const DeviceSet& devices() const noexcept { return plan_.devices(); }
  /// The plan that owns the buffers and streams (its segments are the blocks' buffers).
  [[nodiscard]] Plan<T>& plan() noexcept { return plan_; }

  [[nodiscard]] Block<T> block(std::size_t k) const {
    const Segment<T> s = plan_.segment(k);
    return Block<T>{s.data(), grid_.allocated(k), {grid_.halo(0), grid_.halo(1), grid_.halo(2)},
                    grid_.owned(k), s.device(), k, s.stream()};
  }
  /// Calls f(block(k)) for every block, in order, with the block's device current.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t k = 0; k < grid_.size(); ++k) {
      const Block<T> b = block(k);
      const DeviceGuard guard(b.device);
      f(b);
    }
  }

  /// The global array `host` (extent cells, x fastest, no ghosts) into the blocks' owned cells.
  /// `host` must stay valid and unchanged until wait() returns.
  void scatter(const T* host) { engine_->scatter(host, data(), streams()); }
  /// The blocks' owned cells into the global array `host`, valid after wait().
  void gather(T* host) { engine_->gather(host, data(), streams()); }

  /// Starts filling every ghost cell with the value of the cell it stands for, after the work
  /// already enqueued on the blocks' streams. Throws if an exchange is already in flight.
  void exchange_start() { engine_->exchange_start(data(), streams()); }
  /// Orders the blocks' streams after the exchange (does not block the host).
  void exchange_finish() { engine_->exchange_finish(streams()); }
  /// exchange_start() and exchange_finish().
  void exchange() {
    exchange_start();
    exchange_finish();
  }
  /// Blocks until all work on the blocks' streams is done (finish an exchange first).
  void wait() const { plan_.wait(); }

 private:
  static DeviceSet checked(DeviceSet devices, const Decomposition& grid) {
    if (devices.size() != grid.size()) detail::throw_block_count(devices.size(), grid.size());
    return devices;
  }
  std::vector<void*> data() const {
    std::vector<void*> d;
    for (std::size_t k = 0; k < grid_.size(); ++k) d.push_back(plan_.segment(k).data());
    return d;
  }
  std::vector<cudaStream_t> streams() const {
    std::vector<cudaStream_t> s;
    for (std::size_t k = 0; k < grid_.size(); ++k) s.push_back(plan_.stream(k));
    return s;
  }

  Decomposition grid_;
  Plan<T> plan_;
  std::unique_ptr<detail::FieldEngine> engine_;
};

}  // namespace cush
