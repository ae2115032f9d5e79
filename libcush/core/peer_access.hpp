#pragma once
// The one place that asks CUDA whether one device can reach another's memory, and that enables
// peer access. Both answers are cached for the process: capabilities do not change while it runs,
// and enabling is a per-process, per-ordered-pair state of the driver.

#include <cuda_runtime_api.h>

namespace cush::detail {

/// True if kernels and copy engines of device `accessor` can read and write device `owner`'s
/// memory over a peer link (cudaDeviceCanAccessPeer); true for a device and itself, and for
/// logical devices on the same GPU.
[[nodiscard]] bool can_access(int accessor, int owner);

/// True if two devices can reach each other both ways: what a copy between them over the peer
/// links, or a kernel storing into the other, needs. Logical devices on one GPU always can.
[[nodiscard]] bool can_reach(int a, int b);

/// True if two logical devices are one physical GPU (virtual GPUs, core/device_map.hpp).
[[nodiscard]] bool same_gpu(int a, int b);

/// The memory pool of cush's own on device `owner` (made once per device and kept for the
/// process), whose allocations device `accessor` may read and write where the two reach each
/// other (access granted once per pair): for staging buffers that a copy between the two
/// devices reads. The application's default pools are left as they are.
[[nodiscard]] cudaMemPool_t shared_pool(int owner, int accessor);

/// Returns the memory that cush's pools keep and no allocation uses to the system
/// (cudaMemPoolTrimTo): cush::release_staging_memory().
void trim_shared_pools() noexcept;

/// Plans hold the pools' kept memory: each plan calls hold_shared_pools() when made and
/// drop_shared_pools() when destroyed (after its streams are done); the last plan to go trims
/// the pools. A short-lived plan made and destroyed while others live leaves what they keep.
void hold_shared_pools() noexcept;
void drop_shared_pools() noexcept;

/// Enables access from device `from` to device `to` once per process; false if the pair has no
/// peer access (nothing is enabled then), true once enabled (also by the application before us).
bool enable_peer_access_once(int from, int to);

}  // namespace cush::detail
