#pragma once
// Executes an operation's transfer list with copy engines and the combine kernel: what the
// `peer` and `host_staging` transports share. Where each transfer runs (which device's stream
// issues it), how a device's large local copies get a stream beside its link traffic, and which
// transfers wait for others are decided here; a transfer between two devices is either a peer
// copy (or a combine that reads the peer) or, when a staged copy is given, moved by it.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

#include "host/transfer.hpp"
#include "ops/op_streams.hpp"

namespace cush::detail {

class Operation;  // backend.hpp

/// A transfer with its participants (indices in OpStreams) and byte addresses.
struct ResolvedTransfer {
  std::size_t from = 0;
  std::size_t to = 0;
  const std::byte* src = nullptr;
  std::byte* dst = nullptr;
  std::size_t bytes = 0;
};

/// Moves one transfer between two devices: starts on `from_stream` (the source's working
/// stream, which has waited for what the transfer waits for) and ends on `to_stream` (the
/// destination's), where later work is ordered after it.
using StagedCopy = std::function<void(const Transfer& t, const ResolvedTransfer& r, OpStreams& streams,
                                      cudaStream_t from_stream, cudaStream_t to_stream)>;

/// Enqueues op.list() on `streams` (does not finish them). Without `staged`, transfers between
/// devices are peer copies pushed by the source's stream (combines: kernels on the destination
/// that read the source); with it, each is handed to `staged`.
void execute_copies(const Operation& op, OpStreams& streams, const StagedCopy* staged);

/// "copying 4096 bytes from device 0 to device 1", for error messages.
[[nodiscard]] std::string describe_transfer(const Transfer& t, std::size_t element_size, int from, int to);

}  // namespace cush::detail
