#pragma once
/// @file field.hpp
/// @brief Values on a decomposed grid: one block per device, each in a buffer with ghost
/// layers, and the halo exchange that keeps the ghosts up to date.
///
/// Streams and validity (as for a Plan): scatter(), gather() and exchange_finish() are enqueued
/// on the blocks' streams (block(pos).stream()) and return at once; wait() blocks, done() asks
/// without blocking. exchange_start() enqueues the copies of the axes exchanged in place
/// (Decomposition::exchanged_in_place: those before the first split axis, whose ghosts are the
/// block's own cells) on the blocks' streams, and the rest of the exchange on a second stream per
/// device, which runs until exchange_finish(); a kernel the user enqueues on block(pos).stream() in
/// between runs alongside it and may read the ghosts filled in place:
///
///     field.exchange_start();                 // after the work already on the blocks' streams
///     field.for_each([](cush::Block<double> b) { step(b, grid.interior(b.pos(), 1)); });
///     field.exchange_finish();                // the blocks' streams wait for the ghosts
///     field.for_each([](cush::Block<double> b) { for (auto box : grid.boundary(b.pos(), 1)) step(b, box); });
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

#include "cush/block.hpp"
#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/grid.hpp"
#include "cush/halo_components.hpp"
#include "cush/stream.hpp"

namespace cush {

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
  FieldBase(FieldBase&&) noexcept;
  /// Waits for the work on the old field's streams (an exchange in flight too) and frees it,
  /// then takes `other`'s.
  FieldBase& operator=(FieldBase&&) noexcept;
  FieldBase(const FieldBase&) = delete;
  FieldBase& operator=(const FieldBase&) = delete;
  /// Waits for the blocks' streams and the exchange, then frees the buffers.
  ~FieldBase();

  /// A moved-from field may be destroyed, assigned to, asked components() (0), done() (true)
  /// and waited for (it returns at once); anything else throws InvalidArgument ("this").
  [[nodiscard]] const Decomposition& grid() const;
  [[nodiscard]] const DeviceSet& devices() const;
  /// Values per cell, each stored as a separate array (SoA; see Block).
  [[nodiscard]] std::size_t components() const noexcept;
  /// Elements from one component of the block at `pos` to the next (Block::component_stride()).
  [[nodiscard]] std::size_t component_stride(std::size_t pos) const;
  /// The stream of the block at position `pos` (shared by every field made alike).
  [[nodiscard]] cudaStream_t stream(std::size_t pos) const;
  /// Every block's stream with its device, by position (what CapturedWork takes).
  [[nodiscard]] std::vector<StreamRef> streams() const;

  /// Starts filling every ghost cell with the value of the cell it stands for, after the work
  /// already enqueued on the blocks' streams. Throws if an exchange is already in flight.
  void exchange_start();
  /// Orders the blocks' streams after the exchange (does not block the host).
  void exchange_finish();
  /// The same as exchange_start() then exchange_finish(), but run on the blocks' streams
  /// themselves, which saves the hops to the exchange streams and back: use it when nothing is
  /// to overlap the exchange.
  void exchange();

  /// The exchanges above move every component; these move the components `which` names
  /// (cush/halo_components.hpp): per axis and direction, fills of ghosts and write-backs of
  /// ghosts into the cells they stand for. Between exchange_start(which) and exchange_finish()
  /// kernels must also leave alone the owned cells a write-back overwrites (the outermost `halo`
  /// layers of each side with a neighbour) in the components written back. The first exchange
  /// of each distinct `which` builds its program (kept for the field's life; a time-stepping
  /// loop alternates between a few). InvalidArgument, before anything is enqueued, if `which`
  /// does not suit the field (check the rules in halo_components.hpp).
  void exchange_start(const HaloComponents& which);
  void exchange(const HaloComponents& which);
  /// How strided faces move (default HaloTransport::automatic; a field made alike takes its
  /// model's). Setting it to another transport waits for all work on the blocks' streams (like
  /// wait()); throws InvalidArgument while an exchange is in flight.
  void set_halo_transport(HaloTransport transport);
  [[nodiscard]] HaloTransport halo_transport() const;
  /// Diagnostics: the slab count of each message the exchange pipelines (a strided face packed
  /// into the peer and unpacked slab by slab while later slabs cross the link), in phase order;
  /// empty when no face reaches the threshold (docs/grid.md, "Pipelined faces").
  [[nodiscard]] std::vector<std::size_t> pipelined_slabs() const;
  /// Blocks until all work on the blocks' streams is done (finish an exchange first); throws
  /// CudaError if any of it failed, after every device of the field has finished all its work.
  void wait() const;
  /// True if all work on the blocks' streams and on the exchange's own streams (an exchange in
  /// flight) is done; does not block. Throws CudaError if any of it failed, after every device of
  /// the field has finished all its work (as wait() does).
  [[nodiscard]] bool done() const;

