#pragma once
/// @file graph_field.hpp
/// @brief Values on a GraphDecomposition: one part per device, each holding its owned values and
/// its ghosts in the part's local order, and the halo exchange that fills the ghosts.
///
/// Part k's buffer holds |G_k| values (GraphPart::size()) per component, in its local order
/// [Q\(B+O)] [O\B] [O&B] [B\O] [R by owner] (graph.hpp): a kernel on the rows of a range of
/// owned nodes reads any local index its localized columns name (GraphDecomposition::localize).
/// An exchange fills every ghost with the value its owner holds.
///
/// Streams and validity (as for a Field): scatter(), gather(), exchange() and exchange_finish()
/// are enqueued on the blocks' streams and return at once; wait() blocks, done() asks without
/// blocking. exchange_start() hops to a second stream per device, after the work already on the
/// blocks' streams; kernels enqueued on block(pos).stream() before exchange_finish() run beside
/// it and may read every owned value but must not write the sent ones (sent()) nor touch the
/// ghosts (ghosts()). The overlapped step of the seed's solvers (docs/graph.md):
///
///     u.exchange_start();
///     u.for_each([](cush::GraphBlock<double> b) { rows(b, b.part().interior()); });  // Q\B: no ghost read
///     u.exchange_finish();
///     u.for_each([](cush::GraphBlock<double> b) { rows(b, b.part().boundary()); });  // B
///
/// which exchange_overlapped(update) does in one call. exchange() runs everything on the blocks'
/// streams, for a step with nothing to overlap. Exchanges enqueue only copies, kernels and event
/// records and waits, so they can be captured into a CUDA graph.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/graph.hpp"
#include "cush/host_device.hpp"
#include "cush/stream.hpp"

namespace cush {

/// @brief How a GraphField's exchange moves a message (the values one part sends another).
enum class GraphTransport {
  /// `peer` between devices that reach each other (peer access, or one GPU), else `staged`.
  automatic,
  /// One step on the sender: a copy-engine copy into the receiver's ghosts where the sent values
  /// are one run of local indices, else a gather kernel storing into them over the peer link.
  /// InvalidArgument if two parts that exchange have no peer access.
  peer,
  /// Gather into a buffer on the sender, then copy it into the receiver's ghosts.
  staged,
  /// Gather on the sender, copy to pinned host memory, copy from there into the receiver's
  /// ghosts (the seed's four steps; for devices without peer links, and for comparison).
  host_staging,
  /// Gather into a buffer on the sender, then NCCL send and receive (one group per exchange) on
  /// the communicator of the field's devices. InvalidArgument where two devices share one GPU
  /// (virtual GPUs), and for an exchange enqueued while a stream is being captured.
  nccl,
};

[[nodiscard]] const char* to_string(GraphTransport t) noexcept;

/// @brief A non-owning view of one device's part of a GraphField: its buffer (size() values per
/// component in the part's local order), the part, its device, position and stream. Cheap to
/// copy; data(), size(), components() and component_stride() work in device code.
template <class T>
class GraphBlock {
 public:
  GraphBlock(T* data, const GraphPart& part, int device, std::size_t pos, cudaStream_t stream, std::size_t components,
             std::size_t component_stride) noexcept
      : data_(data),
        size_(part.size()),
        components_(components),
        component_stride_(component_stride),
        part_(&part),
        device_(device),
        pos_(pos),
        stream_(stream) {}

