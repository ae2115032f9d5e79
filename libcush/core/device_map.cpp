#include "core/device_map.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <mutex>
#include <optional>
#include <utility>

#include "core/cuda_devices.hpp"
#include "core/env.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {

constexpr const char* variable = "CUSH_VIRTUAL_GPUS";
constexpr int most_logical = 64;  // more would be a typo, not a test

InvalidArgument bad(std::string_view text, const std::string& why) {
  return InvalidArgument("cush (environment)", variable,
                         "'" + std::string(text) + "' " + why +
                             " (expected a count of logical GPUs, e.g. 4, or a list of physical ids, e.g. 0,0,1)");
}

// The whole numbers of a comma-separated list, or InvalidArgument.
std::vector<int> numbers(std::string_view text) {
  std::vector<int> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    int x = -1;
    const char* first = text.data() + begin;
    const char* last = text.data() + end;
    const auto [ptr, ec] = std::from_chars(first, last, x);
    if (begin == end || ec != std::errc() || ptr != last || x < 0) throw bad(text, "is not a list of whole numbers");
    out.push_back(x);
    if (end == text.size()) return out;
    begin = end + 1;
  }
}

}  // namespace

DeviceMap::DeviceMap(std::vector<int> physical_of, int physical_count)
    : physical_of_(std::move(physical_of)), physical_count_(physical_count) {
  for (std::size_t i = 0; i < physical_of_.size(); ++i)
    if (physical_of_[i] != static_cast<int>(i)) virtual_ = true;
}

DeviceMap DeviceMap::identity(int physical) {
  std::vector<int> ids(static_cast<std::size_t>(std::max(physical, 0)));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  return DeviceMap(std::move(ids), std::max(physical, 0));
}

DeviceMap DeviceMap::round_robin(int logical, int physical) {
  if (physical < 1) return identity(0);
  std::vector<int> ids(static_cast<std::size_t>(logical));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i) % physical;
  return DeviceMap(std::move(ids), physical);
}

DeviceMap DeviceMap::listed(std::vector<int> physical_ids, int physical) {
  if (physical < 1) return identity(0);
  for (int id : physical_ids)
    if (id < 0 || id >= physical)
      throw InvalidArgument("cush::use_virtual_gpus", "physical_ids",
                            "physical device " + std::to_string(id) + " does not exist (this host has " +
                                std::to_string(physical) + ")");
  return DeviceMap(std::move(physical_ids), physical);
}

DeviceMap DeviceMap::parse(std::string_view text, int physical) {
  if (text.empty()) return identity(physical);
  const std::vector<int> values = numbers(text);
  const bool count = values.size() == 1 && text.find(',') == std::string_view::npos;
  if (count && (values[0] < 1 || values[0] > most_logical))
    throw bad(text, "is not a count from 1 to " + std::to_string(most_logical));
  if (!count && static_cast<int>(values.size()) > most_logical)
    throw bad(text, "lists more than " + std::to_string(most_logical) + " devices");
  if (physical < 1) return identity(0);  // no GPU: nothing to map
  if (count) return round_robin(values[0], physical);
  for (int id : values)
    if (id >= physical) throw bad(text, "names physical device " + std::to_string(id) + ", and this host has " +
                                            std::to_string(physical));
  return DeviceMap(values, physical);
}

int DeviceMap::sharing(int logical) const {
  const int p = physical(logical);
  return static_cast<int>(std::count(physical_of_.begin(), physical_of_.end(), p));
}

std::string DeviceMap::describe() const {
  std::string s = std::to_string(logical_count());
  s += logical_count() == 1 ? " logical GPU on " : " logical GPUs on ";
  s += std::to_string(physical_count_);
  s += ":";
  for (int p : physical_of_) {
    s += ' ';
    s += std::to_string(p);
  }
  return s;
}

namespace {
std::mutex map_mutex;
std::optional<DeviceMap> requested;              // set_device_map before the first use
std::atomic<const DeviceMap*> fixed{nullptr};  // the map in force, once fixed
}  // namespace

const DeviceMap& device_map() {
  if (const DeviceMap* m = fixed.load(std::memory_order_acquire)) return *m;
  std::lock_guard lock(map_mutex);
  if (const DeviceMap* m = fixed.load(std::memory_order_relaxed)) return *m;
  static std::optional<DeviceMap> chosen;
  chosen = requested ? *requested : DeviceMap::parse(env::text(variable), physical_device_count());
  fixed.store(&*chosen, std::memory_order_release);
  return *chosen;
}

void set_device_map(DeviceMap map, const char* where) {
  std::lock_guard lock(map_mutex);
  if (fixed.load(std::memory_order_relaxed) != nullptr)
    throw InvalidArgument(where, "this",
                          "the logical devices are fixed once cush has used a device: choose them first "
                          "(or set CUSH_VIRTUAL_GPUS)");
  requested = std::move(map);
}

}  // namespace cush::detail
