#include "cush/device_guard.hpp"

#include "core/cuda_devices.hpp"

namespace cush {

DeviceGuard::DeviceGuard(int device) : previous_(detail::current_physical_device()), changed_(false) {
  if (previous_ != detail::physical_id(device)) {
    detail::set_current_device(device);
    changed_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_) detail::restore_physical_device(previous_);
}

}  // namespace cush
