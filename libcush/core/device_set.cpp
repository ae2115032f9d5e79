#include "cush/device_set.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/device_ids.hpp"
#include "core/format.hpp"
#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush {

// --- Topology ----------------------------------------------------------------------------------

Topology::Topology(std::vector<DeviceInfo> devices, std::vector<Link> links)
    : devices_(std::move(devices)), links_(std::move(links)) {
  if (links_.size() != devices_.size() * devices_.size())
    throw InvalidArgument("cush::Topology", "links",
                          "needs " + std::to_string(devices_.size() * devices_.size()) +
                              " entries (one per ordered pair), got " + std::to_string(links_.size()));
}

namespace {
DeviceInfo query_device(int id) {
  cudaDeviceProp prop{};
  CUSH_CUDA_CHECK_AT(cudaGetDeviceProperties(&prop, id), "device " + std::to_string(id));
  int mem_clock_khz = 0;
  int bus_width_bits = 0;
  CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, id));
  CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, id));
  std::array<char, 32> bus{};
  CUSH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), id));
  DeviceInfo info;
  info.id = id;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.total_memory = prop.totalGlobalMem;
  // Double data rate: two transfers per clock.
  info.memory_bandwidth = 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0);
  info.pci_bus_id = bus.data();
  return info;
}
}  // namespace

Topology Topology::query(std::span<const int> ids) {
  // Device properties and links do not change while a process runs; cudaGetDeviceProperties
  // alone costs a noticeable fraction of a millisecond, so each device is asked once.
  static std::mutex mutex;
  static std::map<int, DeviceInfo> known;
  std::vector<DeviceInfo> devices;
  devices.reserve(ids.size());
  {
    std::lock_guard lock(mutex);
    for (int id : ids) {
      auto it = known.find(id);
      if (it == known.end()) it = known.emplace(id, query_device(id)).first;
      devices.push_back(it->second);
    }
  }
  std::vector<Link> links(ids.size() * ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::size_t j = 0; j < ids.size(); ++j) {
      Link& l = links[i * ids.size() + j];
      if (i == j) {
        l = Link{true, 0, true};
        continue;
      }
      l.peer_access = detail::can_access(ids[i], ids[j]);
      if (l.peer_access) {
        int rank = -1;
        int atomics = 0;
        CUSH_CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, ids[i], ids[j]));
        CUSH_CUDA_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported,
                                                  ids[i], ids[j]));
        l.performance_rank = rank;
        l.native_atomics = atomics != 0;
      }
    }
  }
  return Topology(std::move(devices), std::move(links));
}

const Link& Topology::link(std::size_t from, std::size_t to) const {
  if (from >= size() || to >= size())
    throw InvalidArgument("cush::Topology::link", from >= size() ? "from" : "to",
                          "position out of range for a set of " + std::to_string(size()));
  return links_[from * size() + to];
}

bool Topology::all_peer_access() const noexcept {
  return std::all_of(links_.begin(), links_.end(), [](const Link& l) { return l.peer_access; });
}

std::string Topology::describe() const {
  std::string out;
  std::array<char, 256> line{};
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const DeviceInfo& d = devices_[i];
    std::snprintf(line.data(), line.size(), "  [%zu] GPU %d %s (sm_%d%d, %d SMs, %s, %.0f GB/s peak, %s)\n",
                  i, d.id, d.name.c_str(), d.compute_major, d.compute_minor, d.multiprocessors,
                  detail::format_bytes(d.total_memory).c_str(), d.memory_bandwidth / 1e9,
                  d.pci_bus_id.c_str());
    out += line.data();
  }
  if (devices_.size() > 1) {
    out += "  peer access (performance rank, lower is faster):\n";
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      out += "   ";
      for (std::size_t j = 0; j < devices_.size(); ++j) {
        const Link& l = link(i, j);
        if (i == j) out += "   -";
        else if (l.peer_access) out += "  " + std::to_string(l.performance_rank) + " ";
        else out += "  no";
        out += j + 1 < devices_.size() ? "" : "\n";
      }
    }
  }
  return out;
}

// --- DeviceSet ---------------------------------------------------------------------------------

namespace detail {

void validate_device_ids(std::span<const int> ids, int available, const char* where) {
  if (ids.empty()) throw InvalidArgument(where, "devices", "the device set is empty");
  std::set<int> seen;
  for (int id : ids) {
    if (id < 0 || id >= available)
      throw InvalidArgument(where, "devices",
                            "device id " + std::to_string(id) + " is out of range (this host has " +
                                std::to_string(available) + " GPU" + (available == 1 ? "" : "s") + ")");
    if (!seen.insert(id).second)
      throw InvalidArgument(where, "devices", "device id " + std::to_string(id) + " is listed twice");
  }
}

}  // namespace detail

int DeviceSet::available() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::string DeviceSet::unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  }
  return count == 0 ? "the CUDA runtime reports 0 devices" : "";
}

namespace {
int require_devices(const char* where) {
  const int n = DeviceSet::available();
  if (n == 0) throw NoDevice(std::string(where) + ": no usable CUDA device (" + DeviceSet::unavailable_reason() + ")");
  return n;
}
}  // namespace

DeviceSet::DeviceSet(std::initializer_list<int> ids) : DeviceSet(std::vector<int>(ids)) {}

DeviceSet::DeviceSet(std::vector<int> ids) : ids_(std::move(ids)) {
  constexpr const char* where = "cush::DeviceSet";
  if (ids_.empty()) throw InvalidArgument(where, "devices", "the device set is empty");
  detail::validate_device_ids(ids_, require_devices(where), where);
  topology_ = std::make_shared<const Topology>(Topology::query(ids_));
}

DeviceSet DeviceSet::all() {
  const int n = require_devices("cush::DeviceSet::all");
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = i;
  return DeviceSet(std::move(ids));
}

DeviceSet DeviceSet::first(int count) {
  const int n = require_devices("cush::DeviceSet::first");
  if (count < 1 || count > n)
    throw InvalidArgument("cush::DeviceSet::first", "count",
                          "asked for " + std::to_string(count) + " GPUs, this host has " + std::to_string(n));
  std::vector<int> ids(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) ids[static_cast<std::size_t>(i)] = i;
  return DeviceSet(std::move(ids));
}

int DeviceSet::position_of(int device) const noexcept {
  const auto it = std::find(ids_.begin(), ids_.end(), device);
  return it == ids_.end() ? -1 : static_cast<int>(it - ids_.begin());
}

std::size_t DeviceSet::free_memory(std::size_t pos) const {
  DeviceGuard guard(ids_.at(pos));
  std::size_t free_bytes = 0;
  std::size_t total = 0;
  CUSH_CUDA_CHECK_AT(cudaMemGetInfo(&free_bytes, &total), "device " + std::to_string(ids_[pos]));
  return free_bytes;
}

void DeviceSet::enable_peer_access() const {
  for (std::size_t i = 0; i < size(); ++i)
    for (std::size_t j = 0; j < size(); ++j)
      if (i != j && topology_->link(i, j).peer_access) detail::enable_peer_access_once(ids_[i], ids_[j]);
}

}  // namespace cush
