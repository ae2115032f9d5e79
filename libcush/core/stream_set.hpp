#pragma once
// The streams of a Plan or a Field, one per device of its set: streams cush creates, or the
// caller's (StreamRef). Objects made alike share one set, so their work on a device is ordered.

#include <cuda_runtime_api.h>

#include <span>
#include <vector>

#include "cush/stream.hpp"

namespace cush::detail {

class StreamSet {
 public:
  /// A new stream on each of `devices`.
  explicit StreamSet(std::span<const int> devices);
  /// The caller's streams, one per device in order, each a created stream of that device (not
  /// the default stream); InvalidArgument from `where` otherwise. cush does not destroy them.
  StreamSet(std::span<const int> devices, std::span<const StreamRef> streams, const char* where);

  [[nodiscard]] std::span<const cudaStream_t> handles() const noexcept { return handles_; }

 private:
  std::vector<Stream> owned_;
  std::vector<cudaStream_t> handles_;
};

/// Waits for every stream in `streams`, reporting failures on stderr (for destructors).
void synchronize_noexcept(std::span<const cudaStream_t> streams) noexcept;

/// Waits for streams[k] (of logical device devices[k]) for every k, even after one failed; then,
/// if one did, finishes every device (finish_devices: the exception unwinds the caller's scopes,
/// which may free host buffers that other work on these devices still reads or writes; promise 2
/// of docs/reliability.md) and throws the first failure. The wait() of plans and fields.
void synchronize_all(std::span<const int> devices, std::span<const cudaStream_t> streams);

}  // namespace cush::detail
