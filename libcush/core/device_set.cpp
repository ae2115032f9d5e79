#include "cush/device_set.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/cuda_devices.hpp"
#include "core/device_ids.hpp"
#include "core/device_map.hpp"
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
  const cudaDeviceProp prop = detail::device_properties(id);
  const int mem_clock_khz = detail::device_attribute(cudaDevAttrMemoryClockRate, id);
  const int bus_width_bits = detail::device_attribute(cudaDevAttrGlobalMemoryBusWidth, id);
  const detail::DeviceMap& map = detail::device_map();
  DeviceInfo info;
  info.id = id;
  info.physical_id = map.physical(id);
  info.shared_by = map.sharing(id);
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  // A GPU shared by logical devices gives each an equal part of its memory and bandwidth.
  info.total_memory = prop.totalGlobalMem / static_cast<std::size_t>(info.shared_by);
  // Double data rate: two transfers per clock.
  info.memory_bandwidth = 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / info.shared_by;
  info.pci_bus_id = detail::pci_bus_id(id);
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
      if (i == j || detail::same_gpu(ids[i], ids[j])) {
        l = Link{true, 0, true, i != j};
        continue;
      }
      l.peer_access = detail::can_access(ids[i], ids[j]);
      if (l.peer_access) {
        l.performance_rank = detail::p2p_attribute(cudaDevP2PAttrPerformanceRank, ids[i], ids[j]);
        l.native_atomics = detail::p2p_attribute(cudaDevP2PAttrNativeAtomicSupported, ids[i], ids[j]) != 0;
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
    std::snprintf(line.data(), line.size(), "  [%zu] GPU %d %s (sm_%d%d, %d SMs, %s, %.0f GB/s peak, %s)", i, d.id,
                  d.name.c_str(), d.compute_major, d.compute_minor, d.multiprocessors,
                  detail::format_bytes(d.total_memory).c_str(), d.memory_bandwidth / 1e9, d.pci_bus_id.c_str());
    out += line.data();
    if (d.shared_by > 1 || d.physical_id != d.id)
      out += " - virtual: GPU " + std::to_string(d.physical_id) + ", shared by " + std::to_string(d.shared_by) +
             " (memory and bandwidth are its share)";
    out += "\n";
  }
  if (devices_.size() > 1) {
    out += "  peer access (performance rank, lower is faster; =: the same GPU):\n";
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      out += "   ";
      for (std::size_t j = 0; j < devices_.size(); ++j) {
        const Link& l = link(i, j);
        if (i == j) out += "   -";
        else if (l.same_gpu) out += "  = ";
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

int DeviceSet::available() {
  // A malformed CUSH_VIRTUAL_GPUS throws (InvalidArgument naming it): read as "no GPU" it would
  // let a program skip its work and exit as if the machine had none.
  return detail::device_map().logical_count();
}

std::string DeviceSet::unavailable_reason() {
  try {
    if (detail::device_map().logical_count() > 0) return {};
  } catch (const Error& e) {
    return e.what();
  }
  return detail::no_device_reason();
}

namespace {
// The number of (logical) devices; NoDevice without any, InvalidArgument for a malformed
// CUSH_VIRTUAL_GPUS.
int require_devices(const char* where) {
  const int n = detail::device_map().logical_count();
  if (n == 0) throw NoDevice(std::string(where) + ": no usable CUDA device (" + detail::no_device_reason() + ")");
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

std::vector<int> DeviceSet::physical_ids() const {
  std::vector<int> ids;
  for (std::size_t pos = 0; pos < size(); ++pos) ids.push_back(physical(pos));
  return ids;
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
