#pragma once
/// @file rank_field.hpp
/// @brief A field over the GPUs of every rank of a process group: a grid decomposed into one
/// block per device of the group (block k on the group's k-th device, ProcessGroup::devices()),
/// each process holding its own devices' blocks, and the halo exchange between them: over CUDA IPC
/// or NCCL between the ranks' GPUs, with the single-process exchange's copies within a rank.
///
/// Needs MPI, like process_group.hpp (link cush::mpi). Reads like a Field, with the blocks of
/// this rank only:
///
///     cush::ProcessGroup group(MPI_COMM_WORLD, {local_gpu});
///     cush::RankField<double> u(group, cush::Extent3{nx, ny, nz}, 3);   // one block per GPU of every rank
///     auto next = cush::RankField<double>::alike(u);
///     u.scatter(rank == 0 ? host.data() : nullptr, 0);
///     for (int step = 0; step < steps; ++step) {
///       u.exchange();                                                 // collective
///       next.for_each([&](cush::Block<double> b) { stencil(u.block(b.pos()), b); });
///       std::swap(u, next);
///     }
///     u.gather(rank == 0 ? host.data() : nullptr, 0);
///     u.wait();
///
/// What is collective: construction (and alike()), scatter(), gather() and every exchange: every
/// rank of the group makes the same calls in the same order, as for MPI collectives. Ranks that
/// pass another grid, component count or root throw InvalidArgument together. What blocks the
/// host: scatter() and gather() until their messages have arrived; on the MPI transport, each
/// exchange until its messages have arrived. Over NCCL an exchange is enqueued on the streams and
/// returns, as a Field's does; over CUDA IPC too, once the peer ranks have reached the same phase
/// (each waits for the other's zero-byte message, not for a GPU). A rank that leaves the order of collective calls does not leave
/// the others waiting for ever in cush's MPI calls (process_group.hpp); an NCCL transfer whose
/// peer never comes waits as NCCL does (docs/guide.md, "Failure across ranks").

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

#include "cush/block.hpp"
#include "cush/device_guard.hpp"
#include "cush/grid.hpp"
#include "cush/halo_components.hpp"
#include "cush/process_group.hpp"

namespace cush {

/// @brief How a field over ranks moves halos between ranks (within a rank: always the
/// single-process exchange's copies).
enum class RankTransport {
  /// ipc between every two ranks' GPUs that allow it; the other pairs over nccl where every device
  /// of the group is a GPU of its own, else mpi. transport() says ipc only where every pair of
  /// GPUs of different ranks uses it, else which of the others the rest use.
  automatic,
  /// NCCL send and receive between the two blocks' GPUs, on the streams. InvalidArgument on
  /// every rank where two devices of the group are one GPU (ranks sharing a GPU).
  nccl,
  /// Through pinned host memory and MPI messages on the group's communicator: the exchange
  /// waits for its messages on the host. For ranks that share GPUs, or an MPI without NCCL.
  mpi,
  /// The sender's copy engine writes into the receiver's buffer over CUDA IPC, as a copy between
  /// two GPUs of one process does: for ranks on one host whose GPUs reach each other (one GPU, or
  /// peer access both ways). The field maps the peers' buffers when it is made; each phase of an
  /// exchange waits on the host for the peer ranks to have enqueued their side (zero-byte MPI
  /// messages), never for a GPU. Fields using it are destroyed in the same order on every rank
  /// (a rank frees its buffers once the peers have unmapped them). InvalidArgument on every rank
  /// where two GPUs of different ranks do not allow it.
  ipc,
};

/// @brief The type-independent part of a RankField.
class RankFieldBase {
 public:
  RankFieldBase(RankFieldBase&&) noexcept;
  /// Waits for the work of the old field (an exchange in flight too), then takes `other`'s.
  RankFieldBase& operator=(RankFieldBase&&) noexcept;
  RankFieldBase(const RankFieldBase&) = delete;
  RankFieldBase& operator=(const RankFieldBase&) = delete;
  /// Waits for the blocks' streams and the exchange, then frees the buffers. Not collective, but
  /// over CUDA IPC a rank frees its buffers only once the ranks that mapped them have destroyed
  /// their field too: destroy such fields in the same order on every rank.
  ~RankFieldBase();
  // A moved-from field may be destroyed, assigned to, asked components() (0), done() (true) and
  // waited for; anything else throws InvalidArgument ("this").

  [[nodiscard]] const ProcessGroup& group() const;
  [[nodiscard]] const Decomposition& grid() const;
  [[nodiscard]] std::size_t components() const noexcept;
  /// The positions of the blocks this rank holds, ascending (the group's devices of this rank;
  /// none on a rank without devices).
  [[nodiscard]] std::span<const std::size_t> local_blocks() const;
  /// Whether block `pos` is this rank's.
  [[nodiscard]] bool holds(std::size_t pos) const;
  /// The stream and component stride of this rank's block `pos` (InvalidArgument for another
  /// rank's block).
  [[nodiscard]] cudaStream_t stream(std::size_t pos) const;
  [[nodiscard]] std::size_t component_stride(std::size_t pos) const;
  /// The transport the field's exchanges use between ranks (automatic resolved; with one rank,
  /// mpi, which then sends nothing).
  [[nodiscard]] RankTransport transport() const;

