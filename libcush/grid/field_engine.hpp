#pragma once
// The halo exchange of a Field on the GPUs: owns what the exchange's schedule names (staging
// buffers, an exchange stream and an unpack stream per device, the events) and enqueues the
// schedule's instructions as they stand; every ordering decision is the schedule's
// (grid/exchange_schedule.hpp). Private to the library; FieldBase holds one.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cush/device_buffer.hpp"
#include "cush/device_set.hpp"
#include "cush/field.hpp"
#include "cush/grid.hpp"
#include "cush/stream.hpp"
#include "grid/exchange_program.hpp"
#include "grid/exchange_schedule.hpp"

namespace cush::detail {

class FieldEngine {
 public:
  /// The exchange of the components `which` (component_strides[k] elements apart in block k's
  /// buffer; none: one component).
  FieldEngine(const DeviceSet& devices, const Decomposition& grid, std::size_t element_size, HaloTransport transport,
              const HaloComponents& which = HaloComponents::all(1), std::vector<std::size_t> component_strides = {});
  FieldEngine(const FieldEngine&) = delete;
  FieldEngine& operator=(const FieldEngine&) = delete;
  /// The exchange's streams synchronize as they are destroyed, so no copy outlives its buffers.
  ~FieldEngine() = default;

  /// `data` and `blocks`: each block's buffer (its first ghost cell) and stream.
  void exchange_start(std::span<void* const> data, std::span<const cudaStream_t> blocks);
  void exchange_finish(std::span<const cudaStream_t> blocks);
  /// A whole exchange run on `blocks` themselves (no second stream to hop to and back).
  void exchange(std::span<void* const> data, std::span<const cudaStream_t> blocks);
  [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
  /// True if the engine's own streams are idle (does not block).
  [[nodiscard]] bool done() const;
  /// The slab count of every message sent in slabs (pipelined), in phase order.
  [[nodiscard]] const std::vector<std::size_t>& pipelined_slabs() const noexcept { return schedule_.pipelined_slabs; }

 private:
  void enqueue(std::span<const Instruction> list, std::span<void* const> data, std::span<const cudaStream_t> blocks) const;
  void run_step(const ExchangeStep& s, std::span<void* const> data, cudaStream_t stream, unsigned max_blocks) const;
  /// Box copies on one stream, none touching another's cells (grid/step_batches.hpp), as one launch.
  void run_batch(std::span<const Instruction> batch, std::span<void* const> data, cudaStream_t stream,
                 unsigned max_blocks) const;
  [[nodiscard]] cudaStream_t stream(const ScheduleStream& s, std::span<const cudaStream_t> blocks) const;
  [[nodiscard]] void* buffer(const BufferRef& b, std::span<void* const> data) const;
  void drain(std::span<const cudaStream_t> blocks) const noexcept;

  DeviceSet devices_;
  std::size_t element_size_ = 0;
  std::vector<std::size_t> component_bytes_;  // per block
  ExchangeProgram program_;
  ExchangeSchedule schedule_;
  std::vector<DeviceBuffer> send_, recv_;  // staging buffers by message
  std::vector<Event> events_;              // as the schedule numbers them
  // Destroyed before the buffers and events, synchronizing as they go.
  std::vector<Stream> exchange_streams_;   // per device
  std::vector<Stream> unpack_streams_;     // per device, where some face is pipelined
  std::vector<unsigned> pack_blocks_;      // per device, the pipelined packs' grid
  bool in_flight_ = false;
};

}  // namespace cush::detail
