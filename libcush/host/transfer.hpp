#pragma once
/// @file transfer.hpp
/// @brief What moves where: an operation on a plan, turned into a list of copies. Pure host code.
///
/// The list is what a transport executes; computing it apart from moving it lets CI check every
/// operation without a GPU (execute the list on host arrays and compare).

#include <cstddef>
#include <vector>

#include "cush/layout.hpp"

namespace cush {

/// @brief One end of a copy: the host buffer of the operation, or the buffer of a device.
struct Location {
  static constexpr int host = -1;
  int pos = host;          ///< position in the plan's device set, or `host`
  std::size_t offset = 0;  ///< elements from the start of that buffer
  [[nodiscard]] constexpr bool is_host() const noexcept { return pos == host; }
  friend constexpr bool operator==(const Location&, const Location&) = default;
};

/// @brief Copy `count` elements from `src` to `dst`, once transfer `after` (if >= 0) is done.
///
/// In lists between two plans (device_transfers.hpp) `src.pos` is a position in the source
/// plan's set and `dst.pos` one in the destination's. A `combine` transfer does not copy: it
/// replaces each destination element by the reduction of it and the source element.
struct Transfer {
  Location src;
  Location dst;
  std::size_t count = 0;
  int after = -1;  ///< index of an earlier transfer in the same list, or -1
  bool combine = false;
  friend constexpr bool operator==(const Transfer&, const Transfer&) = default;
};

using TransferList = std::vector<Transfer>;

/// @brief How a broadcast reaches the devices.
struct BroadcastOptions {
  /// Split the host data among the devices over their own host links, then complete every
  /// replica with device-to-device copies (needs peer access). Otherwise every device reads the
  /// whole host buffer.
  bool use_peers = false;
  /// Pipeline granularity of the split broadcast, in elements (0: one piece per device).
  std::size_t chunk = 0;
};

/// Host -> devices for the elements `part` of the extent. Host offsets count from part.offset.
/// A replicated layout gets the whole part on every device (as broadcast_transfers, no peers).
[[nodiscard]] TransferList scatter_transfers(const Layout& layout, Range part);
/// Devices -> host for the elements `part`. A replicated layout sends each device an even share.
[[nodiscard]] TransferList gather_transfers(const Layout& layout, Range part);
/// Host -> devices for slice `s` of every segment (boundaries on `granularity`); host offsets
/// count from element 0 of the extent. A replicated layout gets slice `s` of the extent on
/// every device.
[[nodiscard]] TransferList scatter_transfers(const Layout& layout, Slice s, std::size_t granularity);
/// Devices -> host for slice `s` of every segment; host offsets count from element 0.
[[nodiscard]] TransferList gather_transfers(const Layout& layout, Slice s, std::size_t granularity);
/// Host -> every device of a replicated layout for the elements `part`.
[[nodiscard]] TransferList broadcast_transfers(const Layout& layout, Range part, const BroadcastOptions& options);

namespace detail {
/// Throws InvalidArgument (from `where`) unless `part` lies within the layout's extent.
void check_part(const Layout& layout, Range part, const char* where);
/// `part` cut into p consecutive shares of even size (multiples of `granularity` elements; the
/// first shares get one granule more).
[[nodiscard]] std::vector<Range> even_shares(Range part, std::size_t p, std::size_t granularity);
}  // namespace detail

}  // namespace cush