  /// Collective. As Field's: the ghost cells of every block of every rank filled from the cells
  /// they stand for, after the work already on the blocks' streams. exchange_start() enqueues the
  /// copies along axes exchanged in place on the blocks' streams and the rest on a second stream
  /// per device; exchange_finish() orders the blocks' streams after it; between them, kernels
  /// follow the rules of Field::exchange_start. exchange() runs it all on the blocks' streams.
  void exchange_start();
  void exchange_finish();
  void exchange();
  /// The same for the components `which` names (cush/halo_components.hpp; the first exchange of
  /// each distinct `which` builds its program, collectively).
  void exchange_start(const HaloComponents& which);
  void exchange(const HaloComponents& which);

  /// Blocks until this rank's work on the blocks' streams is done (not collective).
  void wait() const;
  /// True if this rank's work, an exchange in flight included, is done; does not block.
  [[nodiscard]] bool done() const;

 protected:
  RankFieldBase(const ProcessGroup& group, Decomposition grid, std::size_t element_size, std::size_t components,
                RankTransport transport);
  RankFieldBase(const RankFieldBase& like, std::size_t element_size, std::size_t components);
  [[nodiscard]] void* block_data(std::size_t pos) const;
  [[nodiscard]] int block_device(std::size_t pos) const;
  void scatter_bytes(const void* host, int root);
  void gather_bytes(void* host, int root);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// @brief A field of T over the GPUs of every rank (see the file comment).
template <class T>
class RankField : public RankFieldBase {
  static_assert(std::is_trivially_copyable_v<T>, "a field moves its cells as bytes");

 public:
  /// Collective. The decomposition must have one block per device of the group; InvalidArgument
  /// on every rank otherwise, or where the ranks pass different grids or component counts. The
  /// field keeps a reference to `group`, which must outlive it and not be moved from.
  RankField(const ProcessGroup& group, Decomposition grid, std::size_t components = 1,
            RankTransport transport = RankTransport::automatic)
      : RankFieldBase(group, std::move(grid), sizeof(T), components, transport) {}
  /// A grid of `extent` cells with `dims` axes, decomposed over the group's devices.
  RankField(const ProcessGroup& group, const Extent3& extent, std::size_t dims, const GridOptions& options = {},
            std::size_t components = 1, RankTransport transport = RankTransport::automatic)
      : RankField(group, Decomposition(extent, dims, group.devices().size(), options), components, transport) {}
  /// Collective: a new field (uninitialized) on the grid, group, streams and transport of `like`.
  [[nodiscard]] static RankField alike(const RankFieldBase& like) { return RankField(like, Alike{}, like.components()); }
  [[nodiscard]] static RankField alike(const RankFieldBase& like, std::size_t components) {
    return RankField(like, Alike{}, components);
  }

  /// This rank's block `pos` (a position of the grid; InvalidArgument for another rank's).
  [[nodiscard]] Block<T> block(std::size_t pos) const {
    return Block<T>(static_cast<T*>(block_data(pos)), grid().allocated(pos),
                    Extent3{grid().halo(0), grid().halo(1), grid().halo(2)}, grid().owned(pos), block_device(pos), pos,
                    stream(pos), components(), component_stride(pos));
  }
  /// Calls f(block(pos)) for each block of this rank, in order, with the block's device current.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t pos : local_blocks()) {
      const Block<T> b = block(pos);
      const DeviceGuard guard(b.device());
      f(b);
    }
  }

  /// Collective: as Field::exchange_overlapped, over this rank's blocks: exchange_start(which),
  /// update(block, box) for each block's interior at `radius`, exchange_finish(), then
  /// update(block, box) for each box of the block's boundary.
  template <class F>
  void exchange_overlapped(const HaloComponents& which, std::size_t radius, F&& update) {
    overlapped([&] { exchange_start(which); }, radius, update);
  }
  /// The same, every component exchanged.
  template <class F>
  void exchange_overlapped(std::size_t radius, F&& update) {
    overlapped([&] { exchange_start(); }, radius, update);
  }

  /// Collective: the root's global array `host` (as Field::scatter's; ignored elsewhere, may be
  /// null) into every rank's blocks. Returns when the messages have arrived; the copies to the
  /// GPUs run on the blocks' streams (wait()). The root's array must stay until then.
  void scatter(const T* host, int root) { scatter_bytes(host, root); }
  /// Collective: every rank's blocks into the root's global array (ignored elsewhere), valid on
  /// the root after its wait(). Returns when the other ranks' messages have arrived.
  void gather(T* host, int root) { gather_bytes(host, root); }

 private:
  struct Alike {};
  RankField(const RankFieldBase& like, Alike, std::size_t components) : RankFieldBase(like, sizeof(T), components) {}

  template <class Start, class F>
  void overlapped(Start start, std::size_t radius, F& update) {
    start();
    for_each([&](const Block<T>& b) {
      if (const Box in = grid().interior(b.pos(), radius); !in.empty()) update(b, in);
    });
    exchange_finish();
    for_each([&](const Block<T>& b) {
      for (const Box& box : grid().boundary(b.pos(), radius)) update(b, box);
    });
  }
};

}  // namespace cush
