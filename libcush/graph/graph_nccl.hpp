#pragma once
// The nccl transport of a GraphField's exchange: the program of the staged route (gathers into
// send buffers on the senders, then one copy per message and component), with each copy replaced
// by an NCCL send on the sender's stream and a receive on the receiver's, all in one group on the
// communicator of the field's devices (transports/nccl_communicator.hpp). NCCL orders the two ends
// of every message itself, so no cross-device events are needed: each device's stream runs its
// gathers, then the group. Refused (InvalidArgument) where two devices share a GPU (virtual GPUs)
// and under stream capture, as the nccl transport of the device operations is.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "cush/device_set.hpp"
#include "grid/exchange_program.hpp"

namespace cush::detail {

class Communicator;

class GraphNccl {
 public:
  /// Throws InvalidArgument, naming the devices, if two of `devices` share one GPU; makes or
  /// reuses the communicator of the devices (ncclCommInitAll).
  explicit GraphNccl(const DeviceSet& devices);
  ~GraphNccl();
  GraphNccl(const GraphNccl&) = delete;
  GraphNccl& operator=(const GraphNccl&) = delete;

  /// InvalidArgument if one of `streams` is being captured (call before enqueueing anything).
  static void refuse_capture(std::span<const cudaStream_t> streams);

  /// Runs `phase` with streams[k] the stream of block k: its gathers through `gather`, then its
  /// copies as sends and receives of one group. `address(side)` is a step side's first element.
  /// NcclError if NCCL fails (the communicator is aborted where ranks may be left waiting, and
  /// the next exchange makes a fresh one).
  void run(const ExchangePhase& phase, std::span<const cudaStream_t> streams, std::size_t element_size,
           const std::function<void(const ExchangeStep&, cudaStream_t)>& gather,
           const std::function<void*(const StepSide&)>& address);

 private:
  const DeviceSet* devices_;
  std::shared_ptr<Communicator> comm_;
};

}  // namespace cush::detail