  /// Component 0's values, local index 0 first.
  [[nodiscard]] CUSH_HOST_DEVICE T* data() const noexcept { return data_; }
  /// Component c's values: data() + c * component_stride().
  [[nodiscard]] CUSH_HOST_DEVICE T* data(std::size_t c) const noexcept { return data_ + c * component_stride_; }
  /// |G|: the part's values per component, owned and ghost.
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t size() const noexcept { return size_; }
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t components() const noexcept { return components_; }
  /// Elements from one component's first value to the next's (size() rounded up to 256 bytes).
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t component_stride() const noexcept { return component_stride_; }
  /// The part: its ranges (interior(), boundary(), sent(), ghosts()) and maps.
  [[nodiscard]] const GraphPart& part() const noexcept { return *part_; }
  /// CUDA ordinal of the device holding the part.
  [[nodiscard]] int device() const noexcept { return device_; }
  /// Position of that device in the field's device set (the part's number).
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  /// The field's stream on that device.
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  T* data_;
  std::size_t size_;
  std::size_t components_;
  std::size_t component_stride_;
  const GraphPart* part_;
  int device_;
  std::size_t pos_;
  cudaStream_t stream_;
};

/// @brief The type-independent part of a GraphField (see GraphField<T>).
class GraphFieldBase {
 public:
  GraphFieldBase(GraphFieldBase&&) noexcept;
  /// Waits for the work on the old field's streams (an exchange in flight too) and frees it.
  GraphFieldBase& operator=(GraphFieldBase&&) noexcept;
  GraphFieldBase(const GraphFieldBase&) = delete;
  GraphFieldBase& operator=(const GraphFieldBase&) = delete;
  /// Waits for the blocks' streams and the exchange, then frees the buffers.
  ~GraphFieldBase();

  /// A moved-from field may be destroyed, assigned to, asked components() (0), done() (true)
  /// and waited for; anything else throws InvalidArgument ("this").
  [[nodiscard]] const GraphDecomposition& decomposition() const;
  [[nodiscard]] const DeviceSet& devices() const;
  [[nodiscard]] std::size_t components() const noexcept;
  /// Elements from one component of part `pos` to the next (GraphBlock::component_stride()).
  [[nodiscard]] std::size_t component_stride(std::size_t pos) const;
  /// The stream of part `pos` (shared by every field made alike).
  [[nodiscard]] cudaStream_t stream(std::size_t pos) const;
  /// Every block's stream with its device, by position (what CapturedWork takes).
  [[nodiscard]] std::vector<StreamRef> streams() const;

  /// Starts filling every ghost of every component, after the work already enqueued on the
  /// blocks' streams. InvalidArgument if an exchange is already in flight.
  void exchange_start();
  /// Orders the blocks' streams after the exchange (does not block the host).
  void exchange_finish();
  /// exchange_start() then exchange_finish(), run on the blocks' streams themselves.
  void exchange();
  /// How messages move (default GraphTransport::automatic; a field made alike takes its model's).
  /// Changing it waits for the blocks' streams (like wait()); InvalidArgument while an exchange
  /// is in flight, or for `peer` between parts without peer access (the field keeps its transport).
  void set_transport(GraphTransport transport);
  [[nodiscard]] GraphTransport transport() const;
  /// Blocks until all work on the blocks' streams is done (finish an exchange first); throws
  /// CudaError if any of it failed, after every device of the field has finished its work.
  void wait() const;
  /// True if all work on the blocks' streams and the exchange's streams is done; does not block.
  [[nodiscard]] bool done() const;

