#include "core/stream_set.hpp"

#include <exception>
#include <string>

#include "core/cuda_devices.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush::detail {

StreamSet::StreamSet(std::span<const int> devices) {
  owned_.reserve(devices.size());
  for (int id : devices) {
    owned_.emplace_back(id);
    handles_.push_back(owned_.back().get());
  }
}

StreamSet::StreamSet(std::span<const int> devices, std::span<const StreamRef> streams, const char* where) {
  if (streams.size() != devices.size())
    throw InvalidArgument(where, "streams",
                          std::to_string(streams.size()) + " streams for " + std::to_string(devices.size()) +
                              " devices: pass one per device, in the set's order");
  for (std::size_t pos = 0; pos < devices.size(); ++pos) {
    const StreamRef& s = streams[pos];
    const std::string which = "stream " + std::to_string(pos);
    // The default stream names a different stream for each current device; cush switches devices.
    if (s.get() == nullptr || s.get() == cudaStreamLegacy || s.get() == cudaStreamPerThread)
      throw InvalidArgument(where, "streams", which + " is a default stream: pass a created stream (cudaStreamCreate)");
    if (s.device() != devices[pos])
      throw InvalidArgument(where, "streams",
                            which + " is said to be on device " + std::to_string(s.device()) + ", position " +
                                std::to_string(pos) + " of the set is device " + std::to_string(devices[pos]));
  }
  // What the caller said is consistent; now ask CUDA whether it is true.
  for (std::size_t pos = 0; pos < devices.size(); ++pos) {
    // A stream knows its physical GPU only: with virtual GPUs, any logical device of it passes.
    const int actual = stream_physical_device(streams[pos].get());
    const int expected = physical_id(devices[pos]);
    if (actual != expected)
      throw InvalidArgument(where, "streams",
                            "stream " + std::to_string(pos) + " belongs to device " + std::to_string(actual) +
                                ", not to device " + std::to_string(devices[pos]) +
                                (expected == devices[pos] ? "" : " (GPU " + std::to_string(expected) + ")"));
    handles_.push_back(streams[pos].get());
  }
}

void synchronize_noexcept(std::span<const cudaStream_t> streams) noexcept {
  // cudaStreamSynchronize needs no current device.
  for (cudaStream_t s : streams) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(s));
}

void synchronize_all(std::span<const int> devices, std::span<const cudaStream_t> streams) {
  std::exception_ptr first;
  for (std::size_t k = 0; k < streams.size(); ++k) {
    try {
      StreamRef(devices[k], streams[k]).synchronize();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) {
    finish_devices(devices);
    std::rethrow_exception(first);
  }
}

}  // namespace cush::detail
