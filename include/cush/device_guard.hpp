#pragma once
/// @file device_guard.hpp
/// @brief Scope guard that makes a device current and restores the previous one on exit.

namespace cush {

/// @brief Makes `device` the current CUDA device for the guard's lifetime.
///
/// The previous device is restored on destruction, also when an exception unwinds the scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
  bool changed_;
};

}  // namespace cush
