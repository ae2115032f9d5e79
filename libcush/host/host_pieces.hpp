#pragma once
// Which parts of a host range are page-locked: DMA reads and writes those directly, the rest is
// staged (host/staging.hpp).

#include <cstddef>
#include <vector>

namespace cush::detail {

/// A piece of a host range that is wholly pinned or wholly pageable.
struct HostPiece {
  std::size_t offset = 0;  // bytes from the start of the range
  std::size_t bytes = 0;
  bool pinned = false;
};

/// Splits [ptr, ptr + bytes) into pieces that DMA can use directly (pinned) or that need staging.
[[nodiscard]] std::vector<HostPiece> classify_host(const void* ptr, std::size_t bytes);

}  // namespace cush::detail