 protected:
  GraphFieldBase(DeviceSet devices, GraphDecomposition dec, std::size_t element_size, std::size_t components);
  GraphFieldBase(DeviceSet devices, GraphDecomposition dec, std::span<const StreamRef> streams,
                 std::size_t element_size, std::size_t components);
  /// A field on `like`'s decomposition, devices and streams.
  GraphFieldBase(const GraphFieldBase& like, std::size_t element_size, std::size_t components);
  [[nodiscard]] void* block_data(std::size_t pos) const;
  void scatter_bytes(const void* host, std::size_t host_bytes);
  void gather_bytes(void* host, std::size_t host_bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// @brief A field of T on a graph decomposed over a device set (part k on devices[k]), with
/// `components` values per node (default 1), each component its own array (SoA).
///
/// Fields made alike (`GraphField<U>::alike(u)`) share the decomposition, the devices and the
/// blocks' streams, so a kernel that reads one and writes the other is ordered with both.
template <class T>
class GraphField : public GraphFieldBase {
 public:
  /// Throws InvalidArgument if the decomposition does not have one part per device or
  /// `components` is 0, and OutOfMemory if a part does not fit its device.
  GraphField(DeviceSet devices, GraphDecomposition dec, std::size_t components = 1)
      : GraphFieldBase(std::move(devices), std::move(dec), sizeof(T), components) {}
  /// A field whose blocks' work runs on the caller's streams (streams[pos]: a created stream of
  /// devices[pos]; cush never destroys them, they must outlive the field).
  GraphField(DeviceSet devices, GraphDecomposition dec, std::span<const StreamRef> streams, std::size_t components = 1)
      : GraphFieldBase(std::move(devices), std::move(dec), streams, sizeof(T), components) {}
  /// A new field (uninitialized) on the decomposition, devices and streams of `like`.
  [[nodiscard]] static GraphField alike(const GraphFieldBase& like) { return GraphField(like, Alike{}, like.components()); }
  [[nodiscard]] static GraphField alike(const GraphFieldBase& like, std::size_t components) {
    return GraphField(like, Alike{}, components);
  }

  /// The part at position `pos` of the device set.
  [[nodiscard]] GraphBlock<T> block(std::size_t pos) const {
    return GraphBlock<T>(static_cast<T*>(block_data(pos)), decomposition().part(pos), devices()[pos], pos, stream(pos),
                         components(), component_stride(pos));
  }
  /// Calls f(block(pos)) for every part, in order, with the part's device current.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t pos = 0; pos < devices().size(); ++pos) {
      const GraphBlock<T> b = block(pos);
      const DeviceGuard guard(b.device());
      f(b);
    }
  }

  /// exchange_start(), update(block, part.interior()) for every part, exchange_finish(), then
  /// update(block, part.boundary()); none for an empty range. `update` enqueues work on
  /// block.stream() over the owned rows of the range (local indices); while the exchange is in
  /// flight it must follow exchange_start()'s rules.
  template <class F>
  void exchange_overlapped(F&& update) {
    around_exchange(&GraphPart::interior, update, &GraphPart::boundary, update);
  }

  /// The split form of PETSc's MatMult (split_columns): exchange_start(), own(block,
  /// part.owned()) for every part, exchange_finish(), then ghosts(block, part.boundary()); none
  /// for an empty range. `own` enqueues the work that reads only owned values (every row's
  /// owned-column entries, interior rows whole) and must follow exchange_start()'s rules; `ghosts`
  /// adds the ghost-column entries of the boundary rows. More work runs beside the exchange than
  /// in exchange_overlapped(), at the cost of a second pass over the boundary rows (and sums in
  /// another order there).
  template <class Own, class Ghosts>
  void exchange_overlapped_split(Own&& own, Ghosts&& ghosts) {
    around_exchange(&GraphPart::owned, own, &GraphPart::boundary, ghosts);
  }

  /// The global array(s) `host` (N values in global order; with several components one such
  /// array per component, one after another) into every part's owned values. Enqueued on the
  /// blocks' streams: `host` is read when they reach it, so it must stay valid and unchanged
  /// until wait() returns. InvalidArgument unless host.size() == N * components().
  void scatter(std::span<const T> host) { scatter_bytes(host.data(), host.size_bytes()); }
  /// Every part's owned values into the global array(s) `host` (as scatter's), valid after wait().
  void gather(std::span<T> host) { gather_bytes(host.data(), host.size_bytes()); }

 private:
  using Rows = Range (GraphPart::*)() const noexcept;
  // exchange_start(), during(block, rows) over each part's `during_rows`, exchange_finish(), then
  // after(block, rows) over its `after_rows`; none for an empty range.
  template <class During, class After>
  void around_exchange(Rows during_rows, During& during, Rows after_rows, After& after) {
    exchange_start();
    for_each([&](const GraphBlock<T>& b) {
      if (const Range r = (b.part().*during_rows)(); r.count > 0) during(b, r);
    });
    exchange_finish();
    for_each([&](const GraphBlock<T>& b) {
      if (const Range r = (b.part().*after_rows)(); r.count > 0) after(b, r);
    });
  }
  struct Alike {};
  GraphField(const GraphFieldBase& like, Alike, std::size_t components) : GraphFieldBase(like, sizeof(T), components) {}
};

}  // namespace cush
