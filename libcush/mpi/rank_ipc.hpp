#pragma once
// Halo transfers between processes of one host over CUDA IPC (RankTransport::ipc): the sender's
// copy engine writes the cells straight into the receiver's buffer, as a peer copy within one
// process does, instead of an NCCL send and receive.
//
// Set-up (connect, collective): each receiver exports the allocation a transfer lands in
// (cudaIpcGetMemHandle) and an interprocess event per receiving block and phase ("free"); each
// sender exports one per sending block and phase ("done"); each side maps the other's.
//
// A phase, on every rank: the receiving blocks record "free" on their streams (everything before
// on them, reads of the buffer by the previous exchange included, is done with it) and say so to
// their senders by a zero-byte MPI message; each sender waits for those messages, makes its stream
// wait for the receiver's "free" event, copies, records "done" and says so; each receiver waits for
// those messages and makes its stream wait for the senders' "done" events. The host waits only for
// the peer process to have enqueued its side, never for a GPU. An event is recorded again only
// after every process that waits for it has enqueued its wait: the messages order that.
//
// Teardown: the importing side closes what it mapped and tells the exporting side, which waits
// for that (as every wait of cush::mpi, at most CUSH_MPI_WAIT_LIMIT_S) before its buffers are
// freed: fields that use IPC are destroyed in the same order on every rank. Private to cush::mpi.

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "cush/process_group.hpp"
#include "grid/rank_program.hpp"

namespace cush::detail {

/// Collective: which devices of `group` can write into each other's memory over CUDA IPC: both on
/// one host and of different ranks, and one GPU or peer access both ways (as each device's own
/// process sees it). An n x n matrix over the group's devices (block k = device k), row-major,
/// symmetric; 0 on the diagonal and between two devices of one rank.
[[nodiscard]] std::vector<char> ipc_pairs(const ProcessGroup& group);

/// Where a transfer's cells are on this rank: their address, and the start of the cudaMalloc
/// allocation they are in (what CUDA IPC exports).
struct IpcPlace {
  void* at = nullptr;
  void* base = nullptr;
};

class RankIpc {
 public:
  /// Moves out of `program` the transfers between blocks that `pairs` (ipc_pairs) links; the rest
  /// stay for NCCL or MPI. `local_of`: grid position -> index of this rank's block (its device in
  /// `devices`, its stream in each transfer's `on`). Not collective; maps nothing yet.
  RankIpc(RankProgram& program, std::span<const char> pairs, std::span<const std::size_t> local_of,
          std::span<const int> devices, std::size_t element_size);
  RankIpc(const RankIpc&) = delete;
  RankIpc& operator=(const RankIpc&) = delete;
  /// The streams that used the mappings must be idle. Closes them and waits for the peers to have
  /// closed theirs of this rank's buffers (see the file comment).
  ~RankIpc();

  /// Collective: exports this rank's ends (`place` gives each incoming transfer's cells) and maps
  /// the peers'. A failure on any rank throws on every rank.
  void connect(const ProcessGroup& group, const std::function<IpcPlace(const RankTransfer&)>& place);

  /// Phase `phase`'s IPC transfers, on the streams `on` (by local block); `source` gives each
  /// outgoing transfer's cells. Collective between the ranks of one transfer.
  void transfer(std::size_t phase, const std::function<const void*(const RankTransfer&)>& source,
                std::span<const cudaStream_t> on);

 private:
  struct Out {
    RankTransfer t;
    std::size_t local = 0;
    void* remote = nullptr;            // where the cells go, mapped from the receiver
    cudaEvent_t free = nullptr;        // the receiver's, opened here
  };
  struct In {
    RankTransfer t;
    std::size_t local = 0;
    cudaEvent_t done = nullptr;        // the sender's, opened here
  };
  struct Phase {
    std::vector<Out> out;
    std::vector<In> in;
    std::vector<int> to, from;                  // the peer ranks, each once
    std::vector<std::size_t> senders, receivers;  // this rank's blocks, each once
    std::vector<cudaEvent_t> free, done;        // this rank's, by local block (null: unused)
  };

  void close() noexcept;
  void record(std::span<const std::size_t> blocks, std::span<const cudaEvent_t> events,
              std::span<const cudaStream_t> on) const;
  void notes(std::span<const int> to, std::span<const int> from, int tag, const char* where) const;

  std::vector<Phase> phases_;
  std::vector<int> devices_;
  std::size_t element_size_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate of the group's, for the notes
  bool connected_ = false;         // the ends were swapped: the teardown's notes are due
  std::vector<int> mapped_from_;   // ranks whose memory this rank maps (it sends to them)
  std::vector<int> mapped_by_;     // ranks that map this rank's memory (they send to it)
  std::vector<void*> mapped_;      // peers' allocations opened here
  std::vector<cudaEvent_t> opened_;  // peers' events opened here
};

}  // namespace cush::detail
