#pragma once
// The only calls into CUDA (and NCCL) that name a device. Each takes logical devices (what
// cush's API speaks of) and asks the process's DeviceMap for the physical one, so no other file
// can pass a logical id to CUDA by mistake; tests/core/test_device_map.cpp checks that no other
// library source makes such a call. Calls that use the current device (cudaMalloc,
// cudaStreamCreate, kernel launches, ...) run under a DeviceGuard, which sets it through here.

#include <cuda_runtime_api.h>

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cush::detail {

/// Physical CUDA devices on the host; 0 (never an exception) without a GPU or driver.
[[nodiscard]] int physical_device_count() noexcept;
/// Why physical_device_count() is 0, in the CUDA runtime's words; empty if there are GPUs.
[[nodiscard]] std::string no_device_reason();

/// The physical device of a logical one.
[[nodiscard]] int physical_id(int logical);
/// The physical devices of logical ones, in order (e.g. for ncclCommInitAll).
[[nodiscard]] std::vector<int> physical_ids(std::span<const int> logical);

/// The current physical device (cudaGetDevice), and making it current again (DeviceGuard's
/// restore, which reports a failure on stderr).
[[nodiscard]] int current_physical_device();
void restore_physical_device(int physical) noexcept;
/// The current physical device, or -1 if CUDA cannot say (for error messages; never throws).
[[nodiscard]] int current_physical_device_or_none() noexcept;
/// An attribute of the current device (kernel launch sizes).
[[nodiscard]] int current_device_attribute(cudaDeviceAttr attribute);
/// Makes the physical device of `logical` current.
void set_current_device(int logical);
/// After an operation failed half-enqueued: waits until every device of `logical` has finished
/// all its work, so that nothing the operation enqueued still reads or writes the caller's
/// buffers or leaves its plans' streams out of order. Reports failures on stderr.
void finish_devices(std::span<const int> logical) noexcept;
/// Runs `f`; if it throws, finishes every device of `logical` before the exception goes on: for
/// an operation made of several enqueued copies (a field's blocks), so that none of those that
/// did start still reads or writes the caller's buffer after the exception (docs/reliability.md,
/// promise 2). Returns what `f` returns.
template <class F>
decltype(auto) finishing_on_error(std::span<const int> logical, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (...) {
    finish_devices(logical);
    throw;
  }
}

[[nodiscard]] cudaDeviceProp device_properties(int logical);
[[nodiscard]] int device_attribute(cudaDeviceAttr attribute, int logical);
[[nodiscard]] std::string pci_bus_id(int logical);
/// cudaDeviceCanAccessPeer between the physical devices of two logical ones (true for one GPU).
[[nodiscard]] bool physical_peer_access(int accessor, int owner);
/// cudaDeviceGetP2PAttribute between the physical devices of two logical ones on different GPUs.
[[nodiscard]] int p2p_attribute(cudaDeviceP2PAttr attribute, int from, int to);
/// cudaDeviceEnablePeerAccess from the physical device of `from` to that of `to` (different
/// GPUs); an access already enabled by the application counts as done.
void enable_physical_peer_access(int from, int to);
/// The physical device with PCI bus id `bus` as this process sees it; -1 where it sees none.
[[nodiscard]] int physical_by_bus_id(const std::string& bus);
/// Whether logical device `logical` and physical device `physical` reach each other: one GPU, or
/// peer access both ways (for memory of another process, mapped over CUDA IPC).
[[nodiscard]] bool reaches_physical(int logical, int physical);
/// Peer access from the physical device of `from` to physical device `to` (another GPU; an
/// access already enabled counts as done).
void enable_access_to_physical(int from, int to);
/// A memory pool of cush's own on the physical device of `logical` (cudaMemPoolCreate), whose
/// allocations other devices can be given access to; never the application's default pool. It
/// keeps freed memory (release threshold: all) until it is trimmed.
[[nodiscard]] cudaMemPool_t create_device_pool(int logical);
/// Gives the physical device of `accessor` read and write access to `pool`'s allocations.
void grant_pool_access(cudaMemPool_t pool, int accessor);
/// A 2D copy from device `src_device`'s memory to `dst_device`'s on `stream`, naming both devices
/// (cudaMemcpy3DPeerAsync): for two devices without peer access.
void copy_2d_between_devices(void* dst, std::size_t dpitch, int dst_device, const void* src, std::size_t spitch,
                             int src_device, std::size_t width, std::size_t height, cudaStream_t stream);
/// The physical device a stream was created on.
[[nodiscard]] int stream_physical_device(cudaStream_t stream);

}  // namespace cush::detail
