#include "cush/halo_components.hpp"

#include <algorithm>
#include <string>

#include "cush/error.hpp"

namespace cush {

std::size_t HaloComponents::slot(std::size_t axis, int dir) {
  if (axis > 2) throw InvalidArgument("cush::HaloComponents", "axis", "must be 0, 1 or 2, not " + std::to_string(axis));
  if (dir != 1 && dir != -1) throw InvalidArgument("cush::HaloComponents", "dir", "must be +1 or -1, not " + std::to_string(dir));
  return axis * 2 + (dir > 0 ? 1 : 0);
}

void HaloComponents::insert(std::vector<std::size_t>& list, long long component) {
  if (component < 0)
    throw InvalidArgument("cush::HaloComponents", "components", "component " + std::to_string(component) + " is negative");
  const auto c = static_cast<std::size_t>(component);
  const auto at = std::lower_bound(list.begin(), list.end(), c);
  if (at == list.end() || *at != c) list.insert(at, c);
}

HaloComponents HaloComponents::all(std::size_t components) {
  HaloComponents h;
  for (std::size_t axis = 0; axis < 3; ++axis)
    for (int dir : {-1, 1})
      for (std::size_t c = 0; c < components; ++c) h.fill(axis, dir, {c});
  return h;
}

}  // namespace cush
