#pragma once
// The halo exchange of a field over ranks (cush/rank_field.hpp) on this rank's GPUs: runs this
// rank's part of the exchange program (grid/rank_program.hpp). Steps between blocks of this rank
// are the single-process exchange's copies and box-copy kernels; a transfer between ranks is an
// NCCL send and receive between the two blocks' GPUs (NCCL rank = block = device of the group),
// a copy by the sender's copy engine into the receiver's memory over CUDA IPC (mpi/rank_ipc.hpp,
// between ranks of one host whose GPUs reach each other), or, on the MPI transport, a copy to
// pinned host memory, an MPI message and a copy to the GPU.
//
// Order, phase by phase (one phase per axis): every stream of this rank waits for the others
// (a block's neighbour of this rank may write into it), the phase's sends run on their blocks'
// streams, the transfers leave and arrive (NCCL: one group call, on the blocks' streams; MPI: the
// host waits for the streams, the messages and the copies), the streams wait for each other again
// where the phase links two blocks of this rank, then the unpacks run. A transfer between two
// ranks is posted by both in the order of the global program, which is how NCCL and MPI pair them.
// Private to cush::mpi.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "cush/device_buffer.hpp"
#include "cush/grid.hpp"
#include "cush/halo_components.hpp"
#include "cush/host_memory.hpp"
#include "cush/process_group.hpp"
#include "cush/stream.hpp"
#include "grid/rank_program.hpp"
#include "mpi/rank_ipc.hpp"

namespace cush::detail {

class RankNccl;

/// This rank's blocks of a field over ranks, as the exchange sees them.
struct LocalBlocks {
  std::vector<std::size_t> pos;      ///< their positions in the grid, ascending
  std::vector<int> devices;          ///< the device of each (a logical id of this process)
  std::vector<std::size_t> strides;  ///< elements from one component to the next, per block
};

class RankExchange {
 public:
  /// The exchange `program` (this rank's part, rank_exchange_program()) of `grid` with this
  /// rank's blocks `local`; allocates its staging buffers and streams (not collective). `nccl`:
  /// the group's NCCL (null: the MPI transport). `ipc`: the pairs of blocks whose transfers go
  /// over CUDA IPC (ipc_pairs(); empty: none), which connect() then sets up.
  RankExchange(const ProcessGroup& group, RankProgram program, const Decomposition& grid, const LocalBlocks& local,
               std::size_t element_size, RankNccl* nccl, std::span<const char> ipc = {});
  RankExchange(const RankExchange&) = delete;
  RankExchange& operator=(const RankExchange&) = delete;
  /// The exchange's streams synchronize as they are destroyed, so no copy outlives its buffers.
  ~RankExchange() = default;

  /// Collective where the exchange has IPC pairs (on every rank alike): maps the peers' buffers.
  /// `data`: each local block's first ghost cell; `bases`: the start of its allocation. The
  /// exchanges must then pass the same `data`.
  void connect(std::span<void* const> data, std::span<void* const> bases);

  /// `data`, `blocks`: each local block's buffer (its first ghost cell) and stream, in the order
  /// of LocalBlocks::pos. Collective (every rank calls the same sequence).
  void exchange_start(std::span<void* const> data, std::span<const cudaStream_t> blocks);
  void exchange_finish(std::span<const cudaStream_t> blocks);
  void exchange(std::span<void* const> data, std::span<const cudaStream_t> blocks);
  [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
  /// True if the exchange's own streams are idle (does not block).
  [[nodiscard]] bool done() const;

 private:
  void run_phases(std::size_t first, std::size_t last, std::span<void* const> data, std::span<const cudaStream_t> on);
  void run_steps(std::span<const ExchangeStep> steps, std::span<void* const> data, std::span<const cudaStream_t> on) const;
  void barrier(std::span<const cudaStream_t> on) const;
  void transfer(const RankPhase& phase, std::span<void* const> data, std::span<const cudaStream_t> on);
  void transfer_nccl(const RankPhase& phase, std::span<void* const> data, std::span<const cudaStream_t> on) const;
  void transfer_mpi(const RankPhase& phase, std::span<void* const> data, std::span<const cudaStream_t> on);
  [[nodiscard]] void* buffer(const BufferRef& b, std::span<void* const> data) const;
  [[nodiscard]] std::size_t index_of(std::size_t block) const { return local_of_.at(block); }
  void drain(std::span<const cudaStream_t> blocks) const noexcept;

  const ProcessGroup* group_;
  LocalBlocks local_;
  std::vector<std::size_t> local_of_;  // grid position -> index in local_ (only this rank's)
  std::size_t element_size_ = 0;
  RankProgram program_;
  std::size_t in_place_ = 0;  // leading phases exchanged in place (each block with itself)
  RankNccl* nccl_ = nullptr;
  std::vector<DeviceBuffer> send_, recv_;  // staging buffers by message (this rank's ends)
  // MPI transport: pinned host copies of each phase's transfers (by phase, then transfer).
  std::vector<std::vector<PinnedBuffer<std::byte>>> host_out_, host_in_;
  std::vector<Event> marks_;  // per local block
  // Transfers over CUDA IPC (null: none anywhere). Destroyed after the streams are idle and before
  // the receive buffers are freed.
  std::unique_ptr<RankIpc> ipc_;
  // Destroyed before the buffers and events, synchronizing as they go.
  std::vector<Stream> streams_;  // the exchange's own, per local block
  bool in_flight_ = false;
};

}  // namespace cush::detail
