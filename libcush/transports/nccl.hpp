#pragma once
// NCCL for the GPU<->GPU operations: one communicator per ordered list of devices, created on
// first use and shared by every plan that uses it; destroyed when the last such plan is.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "ops/op_streams.hpp"
#include "cush/reduce.hpp"
#include "cush/stream.hpp"
#include "host/transfer.hpp"

struct ncclComm;

namespace cush::detail {

class Communicator {
 public:
  /// The communicator of `devices` (rank i = devices[i]), created if no plan holds one.
  static std::shared_ptr<Communicator> of(std::span<const int> devices);
  explicit Communicator(std::span<const int> devices);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] const std::vector<int>& devices() const noexcept { return devices_; }
  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] ncclComm* comm(std::size_t rank) const { return comms_.at(rank); }
  /// The rank of CUDA device `device`.
  [[nodiscard]] std::size_t rank_of(int device) const;

  /// Operations on one communicator must run in the same order on every rank, even when they
  /// come from different plans' streams: each waits for the previous one on its rank (unless
  /// it runs on the same stream, which orders them already).
  void begin(std::size_t rank, cudaStream_t stream) const;
  void end(std::size_t rank, cudaStream_t stream) const;

 private:
  std::vector<int> devices_;
  std::vector<ncclComm*> comms_;
  std::vector<Event> last_;
  mutable std::vector<cudaStream_t> last_stream_;  // where last_ was recorded
};

/// Grouped send/receive for each copy of `list` (local ones as device copies); transfers that
/// wait for others go in later groups. `comm` must contain every device of `streams`.
void execute_nccl(const TransferList& list, std::size_t element_size, const Endpoint& src, const Endpoint& dst,
                  Communicator& comm, OpStreams& streams);

/// In-place NCCL collectives on the buffers `data` of the devices of `comm` (rank order), on
/// the working streams of `streams`. `root` is a rank.
void nccl_broadcast(Communicator& comm, OpStreams& streams, std::span<void* const> data, std::size_t bytes,
                    std::size_t root);
void nccl_reduce(Communicator& comm, OpStreams& streams, std::span<void* const> data, std::size_t count,
                 ElementType type, ReduceOp op, std::size_t root);
void nccl_all_reduce(Communicator& comm, OpStreams& streams, std::span<void* const> data, std::size_t count,
                     ElementType type, ReduceOp op);
/// All-gather of equal pieces: rank r's `send[r]` (bytes) lands at offset r * bytes of every
/// `recv[k]`.
void nccl_all_gather(Communicator& comm, OpStreams& streams, std::span<void* const> send,
                     std::span<void* const> recv, std::size_t bytes);

}  // namespace cush::detail
