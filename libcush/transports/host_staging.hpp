#pragma once
// The host_staging transport: device -> pinned host slot -> device, pipelined in chunks, for
// devices that cannot reach each other or to keep the peer links free. Its slots belong to the
// destination plan (TransportResources::staging).

#include <cstddef>
#include <memory>
#include <vector>

namespace cush::detail {

/// Pinned bounce buffers (and, for reductions, device scratch) of the devices of one plan.
/// Created on first use; freed with the plan.
class StagingSlots {
 public:
  StagingSlots();
  ~StagingSlots();
  StagingSlots(const StagingSlots&) = delete;
  StagingSlots& operator=(const StagingSlots&) = delete;

  static constexpr std::size_t slots = 2;
  /// Bytes per slot (CUSH_STAGING_PEER_CHUNK_MIB).
  [[nodiscard]] std::size_t chunk() const noexcept { return chunk_; }

  struct Device;
  /// The slots of CUDA device `device` (created on first use). While a stream is being
  /// captured, new slots that belong to the graph.
  Device& of(int device, bool capturing);

 private:
  std::size_t chunk_;
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace cush::detail
