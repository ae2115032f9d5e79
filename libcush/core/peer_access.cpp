#include "core/peer_access.hpp"

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/cuda_devices.hpp"
#include "core/device_map.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {
// Never destroyed, nor the map of pools (pools() below): a plan destroyed by a static destructor
// after them would otherwise lock a destroyed mutex or walk a freed map when it trims the pools.
std::mutex& mutex = *new std::mutex;
std::map<std::pair<int, int>, bool>& capabilities() {
  static std::map<std::pair<int, int>, bool> known;
  return known;
}
// The (from, to) pairs of physical GPUs whose peer access is enabled: enabling is per physical
// pair, so logical devices on the same GPUs share it.
std::set<std::pair<int, int>>& enabled() {
  static std::set<std::pair<int, int>> pairs;
  return pairs;
}

// Two logical devices on one GPU reach each other's memory without peer access. A pair is
// remembered only once the driver answered: a failed query (it throws) leaves nothing cached, so
// the next use asks again instead of taking the pair for one without peer access for good.
bool can_access_locked(int accessor, int owner) {
  if (device_map().same_gpu(accessor, owner)) return true;
  auto& known = capabilities();
  if (const auto it = known.find({accessor, owner}); it != known.end()) return it->second;
  const bool can = physical_peer_access(accessor, owner);
  known.emplace(std::pair{accessor, owner}, can);
  return can;
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

bool same_gpu(int a, int b) { return device_map().same_gpu(a, b); }

namespace {
std::map<int, cudaMemPool_t>& pools() {  // by logical owner
  static auto* made = new std::map<int, cudaMemPool_t>;
  return *made;
}
}  // namespace

cudaMemPool_t shared_pool(int owner, int accessor) {
  static std::set<std::pair<cudaMemPool_t, int>> granted;   // (pool, physical accessor)
  std::lock_guard lock(mutex);
  cudaMemPool_t& pool = pools()[owner];
  if (pool == nullptr) {
    try {
      pool = create_device_pool(owner);
    } catch (...) {
      pools().erase(owner);
      throw;
    }
  }
  if (!device_map().same_gpu(owner, accessor) && can_access_locked(accessor, owner) &&
      !granted.contains({pool, physical_id(accessor)})) {
    grant_pool_access(pool, accessor);
    granted.insert({pool, physical_id(accessor)});
  }
  return pool;
}

namespace {
std::size_t holders = 0;  // plans alive, under `mutex`

void trim_locked() noexcept {
  for (const auto& [owner, pool] : pools()) CUSH_CUDA_CHECK_NOEXCEPT(cudaMemPoolTrimTo(pool, 0));
}
}  // namespace

void trim_shared_pools() noexcept {
  std::lock_guard lock(mutex);
  trim_locked();
}

void hold_shared_pools() noexcept {
  std::lock_guard lock(mutex);
  ++holders;
}

void drop_shared_pools() noexcept {
  std::lock_guard lock(mutex);
  if (holders > 0 && --holders == 0) trim_locked();
}

bool enable_peer_access_once(int from, int to) {
  std::lock_guard lock(mutex);
  if (device_map().same_gpu(from, to)) return true;
  const std::pair<int, int> physical{physical_id(from), physical_id(to)};
  if (enabled().contains(physical)) return true;
  if (!can_access_locked(from, to)) return false;
  enable_physical_peer_access(from, to);
  enabled().insert(physical);  // only once enabling succeeded
  return true;
}

}  // namespace cush::detail