 protected:
  FieldBase(DeviceSet devices, Decomposition grid, std::size_t element_size, std::size_t components);
  FieldBase(DeviceSet devices, Decomposition grid, std::span<const StreamRef> streams, std::size_t element_size,
            std::size_t components);
  /// A field on `like`'s grid, devices and streams.
  FieldBase(const FieldBase& like, std::size_t element_size, std::size_t components);
  [[nodiscard]] void* block_data(std::size_t pos) const;
  void scatter_bytes(const void* host);
  void gather_bytes(void* host);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// @brief A field of T on a grid decomposed over a device set (block k on devices[k]), with
/// `components` values per cell (default 1), each stored as its own array (see Block).
///
/// Fields made alike (`Field<U>::alike(u)`) share the grid, the devices and the blocks' streams, so
/// a kernel that reads one and writes the other is ordered with both (double buffering).
template <class T>
class Field : public FieldBase {
 public:
  /// Throws InvalidArgument if the decomposition does not have one block per device or
  /// `components` is 0, and OutOfMemory if a block's buffer does not fit its device.
  Field(DeviceSet devices, Decomposition grid, std::size_t components = 1)
      : FieldBase(std::move(devices), std::move(grid), sizeof(T), components) {}
  /// A grid of `extent` cells with `dims` axes, decomposed over `devices` with `options`.
  Field(DeviceSet devices, const Extent3& extent, std::size_t dims, const GridOptions& options = {},
        std::size_t components = 1)
      : Field(devices, Decomposition(extent, dims, devices.size(), options), components) {}
  /// A field whose blocks' work runs on the caller's streams: streams[pos] is a created stream
  /// (not the default stream) of devices[pos]. cush never destroys them; they must outlive the
  /// field (and the fields made alike), whose destruction waits for them. InvalidArgument, before
  /// anything is allocated, for a wrong count, a default stream or a stream of another device.
  Field(DeviceSet devices, Decomposition grid, std::span<const StreamRef> streams, std::size_t components = 1)
      : FieldBase(std::move(devices), std::move(grid), streams, sizeof(T), components) {}
  /// A new field (uninitialized) on the grid, devices and streams of `like` (a Field of any
  /// type), with as many components as `like`: `auto next = cush::Field<double>::alike(u);`.
  [[nodiscard]] static Field alike(const FieldBase& like) { return Field(like, Alike{}, like.components()); }
  /// The same with `components` components.
  [[nodiscard]] static Field alike(const FieldBase& like, std::size_t components) {
    return Field(like, Alike{}, components);
  }

  /// The block at position `pos` of the device set.
  [[nodiscard]] Block<T> block(std::size_t pos) const {
    return Block<T>(static_cast<T*>(block_data(pos)), grid().allocated(pos),
                    Extent3{grid().halo(0), grid().halo(1), grid().halo(2)}, grid().owned(pos), devices()[pos], pos,
                    stream(pos), components(), component_stride(pos));
  }
  /// Calls f(block(pos)) for every block, in order, with the block's device current.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t pos = 0; pos < grid().size(); ++pos) {
      const Block<T> b = block(pos);
      const DeviceGuard guard(b.device());
      f(b);
    }
  }

  /// An exchange overlapped with an update of the owned cells, the pattern at the top of this
  /// file: exchange_start(which), then update(block, box) for each block's interior at `radius`
  /// (Decomposition::interior), exchange_finish(), then update(block, box) for each box of the
  /// block's boundary; every call with the block's device current, none for an empty box.
  /// `update` enqueues work on block.stream() over the cells of `box` (local coordinates); while
  /// the exchange is in flight that work must follow the rules of exchange_start(which).
  template <class F>
  void exchange_overlapped(const HaloComponents& which, std::size_t radius, F&& update) {
    overlapped([&] { exchange_start(which); }, radius, update);
  }
  /// The same, every component exchanged.
  template <class F>
  void exchange_overlapped(std::size_t radius, F&& update) {
    overlapped([&] { exchange_start(); }, radius, update);
  }

  /// The global array `host` (extent cells, x fastest, no ghosts; with several components, one
  /// such array per component, one after another) into the blocks' owned cells. `host` must stay
  /// valid and unchanged until wait() returns.
  void scatter(const T* host) { scatter_bytes(host); }
  /// The blocks' owned cells into the global array(s) `host`, valid after wait().
  void gather(T* host) { gather_bytes(host); }

 private:
  struct Alike {};
  Field(const FieldBase& like, Alike, std::size_t components) : FieldBase(like, sizeof(T), components) {}

  template <class Start, class F>
  void overlapped(Start start, std::size_t radius, F& update) {
    const Decomposition& g = grid();
    start();
    for_each([&](const Block<T>& b) {
      if (const Box in = g.interior(b.pos(), radius); !in.empty()) update(b, in);
    });
    exchange_finish();
    for_each([&](const Block<T>& b) {
      for (const Box& box : g.boundary(b.pos(), radius)) update(b, box);
    });
  }
};

}  // namespace cush
