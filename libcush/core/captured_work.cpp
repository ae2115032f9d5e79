#include "cush/captured_work.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush {

namespace {

constexpr const char* where = "cush::CapturedWork";

std::vector<StreamRef> distinct(std::span<const StreamRef> streams) {
  if (streams.empty()) throw InvalidArgument(where, "streams", "no streams to capture on");
  std::vector<StreamRef> out;
  for (std::size_t k = 0; k < streams.size(); ++k) {
    const cudaStream_t s = streams[k].get();
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
      throw InvalidArgument(where, "streams", "stream " + std::to_string(k) + " is a default stream, which cannot be captured");
    if (std::none_of(out.begin(), out.end(), [&](const StreamRef& o) { return o.get() == s; })) out.push_back(streams[k]);
  }
  return out;
}

// Ends a capture that went wrong (the graph, if any, is discarded); the error already in flight
// wins.
void abandon(const StreamRef& origin) noexcept {
  try {
    const DeviceGuard guard(origin.device());
    cudaGraph_t graph = nullptr;
    (void)cudaStreamEndCapture(origin.get(), &graph);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
  } catch (...) {
    // no device could be made current: nothing more to end
  }
}

}  // namespace

CapturedWork::CapturedWork(std::span<const StreamRef> streams, const std::function<void()>& enqueue)
    : streams_(distinct(streams)) {
  for (std::size_t k = 0; k < streams_.size(); ++k) {
    const DeviceGuard guard(streams_[k].device());
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CUSH_CUDA_CHECK(cudaStreamIsCapturing(streams_[k].get(), &status));
    if (status != cudaStreamCaptureStatusNone)
      throw InvalidArgument(where, "streams", "stream " + std::to_string(k) + " is already being captured");
    fork_.emplace_back(streams_[k].device());
    join_.emplace_back(streams_[k].device());
  }
  launched_ = Event(streams_[0].device());
  const StreamRef& origin = streams_[0];
  cudaGraph_t graph = nullptr;
  {
    const DeviceGuard guard(origin.device());
    CUSH_CUDA_CHECK(cudaStreamBeginCapture(origin.get(), cudaStreamCaptureModeRelaxed));
  }
  // From here until the capture has ended, any failure ends it (abandon) before it propagates:
  // a stream left capturing could not be used again.
  try {
    // Every other stream joins the capture by waiting for the origin, and the origin waits for
    // every other stream's end of the work: one graph, one entry, one exit.
    {
      const DeviceGuard guard(origin.device());
      fork_[0].record(origin.get());
    }
    for (std::size_t k = 1; k < streams_.size(); ++k) fork_[0].wait_in(streams_[k].get());
    enqueue();
    for (std::size_t k = 1; k < streams_.size(); ++k) {
      {
        const DeviceGuard guard(streams_[k].device());
        join_[k].record(streams_[k].get());
      }
      join_[k].wait_in(origin.get());
    }
    const DeviceGuard guard(origin.device());
    const cudaError_t ended = CUSH_CUDA_CALL(cudaStreamEndCapture(origin.get(), &graph));
    if (ended != cudaSuccess) {
      if (graph != nullptr) (void)cudaGraphDestroy(graph);
      detail::throw_cuda_error(ended, "cudaStreamEndCapture(origin.get(), &graph)", __FILE__, __LINE__,
                               "cush::CapturedWork: every stream the work used must be joined back to the given streams");
    }
  } catch (...) {
    abandon(origin);  // harmless where the capture has ended
    throw;
  }
  // The graph is needed only until it is instantiated; failing to free it is reported, not thrown
  // (the instantiated graph is whole).
  try {
    CUSH_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes_));
    const DeviceGuard guard(origin.device());
    CUSH_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
  } catch (...) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
    throw;
  }
  CUSH_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
}

CapturedWork::~CapturedWork() { reset(); }

CapturedWork::CapturedWork(CapturedWork&& other) noexcept
    : streams_(std::move(other.streams_)),
      fork_(std::move(other.fork_)),
      join_(std::move(other.join_)),
      launched_(std::move(other.launched_)),
      exec_(std::exchange(other.exec_, nullptr)),
      nodes_(std::exchange(other.nodes_, 0)) {}

CapturedWork& CapturedWork::operator=(CapturedWork&& other) noexcept {
  if (this != &other) {
    reset();
    streams_ = std::move(other.streams_);
    fork_ = std::move(other.fork_);
    join_ = std::move(other.join_);
    launched_ = std::move(other.launched_);
    exec_ = std::exchange(other.exec_, nullptr);
    nodes_ = std::exchange(other.nodes_, 0);
  }
  return *this;
}

void CapturedWork::reset() noexcept {
  if (exec_ == nullptr) return;
  CUSH_CUDA_CHECK_NOEXCEPT(cudaEventSynchronize(launched_.get()));  // needs no current device
  CUSH_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
  exec_ = nullptr;
}

void CapturedWork::launch() {
  if (exec_ == nullptr) throw InvalidArgument(where, "this", "a moved-from CapturedWork cannot be launched");
  const StreamRef& origin = streams_[0];
  // After what is already on every stream ...
  for (std::size_t k = 1; k < streams_.size(); ++k) {
    {
      const DeviceGuard guard(streams_[k].device());
      fork_[k].record(streams_[k].get());
    }
    fork_[k].wait_in(origin.get());
  }
  {
    const DeviceGuard guard(origin.device());
    CUSH_CUDA_CHECK(cudaGraphLaunch(exec_, origin.get()));
    launched_.record(origin.get());
  }
  // ... and before what comes next on any of them.
  for (std::size_t k = 1; k < streams_.size(); ++k) launched_.wait_in(streams_[k].get());
}

void CapturedWork::wait() const {
  if (exec_ == nullptr) return;
  launched_.synchronize();
}

}  // namespace cush
