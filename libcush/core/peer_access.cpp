#include "core/peer_access.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {
std::mutex mutex;
std::map<std::pair<int, int>, bool>& capabilities() {
  static std::map<std::pair<int, int>, bool> known;
  return known;
}
std::set<std::pair<int, int>>& enabled() {
  static std::set<std::pair<int, int>> pairs;
  return pairs;
}

bool can_access_locked(int accessor, int owner) {
  if (accessor == owner) return true;
  const auto [it, inserted] = capabilities().try_emplace({accessor, owner}, false);
  if (inserted) {
    int can = 0;
    CUSH_CUDA_CHECK_AT(cudaDeviceCanAccessPeer(&can, accessor, owner),
                       "device " + std::to_string(accessor) + " to device " + std::to_string(owner));
    it->second = can != 0;
  }
  return it->second;
}
}  // namespace

bool can_access(int accessor, int owner) {
  std::lock_guard lock(mutex);
  return can_access_locked(accessor, owner);
}

bool can_reach(int a, int b) {
  std::lock_guard lock(mutex);
  return can_access_locked(a, b) && can_access_locked(b, a);
}

bool enable_peer_access_once(int from, int to) {
  std::lock_guard lock(mutex);
  if (from == to || enabled().contains({from, to})) return true;
  if (!can_access_locked(from, to)) return false;
  DeviceGuard guard(from);
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // enabled by the application before us: fine
  } else if (status != cudaSuccess) {
    throw_cuda_error(status, "cudaDeviceEnablePeerAccess(to, 0)", __FILE__, __LINE__,
                     "from device " + std::to_string(from) + " to device " + std::to_string(to));
  }
  enabled().insert({from, to});
  return true;
}

}  // namespace cush::detail
