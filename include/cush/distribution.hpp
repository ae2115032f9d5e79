#pragma once
/// @file distribution.hpp
/// @brief Rules that decide how many elements of a host extent each device gets. Pure host code.

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cush/device_set.hpp"

namespace cush {

/// @brief How a host extent of n elements is divided among the devices of a set.
///
/// Segments are contiguous and in device-set order: device 0 of the set gets the first
/// counts[0] elements, device 1 the next counts[1], and so on. Every boundary between segments
/// lies on a multiple of the granularity, so granules (a matrix row, a grid plane) are never
/// split; only the last granule may be partial when n is not a multiple of it.
///
/// Built-in rules and their guarantees (ideal_i = n * w_i / sum(w)):
///  - uniform:          w_i = 1; the first (granules mod devices) devices get one granule more.
///  - memory_capacity:  w_i = total memory of device i.
///  - memory_bandwidth: w_i = theoretical memory bandwidth of device i.
///  - weighted(w):      user weights (finite, >= 0, not all 0).
///  All of them: |counts[i] - ideal_i| <= granularity.
///  - custom(rule):     the rule returns counts; cush checks they sum to n and keep granules whole.
///  - replicated:       every device holds all n elements (for broadcasts).
class Distribution {
 public:
  enum class Kind { uniform, memory_capacity, memory_bandwidth, weighted, custom, replicated };
  /// A user-defined rule: element counts, one per device in set order, for n elements.
  using Rule = std::function<std::vector<std::size_t>(std::size_t n, std::span<const DeviceInfo> devices)>;

  static Distribution uniform();
  static Distribution memory_capacity();
  static Distribution memory_bandwidth();
  static Distribution weighted(std::vector<double> weights);
  static Distribution custom(Rule rule, std::string name = "custom");
  static Distribution replicated();

  /// A copy of this rule whose segment boundaries fall on multiples of `elements` (>= 1).
  [[nodiscard]] Distribution with_granularity(std::size_t elements) const;
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] bool is_replicated() const noexcept { return kind_ == Kind::replicated; }
  /// "uniform", "weighted(1, 3)", "memory_capacity/granularity 512", ...; each weight as the
  /// shortest text that reads back as the same double ("2.5", "1e-07").
  [[nodiscard]] std::string name() const;

  /// Element counts per device for n elements over `devices`. For replicated, every count is n.
  /// Throws InvalidArgument for unusable weights or a custom rule that breaks the contract.
  [[nodiscard]] std::vector<std::size_t> counts(std::size_t n, std::span<const DeviceInfo> devices) const;

 private:
  Distribution(Kind kind, std::vector<double> weights, std::shared_ptr<const Rule> rule, std::string name);
  Kind kind_ = Kind::uniform;
  std::size_t granularity_ = 1;
  std::vector<double> weights_;
  std::shared_ptr<const Rule> rule_;
  std::string custom_name_;
};

}  // namespace cush
