#pragma once
// Executes a transfer list on the streams of a plan: how the bytes move (DMA from pinned host
// memory, staging for pageable memory, peer copies between devices).

#include <cuda_runtime_api.h>

#include <array>

#include <cstddef>
#include <span>
#include <vector>

#include "cush/stream.hpp"
#include "host/transfer.hpp"

namespace cush::detail {

/// Extra streams and a growing pool of events per device of a plan, for operations that need
/// more than the plan's one stream per device.
class Lanes {
 public:
  Lanes() = default;
  explicit Lanes(std::span<const int> device_ids);
  /// The auxiliary streams of the device at `pos`, k < aux_streams (created on first use).
  static constexpr std::size_t aux_streams = 2;
  cudaStream_t aux(std::size_t pos, std::size_t k = 0);
  /// The k-th event of the device at `pos` (created on first use). Within one operation each
  /// index is used once; across operations reuse is safe because waits bind at enqueue time.
  cudaEvent_t event(std::size_t pos, std::size_t k);

 private:
  std::vector<int> ids_;
  std::vector<std::array<Stream, aux_streams>> aux_;
  std::vector<std::vector<Event>> events_;
};

struct ExecutionContext {
  std::size_t element_size = 0;
  const void* host_src = nullptr;  // read by host->device transfers
  void* host_dst = nullptr;        // written by device->host transfers
  std::span<const int> device_ids;
  std::span<void* const> device_data;
  std::span<const cudaStream_t> streams;  // one per device: the plan's streams
  Lanes* lanes = nullptr;
};

/// Enqueues every transfer of `list`. On return the plan's stream of each device is ordered
/// after every transfer that reads or writes that device's buffer.
void execute(const TransferList& list, const ExecutionContext& context);

}  // namespace cush::detail
