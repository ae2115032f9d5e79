#pragma once
// Checks of a list of device ids, apart from the CUDA runtime (host tests call it directly).

#include <span>

namespace cush::detail {

/// Rejects an empty list, negative, duplicate or out-of-range ids (InvalidArgument from `where`);
/// `available` is the number of devices.
void validate_device_ids(std::span<const int> ids, int available, const char* where);

}  // namespace cush::detail
