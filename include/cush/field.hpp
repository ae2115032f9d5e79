#pragma once
/// @file field.hpp
/// @brief Values on a decomposed grid: one block per device, each in a buffer with ghost
/// layers, and the halo exchange that keeps the ghosts up to date.
///
/// Streams and validity (as for a Plan): scatter(), gather() and exchange_finish() are enqueued
/// on the blocks' streams (block(k).stream) and return at once; wait() blocks, done() asks
/// without blocking. exchange_start() enqueues the copies of the axes exchanged in place
/// (Decomposition::exchanged_in_place: those before the first split axis, whose ghosts are the
/// block's own cells) on the blocks' streams, and the rest of the exchange on a second stream per
/// device, which runs until exchange_finish(); a kernel the user enqueues on block(k).stream in
/// between runs alongside it and may read the ghosts filled in place:
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
#include <utility>
#include <vector>

#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/grid.hpp"

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
  T* data = nullptr;       ///< the buffer's first ghost cell (x fastest, ghost layers included)
  Extent3 alloc{};         ///< the buffer's sizes; alloc[0] is the row pitch (GridOptions::row_align)
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

/// @brief How a Field's exchange moves a face that is strided in memory (an x face, or a y face
/// of a block with x ghosts). Contiguous faces are always one copy-engine copy.
enum class HaloTransport {
  /// One kernel on the sender packs the face straight into the receiver's memory over the peer
  /// link (where the two devices have peer access); the receiver unpacks. Otherwise staged.
  automatic,
  /// Pack into a buffer on the sender, copy it to the receiver, unpack there.
  staged,
};

/// @brief The type-independent part of a Field (see Field<T>).
class FieldBase {
 public:
  /// Not assignable: the old buffers could still be in use by an exchange in flight.
  FieldBase& operator=(FieldBase&&) = delete;
  FieldBase(const FieldBase&) = delete;
  FieldBase& operator=(const FieldBase&) = delete;

  [[nodiscard]] const Decomposition& grid() const noexcept;
  [[nodiscard]] const DeviceSet& devices() const noexcept;
  /// The stream of block k (shared by every field made alike).
  [[nodiscard]] cudaStream_t stream(std::size_t k) const;

  /// Starts filling every ghost cell with the value of the cell it stands for, after the work
  /// already enqueued on the blocks' streams. Throws if an exchange is already in flight.
  void exchange_start();
  /// Orders the blocks' streams after the exchange (does not block the host).
  void exchange_finish();
  /// The same as exchange_start() then exchange_finish(), but run on the blocks' streams
  /// themselves, which saves the hops to the exchange streams and back: use it when nothing is
  /// to overlap the exchange.
  void exchange();
  /// How strided faces move (default HaloTransport::automatic; a field made alike takes its
  /// model's). Setting it to another transport waits for all work on the blocks' streams (like
  /// wait()); throws InvalidArgument while an exchange is in flight.
  void set_halo_transport(HaloTransport transport);
  [[nodiscard]] HaloTransport halo_transport() const noexcept;
  /// Diagnostics: the slab count of each message the exchange pipelines (a strided face packed
  /// into the peer and unpacked slab by slab while later slabs cross the link), in phase order;
  /// empty when no face reaches the threshold (docs/grid.md, "Pipelined faces").
  [[nodiscard]] std::vector<std::size_t> pipelined_slabs() const;
  /// Blocks until all work on the blocks' streams is done (finish an exchange first); throws
  /// CudaError if any of it failed.
  void wait() const;
  /// True if all work on the blocks' streams and on the exchange's own streams (an exchange in
  /// flight) is done; does not block. Throws CudaError if any of it failed.
  [[nodiscard]] bool done() const;

 protected:
  FieldBase(FieldBase&&) noexcept;
  /// Waits for the blocks' streams and the exchange, then frees the buffers.
  ~FieldBase();
  FieldBase(DeviceSet devices, Decomposition grid, std::size_t element_size);
  /// A field on `like`'s grid, devices and streams.
  FieldBase(const FieldBase& like, std::size_t element_size);
  [[nodiscard]] void* block_data(std::size_t k) const;
  [[nodiscard]] int block_device(std::size_t k) const;
  void scatter_bytes(const void* host);
  void gather_bytes(void* host);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// @brief A field of T on a grid decomposed over a device set (block k on devices[k]).
///
/// Fields made alike (`Field<U>::alike(u)`) share the grid, the devices and the blocks' streams, so
/// a kernel that reads one and writes the other is ordered with both (double buffering).
template <class T>
class Field : public FieldBase {
 public:
  /// Throws InvalidArgument if the decomposition does not have one block per device, and
  /// OutOfMemory if a block's buffer does not fit its device.
  Field(DeviceSet devices, Decomposition grid) : FieldBase(std::move(devices), std::move(grid), sizeof(T)) {}
  /// A grid of `extent` cells with `dims` axes, decomposed over `devices` with `options`.
  Field(DeviceSet devices, const Extent3& extent, std::size_t dims, const GridOptions& options = {})
      : Field(devices, Decomposition(extent, dims, devices.size(), options)) {}
  /// A new field (uninitialized) on the grid, devices and streams of `like` (a Field of any
  /// type): `auto next = cush::Field<double>::alike(u);`.
  [[nodiscard]] static Field alike(const FieldBase& like) { return Field(like, Alike{}); }
  Field(Field&&) noexcept = default;

  [[nodiscard]] Block<T> block(std::size_t k) const {
    return Block<T>{static_cast<T*>(block_data(k)), grid().allocated(k), {grid().halo(0), grid().halo(1), grid().halo(2)},
                    grid().owned(k), block_device(k), k, stream(k)};
  }
  /// Calls f(block(k)) for every block, in order, with the block's device current.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t k = 0; k < grid().size(); ++k) {
      const Block<T> b = block(k);
      const DeviceGuard guard(b.device);
      f(b);
    }
  }

  /// The global array `host` (extent cells, x fastest, no ghosts) into the blocks' owned cells.
  /// `host` must stay valid and unchanged until wait() returns.
  void scatter(const T* host) { scatter_bytes(host); }
  /// The blocks' owned cells into the global array `host`, valid after wait().
  void gather(T* host) { gather_bytes(host); }

 private:
  struct Alike {};
  Field(const FieldBase& like, Alike) : FieldBase(like, sizeof(T)) {}
};

}  // namespace cush
