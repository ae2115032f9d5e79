#pragma once
// Logical devices: the GPUs cush's API speaks of (DeviceSet ids, Segment::device(), ...) and the
// physical CUDA devices behind them. Without virtual GPUs the two are the same. With them
// (CUSH_VIRTUAL_GPUS, cush::use_virtual_gpus) several logical devices share one physical GPU,
// so that every multi-GPU code path runs on fewer GPUs. The process's map is fixed at its first
// use; every CUDA call that names a device asks it, through core/cuda_devices.hpp only.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cush::detail {

/// Which physical device each logical device is. Pure host code.
class DeviceMap {
 public:
  /// Logical device i is physical device i, for `physical` devices.
  static DeviceMap identity(int physical);
  /// `logical` devices over `physical` ones, round robin: logical i is physical i mod physical.
  static DeviceMap round_robin(int logical, int physical);
  /// Logical device i is physical_ids[i] (each in [0, physical), repeats allowed).
  static DeviceMap listed(std::vector<int> physical_ids, int physical);
  /// The text of CUSH_VIRTUAL_GPUS: a count ("4", round robin) or a list ("0,0,1"); empty: the
  /// identity. InvalidArgument naming the variable otherwise, or when the host has no GPU.
  static DeviceMap parse(std::string_view text, int physical);

  [[nodiscard]] int logical_count() const noexcept { return static_cast<int>(physical_of_.size()); }
  [[nodiscard]] int physical_count() const noexcept { return physical_count_; }
  /// The physical device of logical device `logical` (which must exist).
  [[nodiscard]] int physical(int logical) const { return physical_of_.at(static_cast<std::size_t>(logical)); }
  /// True unless every logical device is the physical device of the same number.
  [[nodiscard]] bool is_virtual() const noexcept { return virtual_; }
  /// How many logical devices share the physical GPU of `logical` (1 without virtual GPUs).
  [[nodiscard]] int sharing(int logical) const;
  /// True if two logical devices are one physical GPU.
  [[nodiscard]] bool same_gpu(int a, int b) const { return physical(a) == physical(b); }
  /// "4 logical GPUs on 1: 0 0 0 0", for messages and benchmark contexts.
  [[nodiscard]] std::string describe() const;

 private:
  DeviceMap(std::vector<int> physical_of, int physical_count);
  std::vector<int> physical_of_;
  int physical_count_ = 0;
  bool virtual_ = false;
};

/// The process's map: CUSH_VIRTUAL_GPUS, or what use_virtual_gpus() set, over the physical
/// devices CUDA reports (none: an empty map). Fixed at the first call.
[[nodiscard]] const DeviceMap& device_map();

/// Sets the process's map before its first use; InvalidArgument from `where` once it is fixed.
void set_device_map(DeviceMap map, const char* where);

}  // namespace cush::detail
