#include "cush/layout.hpp"
#include "host/slice_check.hpp"

#include <cstdint>
#include <string>

#include "cush/error.hpp"
#include "host/counts.hpp"
#include "host/transfer.hpp"

namespace cush {

Layout Layout::partitioned(std::span<const std::size_t> counts) {
  if (counts.empty()) throw InvalidArgument("cush::Layout::partitioned", "counts", "no devices");
  Layout l;
  l.segments_.reserve(counts.size());
  for (std::size_t c : counts) {
    if (c > SIZE_MAX - l.n_)
      throw InvalidArgument("cush::Layout::partitioned", "counts", "add up to more than SIZE_MAX elements");
    l.segments_.push_back(Range{l.n_, c});
    l.n_ += c;
  }
  return l;
}

Layout Layout::replicated(std::size_t n, std::size_t devices) {
  if (devices == 0) throw InvalidArgument("cush::Layout::replicated", "devices", "no devices");
  Layout l;
  l.n_ = n;
  l.replicated_ = true;
  l.segments_.assign(devices, Range{0, n});
  return l;
}

Layout Layout::make(std::size_t n, const Distribution& distribution, std::span<const DeviceInfo> devices) {
  if (distribution.is_replicated()) return replicated(n, devices.size());
  const std::vector<std::size_t> counts = distribution.counts(n, devices);
  return partitioned(counts);
}

void detail::check_slice(Slice s, const char* where) {
  if (s.count == 0 || s.index >= s.count)
    throw InvalidArgument(where, "slice",
                          "part " + std::to_string(s.index) + " of " + std::to_string(s.count) + " does not exist");
}

Range Layout::slice(std::size_t pos, Slice s, std::size_t granularity) const {
  detail::check_slice(s, "cush::Layout::slice");
  if (granularity == 0) throw InvalidArgument("cush::Layout::slice", "granularity", "must be at least 1");
  const Range seg = segment(pos);
  const auto [offset, count] = detail::uniform_share(seg.count, s.count, granularity, s.index);
  return Range{seg.offset + offset, count};
}

}  // namespace cush
