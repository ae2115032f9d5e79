#include "cush/stream.hpp"

#include <string>
#include <utility>

#include "core/stream_idle.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush {

namespace detail {
bool stream_idle(cudaStream_t stream, const char* what, int device) {
  const cudaError_t status = CUSH_CUDA_CALL(cudaStreamQuery(stream));
  if (status == cudaErrorNotReady) return false;
  if (status != cudaSuccess)  // an earlier asynchronous failure
    throw_cuda_error(status, "cudaStreamQuery(stream)", __FILE__, __LINE__,
                     std::string(what) + (device >= 0 ? " on device " + std::to_string(device) : ""));
  return true;
}

void drain_stream(cudaStream_t stream) noexcept {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) (void)cudaGetLastError();
  if (capture != cudaStreamCaptureStatusNone) return;
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
}
}  // namespace detail

Stream::Stream(int device, unsigned flags) : device_(device) {
  DeviceGuard guard(device);
  CUSH_CUDA_CHECK_AT(cudaStreamCreateWithFlags(&stream_, flags), "device " + std::to_string(device));
}

Stream::~Stream() { reset(); }

Stream::Stream(Stream&& other) noexcept
    : device_(std::exchange(other.device_, -1)), stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    reset();  // release what we hold before taking the other's handle
    device_ = std::exchange(other.device_, -1);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::reset() noexcept {
  if (stream_ == nullptr) return;
  // Destroying a stream with work in flight is legal (the work completes), but the owner of a
  // buffer used in it may free that buffer next; finish first.
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
  stream_ = nullptr;
  device_ = -1;
}

void Stream::synchronize() const {
  CUSH_CUDA_CHECK_AT(cudaStreamSynchronize(stream_), "stream on device " + std::to_string(device_));
}

void StreamRef::synchronize() const {
  CUSH_CUDA_CHECK_AT(cudaStreamSynchronize(stream_), "stream on device " + std::to_string(device_));
}

Event::Event(int device, bool timing) : device_(device) {
  DeviceGuard guard(device);
  CUSH_CUDA_CHECK_AT(
      cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
      "device " + std::to_string(device));
}

Event::~Event() { reset(); }

Event::Event(Event&& other) noexcept
    : device_(std::exchange(other.device_, -1)), event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::exchange(other.device_, -1);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::reset() noexcept {
  if (event_ == nullptr) return;
  CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
  event_ = nullptr;
  device_ = -1;
}

void Event::record(cudaStream_t stream) const {
  CUSH_CUDA_CHECK_AT(cudaEventRecord(event_, stream), "event on device " + std::to_string(device_));
}

void Event::wait_in(cudaStream_t stream) const {
  CUSH_CUDA_CHECK_AT(cudaStreamWaitEvent(stream, event_, 0),
                     "event on device " + std::to_string(device_));
}

void Event::synchronize() const {
  CUSH_CUDA_CHECK_AT(cudaEventSynchronize(event_), "event on device " + std::to_string(device_));
}

float Event::elapsed_since(const Event& start) const {
  float ms = 0.0F;
  CUSH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

}  // namespace cush
