#pragma once
/// @file host_memory.hpp
/// @brief Host buffers that move fast: pinned allocations, registrations of existing memory, and
/// the tuning of moves from ordinary (pageable) memory.
///
/// A copy between a GPU and page-locked ("pinned") host memory runs at the speed of the host
/// link; from pageable memory CUDA bounces it through a small driver buffer at a fraction of
/// that. cush moves pageable data through its own pipelined, multi-threaded staging buffers
/// (see docs/host_memory.md). For a buffer that is moved again and again, register it once
/// (HostRegistration, Plan::pin_host): then every move is a direct copy.
///
/// cush never keeps a registration the caller did not ask for: a registration that outlives the
/// memory it covers would let later copies read or write freed pages.

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace cush {

/// @brief Tuning of moves between host memory and devices. Defaults come from measurements on
/// the 2 x H200 host (docs/host_memory.md); environment variables CUSH_STAGING_CHUNK_MIB,
/// CUSH_STAGING_SLOTS, CUSH_DIRECT_TO_DEVICE_BELOW_KIB, CUSH_DIRECT_TO_HOST_BELOW_KIB,
/// CUSH_COPY_THREADS and CUSH_REGISTRATION_CHUNK_MIB override them at start-up.
struct HostTransferOptions {
  std::size_t staging_chunk = std::size_t{32} << 20;        ///< bytes per staging pipeline step
  int staging_slots = 2;                                    ///< pinned staging buffers per device
  /// Pageable pieces smaller than these go straight to cudaMemcpyAsync when the stream has no
  /// work pending (then it cannot block the caller on earlier work): below them the driver's own
  /// bounce buffer beats a pipeline that has too few chunks to overlap.
  std::size_t direct_to_device_below = std::size_t{4} << 20;
  std::size_t direct_to_host_below = std::size_t{256} << 10;
  int copy_threads = 0;                                     ///< threads per staging copy; 0: min(16, cores)
  std::size_t registration_chunk = std::size_t{1} << 30;    ///< HostRegistration pins in pieces of this size, in parallel
};

/// The options in force.
[[nodiscard]] HostTransferOptions host_transfer_options();
/// Replaces the options (validated: chunk sizes > 0 and multiples of 4 KiB, slots >= 2, threads >= 0).
/// A new chunk size or slot count reallocates each device's staging buffers at its next staged
/// move; freeing pinned memory synchronizes the device, so that one move waits for the work
/// already running there. Set options once, at start-up, where that matters.
void set_host_transfer_options(const HostTransferOptions& options);

/// True if every byte of [ptr, ptr + bytes) is page-locked (cudaHostAlloc, cudaHostRegister,
/// PinnedBuffer or HostRegistration). False without a GPU.
[[nodiscard]] bool is_pinned(const void* ptr, std::size_t bytes);

/// @brief Page-locks an existing host range for its lifetime (RAII over cudaHostRegister).
///
/// While it lives, every cush copy from or to the range is a direct DMA. Registering costs about
/// as much as one pageable copy of the range (cush pins large ranges in parallel pieces), so it
/// pays off from the second move on. The memory must stay allocated until the registration is
/// destroyed, and the registration must outlive the moves that use it: destroy it after
/// plan.wait() (Plan::pin_host ties it to the plan, which waits before releasing it).
///
/// Only the whole pages inside the range are pinned: a page at either end may be shared with
/// another allocation, and CUDA refuses to register a page twice. The partial end pages (less
/// than 4 KiB each) move as pageable memory, so is_pinned() reports them as not pinned.
class HostRegistration {
 public:
  HostRegistration() noexcept = default;
  HostRegistration(const void* ptr, std::size_t bytes);
  template <class T>
  explicit HostRegistration(std::span<T> range) : HostRegistration(range.data(), range.size_bytes()) {}
  ~HostRegistration();
  HostRegistration(HostRegistration&& other) noexcept;
  HostRegistration& operator=(HostRegistration&& other) noexcept;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

  [[nodiscard]] const void* data() const noexcept { return ptr_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  void release() noexcept;
  const void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  std::vector<void*> pieces_;  // bases passed to cudaHostRegister
};

namespace detail {
void* pinned_allocate(std::size_t bytes);
/// Pinned memory for n elements of `element_size` bytes; rejects sizes that overflow.
void* pinned_allocate_array(std::size_t n, std::size_t element_size);
void pinned_free(void* ptr) noexcept;
}  // namespace detail

/// @brief A page-locked host array of n elements of T (cudaHostAlloc, portable to all devices).
/// Elements are not initialized.
template <class T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "PinnedBuffer holds trivially copyable types");

 public:
  PinnedBuffer() noexcept = default;
  explicit PinnedBuffer(std::size_t n)
      : data_(static_cast<T*>(detail::pinned_allocate_array(n, sizeof(T)))), size_(n) {}
  ~PinnedBuffer() { detail::pinned_free(data_); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      detail::pinned_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<T> span() noexcept { return {data_, size_}; }
  [[nodiscard]] std::span<const T> span() const noexcept { return {data_, size_}; }
  operator std::span<T>() noexcept { return span(); }              // NOLINT: a buffer is a range
  operator std::span<const T>() const noexcept { return span(); }  // NOLINT
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cush
