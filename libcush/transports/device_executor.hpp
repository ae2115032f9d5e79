#pragma once
// Executes a GPU<->GPU transfer list (device_transfers.hpp) over copy engines: peer copies, or
// staging through pinned host memory.

#include <cstddef>
#include <memory>
#include <vector>

#include "ops/op_streams.hpp"
#include "cush/reduce.hpp"
#include "host/transfer.hpp"

namespace cush::detail {

/// Pinned bounce buffers (and, for reductions, device scratch) of the devices of one plan, for
/// the host_staging transport. Created on first use; freed with the plan.
class StagingSlots {
 public:
  StagingSlots();
  ~StagingSlots();
  StagingSlots(const StagingSlots&) = delete;
  StagingSlots& operator=(const StagingSlots&) = delete;

  static constexpr std::size_t slots = 2;
  /// Bytes per slot (CUSH_STAGING_PEER_CHUNK_MIB, default 16 MiB).
  [[nodiscard]] std::size_t chunk() const noexcept { return chunk_; }

  struct Device;
  /// The slots of CUDA device `device` (created on first use). While a stream is being
  /// captured, new slots that belong to the graph.
  Device& of(int device, bool capturing);

 private:
  std::size_t chunk_;
  std::vector<std::unique_ptr<Device>> devices_;
};

struct DeviceOpContext {
  std::size_t element_size = 0;
  Endpoint src;
  Endpoint dst;
  bool staged = false;                    // host_staging, else peer
  ElementType type = ElementType::uint8;  // of combine transfers
  ReduceOp op = ReduceOp::sum;
  StagingSlots* staging = nullptr;        // the destination plan's, when staged
};

/// True if `stream` is being captured into a graph.
bool capturing(cudaStream_t stream);

/// Enqueues `list` on `streams` (built from ctx.src and ctx.dst). Does not call finish().
void execute_device(const TransferList& list, const DeviceOpContext& ctx, OpStreams& streams);

}  // namespace cush::detail
