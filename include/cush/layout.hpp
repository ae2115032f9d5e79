#pragma once
/// @file layout.hpp
/// @brief Where each element of a host extent lives on the devices. Pure host code.

#include <cstddef>
#include <span>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/distribution.hpp"

namespace cush {

/// @brief A half-open range of elements [offset, offset + count).
struct Range {
  std::size_t offset = 0;
  std::size_t count = 0;
  [[nodiscard]] constexpr std::size_t end() const noexcept { return offset + count; }
  [[nodiscard]] constexpr bool empty() const noexcept { return count == 0; }
  friend constexpr bool operator==(const Range&, const Range&) = default;
};

/// The overlap of two ranges (empty, at a.offset, if they do not overlap).
[[nodiscard]] constexpr Range intersect(const Range& a, const Range& b) noexcept {
  const std::size_t lo = a.offset > b.offset ? a.offset : b.offset;
  const std::size_t hi = a.end() < b.end() ? a.end() : b.end();
  return hi > lo ? Range{lo, hi - lo} : Range{a.offset, 0};
}

/// @brief Part `index` of `count` near-equal parts of every device's segment: the unit of a
/// pipeline that moves and computes each segment piece by piece (upload part i + 1 while part i
/// computes). Parts keep the distribution's granules whole (only one part holds a segment's
/// partial last granule, if it has one) and differ in size by at most one granule; parts are
/// empty when a segment has fewer granules than `count`.
struct Slice {
  std::size_t index = 0;
  std::size_t count = 1;
};

/// @brief The map from a host extent of n elements to per-device segments.
///
/// Partitioned: segment i is the range of the extent that device i of the set holds; segments
/// are contiguous, ordered, and cover [0, n) exactly once. Replicated: every device holds the
/// whole extent.
class Layout {
 public:
  Layout() = default;
  /// Segments from per-device counts (in set order).
  static Layout partitioned(std::span<const std::size_t> counts);
  /// n elements held whole by each of `devices` devices.
  static Layout replicated(std::size_t n, std::size_t devices);
  /// Applies `distribution` to n elements over `devices`.
  static Layout make(std::size_t n, const Distribution& distribution, std::span<const DeviceInfo> devices);

  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] std::size_t devices() const noexcept { return segments_.size(); }
  [[nodiscard]] bool is_replicated() const noexcept { return replicated_; }
  /// The elements of the extent held by device `pos` (the whole extent if replicated).
  [[nodiscard]] const Range& segment(std::size_t pos) const { return segments_.at(pos); }
  [[nodiscard]] std::span<const Range> segments() const noexcept { return segments_; }
  /// The elements of slice `s` of segment `pos` (in extent indices), boundaries on multiples of
  /// `granularity` elements from the segment's start. Throws InvalidArgument unless
  /// s.index < s.count and granularity >= 1.
  [[nodiscard]] Range slice(std::size_t pos, Slice s, std::size_t granularity = 1) const;
  /// Elements device `pos` must store.
  [[nodiscard]] std::size_t capacity(std::size_t pos) const { return segment(pos).count; }

 private:
  std::size_t n_ = 0;
  bool replicated_ = false;
  std::vector<Range> segments_;
};

}  // namespace cush
