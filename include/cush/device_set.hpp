#pragma once
/// @file device_set.hpp
/// @brief An ordered subset of the host's GPUs and what is known about them.

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cush {

/// @brief Static properties of one GPU, as the distributions and transports need them.
///
/// With virtual GPUs (use_virtual_gpus, CUSH_VIRTUAL_GPUS) a device is a logical one: `id` is
/// its logical id, `physical_id` the GPU behind it, and the memory and bandwidth are the GPU's
/// divided by the number of logical devices that share it (`shared_by`), so that distributions by
/// capacity or bandwidth treat the shares as the parts of one GPU they are.
struct DeviceInfo {
  int id = -1;                    ///< the device's id in cush (the CUDA ordinal without virtual GPUs)
  int physical_id = -1;           ///< the CUDA ordinal of the GPU behind it
  int shared_by = 1;              ///< logical devices on that GPU (1 without virtual GPUs)
  std::string name;               ///< e.g. "NVIDIA H200"
  int compute_major = 0;          ///< compute capability
  int compute_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;   ///< bytes of device memory (this device's share)
  double memory_bandwidth = 0.0;  ///< theoretical peak, bytes/s (memory clock x bus width x 2; this device's share)
  std::string pci_bus_id;
};

/// @brief How one device reaches another.
struct Link {
  bool peer_access = false;   ///< direct access (cudaDeviceCanAccessPeer; always for one GPU)
  int performance_rank = -1;  ///< cudaDevP2PAttrPerformanceRank: lower is faster; -1 if no peer access; 0 on one GPU
  bool native_atomics = false;
  bool same_gpu = false;      ///< two different logical devices of one physical GPU (virtual GPUs)
};

/// @brief Properties of an ordered set of devices and of the links between them.
class Topology {
 public:
  Topology() = default;
  /// Builds a topology from known values (tests, or a stored calibration).
  Topology(std::vector<DeviceInfo> devices, std::vector<Link> links);
  /// Queries the CUDA runtime for the devices `ids`, in that order.
  static Topology query(std::span<const int> ids);

  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] const DeviceInfo& device(std::size_t pos) const { return devices_.at(pos); }
  [[nodiscard]] std::span<const DeviceInfo> devices() const noexcept { return devices_; }
  /// The link from the device at position `from` to the one at `to` (positions in the set).
  [[nodiscard]] const Link& link(std::size_t from, std::size_t to) const;
  /// True if every device of the set can access every other directly.
  [[nodiscard]] bool all_peer_access() const noexcept;
  /// A table for people: one line per device, then the peer matrix.
  [[nodiscard]] std::string describe() const;

 private:
  std::vector<DeviceInfo> devices_;
  std::vector<Link> links_;  // row-major size() x size()
};

/// @brief An ordered, validated subset of the host's GPUs, e.g. `DeviceSet{1, 0}`.
///
/// Position i of the set is the i-th device listed; plans give segment i to it. Construction
/// rejects an empty list, duplicates and ids that do not exist (InvalidArgument), and throws
/// NoDevice when the host has no usable GPU. Ids are logical devices: the CUDA ordinals, unless
/// virtual GPUs map several onto one GPU (use_virtual_gpus).
class DeviceSet {
 public:
  DeviceSet(std::initializer_list<int> ids);
  explicit DeviceSet(std::vector<int> ids);
  /// Every GPU of the host (every logical GPU with virtual GPUs), in ordinal order.
  static DeviceSet all();
  /// The first `count` GPUs of the host (logical GPUs with virtual GPUs).
  static DeviceSet first(int count);
  /// Number of usable GPUs (logical GPUs with virtual GPUs); 0 when there is no GPU or no
  /// driver. Throws InvalidArgument (argument "CUSH_VIRTUAL_GPUS") when that variable is
  /// malformed: a typo is an error, not a machine without GPUs.
  static int available();
  /// Why available() is 0, in words from the CUDA runtime (or the error in CUSH_VIRTUAL_GPUS);
  /// empty if GPUs are present.
  static std::string unavailable_reason();

  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
  [[nodiscard]] int operator[](std::size_t pos) const { return ids_.at(pos); }
  /// The CUDA ordinal of the physical GPU behind the device at `pos` (the same id without virtual
  /// GPUs): what raw CUDA code (cudaSetDevice) takes.
  [[nodiscard]] int physical(std::size_t pos) const { return topology_->device(pos).physical_id; }
  /// physical(pos) for every position, in order.
  [[nodiscard]] std::vector<int> physical_ids() const;
  [[nodiscard]] const std::vector<int>& ids() const noexcept { return ids_; }
  [[nodiscard]] auto begin() const noexcept { return ids_.begin(); }
  [[nodiscard]] auto end() const noexcept { return ids_.end(); }
  /// Position of `device` in the set, or -1.
  [[nodiscard]] int position_of(int device) const noexcept;
  [[nodiscard]] const Topology& topology() const noexcept { return *topology_; }
  /// Free memory of the device at `pos` now, in bytes.
  [[nodiscard]] std::size_t free_memory(std::size_t pos) const;
  /// Enables peer access between every pair of the set that supports it. Each ordered pair is
  /// enabled once per process, however many sets or plans ask.
  void enable_peer_access() const;

  friend bool operator==(const DeviceSet& a, const DeviceSet& b) noexcept { return a.ids_ == b.ids_; }

 private:
  std::vector<int> ids_;
  std::shared_ptr<const Topology> topology_;
};

}  // namespace cush
