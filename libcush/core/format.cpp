#include "core/format.hpp"

#include <array>
#include <cstdio>

namespace cush::detail {

std::string format_bytes(std::size_t bytes) {
  static constexpr std::array<const char*, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < units.size()) {
    v /= 1024.0;
    ++u;
  }
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.2f %s", v, units[u]);
  return buf.data();
}

}  // namespace cush::detail
