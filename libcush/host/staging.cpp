#include "host/staging.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "core/thread_pool.hpp"
#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {

struct CopyJob {
  void* dst;
  const void* src;
  std::size_t bytes;
  unsigned threads;
};

void CUDART_CB run_copy(void* data) {
  const std::unique_ptr<CopyJob> job(static_cast<CopyJob*>(data));
  // An exception must not leave a CUDA callback (std::terminate). The pool can only fail to
  // allocate; the copy itself cannot fail, so fall back to copying on this thread.
  try {
    parallel_memcpy(job->dst, job->src, job->bytes, job->threads);
  } catch (...) {
    std::memcpy(job->dst, job->src, job->bytes);
  }
}

void launch_copy(cudaStream_t lane, void* dst, const void* src, std::size_t bytes, unsigned threads) {
  auto job = std::make_unique<CopyJob>(CopyJob{dst, src, bytes, threads});
  CUSH_CUDA_CHECK(cudaLaunchHostFunc(lane, run_copy, job.get()));
  (void)job.release();  // run_copy owns it now
}

struct Engines {
  std::mutex mutex;
  std::vector<std::unique_ptr<StagingEngine>> engines;
};

}  // namespace

StagingEngine& StagingEngine::of(int device) {
  // The pool must outlive the engines: engines finish their lanes (whose host functions use the
  // pool) when destroyed at exit, and statics die in reverse order of construction.
  (void)ThreadPool::shared();
  static Engines all;
  std::lock_guard lock(all.mutex);
  if (device < 0) throw InvalidArgument("cush::detail::StagingEngine::of", "device", "negative id");
  if (all.engines.size() <= static_cast<std::size_t>(device)) all.engines.resize(static_cast<std::size_t>(device) + 1);
  auto& e = all.engines[static_cast<std::size_t>(device)];
  if (!e) e.reset(new StagingEngine(device));
  return *e;
}

StagingEngine::StagingEngine(int device)
    : device_(device),
      copy_lane_(device),
      dma_lane_(device),
      start_(device),
      done_(device) {}

StagingEngine::~StagingEngine() {
  // Finish both lanes before the slots they read and write are freed.
  copy_lane_ = Stream();
  dma_lane_ = Stream();
}

unsigned StagingEngine::copy_threads(const HostTransferOptions& options) const noexcept {
  if (options.copy_threads > 0) return static_cast<unsigned>(options.copy_threads);
  return std::min(16U, std::max(1U, std::thread::hardware_concurrency()));
}

void StagingEngine::prepare(const HostTransferOptions& options) {
  if (chunk_ == options.staging_chunk && slots_.size() == static_cast<std::size_t>(options.staging_slots)) return;
  // New sizes: let the old slots drain, then replace them.
  copy_lane_.synchronize();
  dma_lane_.synchronize();
  slots_.clear();
  chunk_ = 0;
  std::vector<Slot> slots(static_cast<std::size_t>(options.staging_slots));
  for (Slot& s : slots) {
    s.buffer.reset(pinned_allocate(options.staging_chunk));
    s.filled = Event(device_);
    s.free = Event(device_);
  }
  slots_ = std::move(slots);
  chunk_ = options.staging_chunk;
  next_slot_ = 0;
}

unsigned StagingEngine::begin(cudaStream_t stream) {
  const HostTransferOptions options = host_transfer_options();
  prepare(options);
  // Neither lane may start before the caller's earlier work: a kernel may still use the device
  // buffer, or an earlier gather may still be writing the host buffer.
  start_.record(stream);
  start_.wait_in(copy_lane_.get());
  start_.wait_in(dma_lane_.get());
  return copy_threads(options);
}

void StagingEngine::to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  std::lock_guard lock(mutex_);
  DeviceGuard guard(device_);
  const unsigned threads = begin(stream);
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  for (std::size_t off = 0; off < bytes; off += chunk_) {
    const std::size_t n = std::min(chunk_, bytes - off);
    Slot& slot = slots_[next_slot_++ % slots_.size()];
    slot.free.wait_in(copy_lane_.get());
    launch_copy(copy_lane_.get(), slot.buffer.get(), s + off, n, threads);
    slot.filled.record(copy_lane_.get());
    slot.filled.wait_in(dma_lane_.get());
    CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(d + off, slot.buffer.get(), n, cudaMemcpyHostToDevice, dma_lane_.get()),
                       "staged copy to device " + std::to_string(device_) + ", " + std::to_string(n) + " bytes");
    slot.free.record(dma_lane_.get());
  }
  done_.record(dma_lane_.get());
  done_.wait_in(stream);
}

void StagingEngine::to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  std::lock_guard lock(mutex_);
  DeviceGuard guard(device_);
  const unsigned threads = begin(stream);
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  for (std::size_t off = 0; off < bytes; off += chunk_) {
    const std::size_t n = std::min(chunk_, bytes - off);
    Slot& slot = slots_[next_slot_++ % slots_.size()];
    slot.free.wait_in(dma_lane_.get());
    CUSH_CUDA_CHECK_AT(cudaMemcpyAsync(slot.buffer.get(), s + off, n, cudaMemcpyDeviceToHost, dma_lane_.get()),
                       "staged copy from device " + std::to_string(device_) + ", " + std::to_string(n) + " bytes");
    slot.filled.record(dma_lane_.get());
    slot.filled.wait_in(copy_lane_.get());
    launch_copy(copy_lane_.get(), d + off, slot.buffer.get(), n, threads);
    slot.free.record(copy_lane_.get());
  }
  done_.record(copy_lane_.get());
  done_.wait_in(stream);
}

}  // namespace cush::detail
