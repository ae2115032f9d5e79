#include "cush/host_memory.hpp"
#include "host/host_pieces.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "core/env.hpp"
#include "core/thread_pool.hpp"
#include "cush/error.hpp"

namespace cush {

// --- options -----------------------------------------------------------------------------------

namespace {

constexpr std::size_t page = 4096;

void validate(const HostTransferOptions& o, const char* where) {
  auto chunk_ok = [](std::size_t b) { return b > 0 && b % page == 0; };
  if (!chunk_ok(o.staging_chunk))
    throw InvalidArgument(where, "staging_chunk", "must be a positive multiple of 4 KiB, got " + std::to_string(o.staging_chunk));
  if (!chunk_ok(o.registration_chunk))
    throw InvalidArgument(where, "registration_chunk",
                          "must be a positive multiple of 4 KiB, got " + std::to_string(o.registration_chunk));
  if (o.staging_slots < 2)
    throw InvalidArgument(where, "staging_slots", "needs at least 2 to overlap copies, got " + std::to_string(o.staging_slots));
  if (o.copy_threads < 0)
    throw InvalidArgument(where, "copy_threads", "must be >= 0, got " + std::to_string(o.copy_threads));
}

struct OptionsStore {
  std::mutex mutex;
  HostTransferOptions options;
  OptionsStore() {
    // The defaults of HostTransferOptions are the table's (core/env.cpp).
    HostTransferOptions o;
    o.staging_chunk = detail::env::size("CUSH_STAGING_CHUNK_MIB");
    o.staging_slots = static_cast<int>(detail::env::size("CUSH_STAGING_SLOTS"));
    o.direct_to_device_below = detail::env::size("CUSH_DIRECT_TO_DEVICE_BELOW_KIB");
    o.direct_to_host_below = detail::env::size("CUSH_DIRECT_TO_HOST_BELOW_KIB");
    o.copy_threads = static_cast<int>(detail::env::size("CUSH_COPY_THREADS"));
    o.registration_chunk = detail::env::size("CUSH_REGISTRATION_CHUNK_MIB");
    validate(o, "cush (environment)");
    options = o;
  }
};

OptionsStore& options_store() {
  static OptionsStore store;
  return store;
}

}  // namespace

HostTransferOptions host_transfer_options() {
  OptionsStore& s = options_store();
  std::lock_guard lock(s.mutex);
  return s.options;
}

void set_host_transfer_options(const HostTransferOptions& options) {
  validate(options, "cush::set_host_transfer_options");
  OptionsStore& s = options_store();
  std::lock_guard lock(s.mutex);
  s.options = options;
}

// --- registrations made by cush ----------------------------------------------------------------

namespace {

// The pieces cush registered, by start address. A copy must not span two pieces: each one is a
// separate registration to the driver.
class Registry {
 public:
  void add(std::uintptr_t begin, std::uintptr_t end) {
    std::unique_lock lock(mutex_);
    pieces_[begin] = end;
  }
  void remove(std::uintptr_t begin) {
    std::unique_lock lock(mutex_);
    pieces_.erase(begin);
  }
  // Registered pieces overlapping [begin, end), clipped to it, in order.
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> overlapping(std::uintptr_t begin, std::uintptr_t end) const {
    std::shared_lock lock(mutex_);
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> out;
    if (pieces_.empty()) return out;
    auto it = pieces_.upper_bound(begin);
    if (it != pieces_.begin()) --it;
    for (; it != pieces_.end() && it->first < end; ++it) {
      const std::uintptr_t lo = std::max(it->first, begin);
      const std::uintptr_t hi = std::min(it->second, end);
      if (hi > lo) out.emplace_back(lo, hi);
    }
    return out;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::uintptr_t, std::uintptr_t> pieces_;
};

Registry& registry() {
  static Registry r;
  return r;
}

bool pinned_by_cuda(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

}  // namespace

HostRegistration::HostRegistration(const void* ptr, std::size_t bytes) : ptr_(ptr), bytes_(bytes) {
  constexpr const char* where = "cush::HostRegistration";
  if (ptr == nullptr) throw InvalidArgument(where, "ptr", "null pointer");
  if (bytes == 0) throw InvalidArgument(where, "bytes", "zero bytes");
  const std::size_t chunk = host_transfer_options().registration_chunk;
  // Only the whole pages inside the range: a page shared with a neighbouring allocation may be
  // registered by someone else, and CUDA refuses to register a page twice. The partial pages at
  // the ends (< 4 KiB each) move like pageable memory.
  const auto first = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uintptr_t begin = (first + page - 1) / page * page;
  const std::uintptr_t end = (first + bytes) / page * page;
  if (!registry().overlapping(begin, end).empty())
    throw InvalidArgument(where, "ptr",
                          "the range overlaps memory that a live HostRegistration (or Plan::pin_host) has "
                          "registered already");
  // Piece boundaries on multiples of the chunk size (itself a multiple of the page size).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  for (std::uintptr_t b = begin; b < end;) {
    const std::uintptr_t next = std::min<std::uintptr_t>(end, (b / chunk + 1) * chunk);
    ranges.emplace_back(b, next);
    b = next;
  }
  std::vector<cudaError_t> status(ranges.size(), cudaErrorNotReady);
  // The driver pins the pages of different pieces concurrently.
  detail::ThreadPool::shared().run(ranges.size(), [&](std::size_t i) {
    status[i] = CUSH_CUDA_CALL(cudaHostRegister(reinterpret_cast<void*>(ranges[i].first),
                                                ranges[i].second - ranges[i].first, cudaHostRegisterPortable));
  });
  const auto failed = std::find_if(status.begin(), status.end(), [](cudaError_t s) { return s != cudaSuccess; });
  if (failed != status.end()) {
    for (std::size_t i = 0; i < ranges.size(); ++i)
      if (status[i] == cudaSuccess) CUSH_CUDA_CHECK_NOEXCEPT(cudaHostUnregister(reinterpret_cast<void*>(ranges[i].first)));
    (void)cudaGetLastError();
    detail::throw_cuda_error(*failed, "cudaHostRegister(piece, bytes, cudaHostRegisterPortable)", __FILE__, __LINE__,
                             "registering " + std::to_string(bytes) + " bytes at " + std::to_string(first) +
                                 (*failed == cudaErrorHostMemoryAlreadyRegistered
                                      ? "; part of the range is registered already"
                                      : ""));
  }
  try {
    pieces_.reserve(ranges.size());
    for (const auto& [b, e] : ranges) {
      pieces_.push_back(reinterpret_cast<void*>(b));
      registry().add(b, e);
    }
  } catch (...) {  // bookkeeping ran out of memory: give the pages back before leaving
    for (const auto& [b, e] : ranges) {
      registry().remove(b);
      CUSH_CUDA_CHECK_NOEXCEPT(cudaHostUnregister(reinterpret_cast<void*>(b)));
    }
    pieces_.clear();
    throw;
  }
}

HostRegistration::~HostRegistration() { release(); }

HostRegistration::HostRegistration(HostRegistration&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      pieces_(std::exchange(other.pieces_, {})) {}

HostRegistration& HostRegistration::operator=(HostRegistration&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    pieces_ = std::exchange(other.pieces_, {});
  }
  return *this;
}

void HostRegistration::release() noexcept {
  if (pieces_.empty()) return;
  for (void* p : pieces_) registry().remove(reinterpret_cast<std::uintptr_t>(p));
  try {
    detail::ThreadPool::shared().run(pieces_.size(),
                                     [&](std::size_t i) { CUSH_CUDA_CHECK_NOEXCEPT(cudaHostUnregister(pieces_[i])); });
  } catch (...) {  // the tasks do not throw; keep release() noexcept regardless
  }
  pieces_.clear();
  ptr_ = nullptr;
  bytes_ = 0;
}

// --- pinned allocations and classification -----------------------------------------------------

namespace detail {

void* pinned_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  CUSH_CUDA_CHECK_AT(cudaHostAlloc(&p, bytes, cudaHostAllocPortable),
                     "allocating " + std::to_string(bytes) + " bytes of pinned host memory");
  return p;
}

void* pinned_allocate_array(std::size_t n, std::size_t element_size) {
  if (element_size != 0 && n > SIZE_MAX / element_size)
    throw InvalidArgument("cush::PinnedBuffer", "n",
                          std::to_string(n) + " elements of " + std::to_string(element_size) + " bytes overflow");
  return pinned_allocate(n * element_size);
}

void pinned_free(void* ptr) noexcept {
  if (ptr != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(ptr));
}

std::vector<HostPiece> classify_host(const void* ptr, std::size_t bytes) {
  std::vector<HostPiece> pieces;
  if (bytes == 0) return pieces;
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uintptr_t end = begin + bytes;
  auto add_gap = [&](std::uintptr_t lo, std::uintptr_t hi) {
    if (hi <= lo) return;
    // Memory pinned outside cush (cudaHostAlloc, the caller's own cudaHostRegister): checking
    // both ends is a heuristic. If it is wrong (a pageable hole inside), cudaMemcpyAsync still
    // copies correctly, only at pageable speed.
    const bool pinned = pinned_by_cuda(reinterpret_cast<const void*>(lo)) &&
                        pinned_by_cuda(reinterpret_cast<const void*>(hi - 1));
    if (!pieces.empty() && pieces.back().pinned == pinned && !pinned) {
      pieces.back().bytes += hi - lo;  // merge adjacent pageable pieces
      return;
    }
    pieces.push_back(HostPiece{lo - begin, hi - lo, pinned});
  };
  std::uintptr_t cursor = begin;
  for (const auto& [lo, hi] : registry().overlapping(begin, end)) {
    add_gap(cursor, lo);
    pieces.push_back(HostPiece{lo - begin, hi - lo, true});
    cursor = hi;
  }
  add_gap(cursor, end);
  return pieces;
}

}  // namespace detail

bool is_pinned(const void* ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0) return false;
  const std::vector<detail::HostPiece> pieces = detail::classify_host(ptr, bytes);
  return std::all_of(pieces.begin(), pieces.end(), [](const detail::HostPiece& p) { return p.pinned; });
}

}  // namespace cush
