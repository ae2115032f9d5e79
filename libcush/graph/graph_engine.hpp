#pragma once
// The halo exchange of a GraphField on the GPUs: owns what its schedule names (index lists,
// send buffers, pinned receive buffers, an exchange stream per device, the events) and enqueues
// the schedule's instructions as they stand; the program is graph/graph_exchange.hpp's, the
// ordering grid/exchange_schedule.hpp's. Private to the library; GraphFieldBase holds one.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cush/device_buffer.hpp"
#include "cush/device_set.hpp"
#include "cush/graph.hpp"
#include "cush/graph_field.hpp"
#include "cush/host_memory.hpp"
#include "cush/stream.hpp"
#include "grid/exchange_program.hpp"
#include "grid/exchange_schedule.hpp"
#include "graph/graph_nccl.hpp"

namespace cush::detail {

class GraphEngine {
 public:
  /// The exchange of `components` components (component c at `component_strides[k]` elements
  /// into block k's buffer) by `transport`. InvalidArgument for a forced transport the devices
  /// cannot run (peer without peer access between two parts that exchange).
  GraphEngine(const DeviceSet& devices, const GraphDecomposition& dec, std::size_t element_size, std::size_t components,
              std::span<const std::size_t> component_strides, GraphTransport transport);
  GraphEngine(const GraphEngine&) = delete;
  GraphEngine& operator=(const GraphEngine&) = delete;
  /// The exchange's streams synchronize as they are destroyed, so no copy outlives its buffers.
  ~GraphEngine() = default;

  /// `data` and `blocks`: each block's buffer and stream.
  void exchange_start(std::span<void* const> data, std::span<const cudaStream_t> blocks);
  void exchange_finish(std::span<const cudaStream_t> blocks);
  /// A whole exchange run on the blocks' streams themselves.
  void exchange(std::span<void* const> data, std::span<const cudaStream_t> blocks);
  /// True if the engine's own streams are idle (does not block).
  [[nodiscard]] bool done() const;

 private:
  void enqueue(std::span<const Instruction> list, std::span<void* const> data, std::span<const cudaStream_t> blocks) const;
  void run_step(const ExchangeStep& s, std::span<void* const> data, cudaStream_t stream) const;
  [[nodiscard]] void* buffer(const BufferRef& b, std::span<void* const> data) const;
  void drain(std::span<const cudaStream_t> blocks) const noexcept;
  /// The nccl transport's exchange with streams[k] block k's.
  void run_nccl(std::span<void* const> data, std::span<const cudaStream_t> streams) const;

  DeviceSet devices_;
  std::size_t element_size_ = 0;
  std::vector<std::size_t> component_bytes_;  // per block
  ExchangeProgram program_;
  ExchangeSchedule schedule_;
  std::vector<DeviceBuffer> lists_;                // index lists by message, on the sender
  std::vector<DeviceBuffer> send_;                 // staging buffers by message and component
  std::vector<PinnedBuffer<std::byte>> recv_;      // pinned, the host route's
  std::vector<Event> events_;                      // as the schedule numbers them
  std::unique_ptr<GraphNccl> nccl_;                // the nccl transport's (else none)
  std::vector<Event> ready_, end_;                 // the nccl transport's hops, per device
  // Destroyed before the buffers and events, synchronizing as they go.
  std::vector<Stream> exchange_streams_;  // per device
};

}  // namespace cush::detail
