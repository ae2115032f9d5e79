#pragma once
// The halo exchange of a Field on the GPUs: the staging buffers, streams and events of one
// field's exchange, and the enqueueing of its program. Private to the library; FieldBase holds one.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/field.hpp"
#include "cush/grid.hpp"

namespace cush::detail {

class FieldEngine {
 public:
  FieldEngine(const DeviceSet& devices, const Decomposition& grid, std::size_t element_size, HaloTransport transport);
  ~FieldEngine();
  FieldEngine(const FieldEngine&) = delete;
  FieldEngine& operator=(const FieldEngine&) = delete;

  void exchange_start(std::span<void* const> data, std::span<const cudaStream_t> streams);
  void exchange_finish(std::span<const cudaStream_t> streams);
  /// A whole exchange run on `streams` themselves (no second stream to hop to and back).
  void exchange(std::span<void* const> data, std::span<const cudaStream_t> streams);
  [[nodiscard]] bool in_flight() const noexcept;
  /// True if the engine's own streams are idle (does not block).
  [[nodiscard]] bool done() const;
  /// The slab count of every message sent in slabs (pipelined), in phase order.
  [[nodiscard]] std::vector<std::size_t> pipelined_slabs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cush::detail
