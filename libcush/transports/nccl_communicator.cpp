#include "transports/nccl_communicator.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "core/cuda_devices.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/transport.hpp"

namespace cush::detail {

void throw_nccl(ncclResult_t code, const char* call, const char* file, int line) {
  throw NcclError(static_cast<int>(code), std::string("cush: ") + call + " failed: " + ncclGetErrorString(code) +
                                              " at " + file + ":" + std::to_string(line));
}

namespace {

// The process's communicators, by ascending device list. On the heap and never destroyed by
// static destruction: an exit handler, registered after NCCL made its first communicator (so
// that it runs before NCCL's own exit-time teardown), destroys what is left.
struct Cache {
  std::mutex mutex;
  std::map<std::vector<int>, std::shared_ptr<Communicator>> kept;
  bool exit_handler = false;
};

Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

void release_at_exit() { (void)Communicator::release_all(); }

std::atomic<std::size_t> made{0};

}  // namespace

std::size_t communicators_made() noexcept { return made.load(); }

std::shared_ptr<Communicator> Communicator::of(std::span<const int> devices) {
  std::vector<int> key(devices.begin(), devices.end());
  std::sort(key.begin(), key.end());
  Cache& c = cache();
  // Made under the lock: two threads asking for one set at once make it once (ncclCommInitAll
  // takes a fraction of a second to seconds; docs/device_ops.md has the measured costs).
  std::lock_guard lock(c.mutex);
  std::shared_ptr<Communicator>& slot = c.kept[key];
  if (!slot) {
    try {
      slot = std::make_shared<Communicator>(key);
    } catch (...) {
      c.kept.erase(key);
      throw;
    }
    if (!c.exit_handler) c.exit_handler = std::atexit(release_at_exit) == 0;
  }
  return slot;
}

std::size_t Communicator::release_all() noexcept {
  std::map<std::vector<int>, std::shared_ptr<Communicator>> dropped;
  {
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    dropped.swap(c.kept);
  }
  return dropped.size();  // destroyed here, outside the lock, unless a plan still holds one
}

Communicator::Communicator(std::vector<int> devices) : devices_(std::move(devices)) {
  comms_.assign(devices_.size(), nullptr);
  // NCCL takes CUDA devices: the physical ones (a communicator never holds one GPU twice).
  const std::vector<int> physical = physical_ids(devices_);
  for (int d : devices_) last_.emplace_back(d);
  last_stream_.assign(devices_.size(), nullptr);
  // Last: nothing after it may throw, for a constructor that throws leaves comms_ to nobody
  // (found by fault injection: a failed event creation leaked every communicator).
  const ncclResult_t status = CUSH_FAULT_POINT("ncclCommInitAll")
                                  ? ncclInternalError
                                  : ncclCommInitAll(comms_.data(), static_cast<int>(physical.size()), physical.data());
  if (status != ncclSuccess) throw_nccl(status, "ncclCommInitAll", __FILE__, __LINE__);
  ++made;
}

Communicator::~Communicator() {
  if (aborted_) return;
  for (ncclComm* c : comms_) {
    if (c == nullptr) continue;
    const ncclResult_t status = ncclCommDestroy(c);
    if (status != ncclSuccess) std::fprintf(stderr, "cush: ncclCommDestroy failed: %s\n", ncclGetErrorString(status));
  }
}

std::size_t Communicator::rank_of(int device) const {
  const auto it = std::find(devices_.begin(), devices_.end(), device);
  if (it == devices_.end()) throw Error("cush: device " + std::to_string(device) + " is not in the communicator");
  return static_cast<std::size_t>(it - devices_.begin());
}

void Communicator::begin(std::size_t rank, cudaStream_t stream) {
  if (last_stream_.at(rank) == stream) return;
  DeviceGuard guard(devices_.at(rank));
  last_.at(rank).wait_in(stream);
}

void Communicator::end(std::size_t rank, cudaStream_t stream) {
  DeviceGuard guard(devices_.at(rank));
  last_.at(rank).record(stream);
  last_stream_.at(rank) = stream;
}

void Communicator::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  // Every rank's abort flag is set by its own call; NCCL frees the ranks' resources at the last
  // one, once every rank's kernels have returned.
  for (ncclComm* c : comms_) {
    if (c == nullptr) continue;
    const ncclResult_t status = ncclCommAbort(c);
    if (status != ncclSuccess) std::fprintf(stderr, "cush: ncclCommAbort failed: %s\n", ncclGetErrorString(status));
  }
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  const auto it = c.kept.find(devices_);
  if (it != c.kept.end() && it->second.get() == this) c.kept.erase(it);
}

}  // namespace cush::detail

namespace cush {

std::size_t release_communicators() noexcept { return detail::Communicator::release_all(); }

}  // namespace cush
