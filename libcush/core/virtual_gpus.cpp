#include "cush/virtual_gpus.hpp"

#include <utility>

#include "core/cuda_devices.hpp"
#include "core/device_map.hpp"
#include "cush/error.hpp"

namespace cush {

void use_virtual_gpus(int count) {
  constexpr const char* where = "cush::use_virtual_gpus";
  if (count < 1 || count > 64) throw InvalidArgument(where, "count", std::to_string(count) + " is not from 1 to 64");
  detail::set_device_map(detail::DeviceMap::round_robin(count, detail::physical_device_count()), where);
}

void use_virtual_gpus(std::vector<int> physical_ids) {
  constexpr const char* where = "cush::use_virtual_gpus";
  if (physical_ids.empty() || physical_ids.size() > 64)
    throw InvalidArgument(where, "physical_ids", "needs 1 to 64 devices, got " + std::to_string(physical_ids.size()));
  detail::set_device_map(detail::DeviceMap::listed(std::move(physical_ids), detail::physical_device_count()), where);
}

bool virtual_gpus_active() { return detail::device_map().is_virtual(); }

int physical_device(int device) { return detail::physical_id(device); }

std::string describe_devices() { return detail::device_map().describe(); }

}  // namespace cush
