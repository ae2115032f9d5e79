#pragma once
// Small formatting helpers shared by messages and reports.

#include <cstddef>
#include <string>

namespace cush::detail {

/// "4.00 GiB", "512 B": a byte count for a person to read.
std::string format_bytes(std::size_t bytes);

}  // namespace cush::detail
