#include "grid/halo.hpp"

namespace cush {

std::vector<HaloPhase> halo_phases(const Decomposition& grid) {
  std::vector<HaloPhase> phases;
  for (std::size_t axis = 0; axis < grid.dims(); ++axis) {
    HaloPhase phase{axis, {}};
    const auto h = static_cast<std::ptrdiff_t>(grid.halo(axis));
    for (std::size_t from = 0; from < grid.size(); ++from) {
      const Box mine = grid.owned(from);
      for (int dir : {-1, +1}) {
        const std::optional<std::size_t> to = grid.neighbor(from, axis, dir);
        if (!to) continue;
        const Box theirs = grid.owned(*to);
        HaloMessage m{from, *to, {}, {}, axis, dir};
        for (std::size_t a = 0; a < 3; ++a) {
          const auto ha = static_cast<std::ptrdiff_t>(grid.halo(a));
          if (a < axis) {
            // Axes exchanged before: their ghost layers travel along (edges and corners).
            m.src.lo[a] = m.dst.lo[a] = -ha;
            m.src.size[a] = m.dst.size[a] = mine.size[a] + 2 * grid.halo(a);
          } else if (a > axis) {
            m.src.lo[a] = m.dst.lo[a] = 0;
            m.src.size[a] = m.dst.size[a] = mine.size[a];
          } else {
            // The outermost owned layers on side `dir` go to the neighbour's ghosts on the
            // opposite side.
            m.src.lo[a] = dir > 0 ? static_cast<std::ptrdiff_t>(mine.size[a]) - h : 0;
            m.dst.lo[a] = dir > 0 ? -h : static_cast<std::ptrdiff_t>(theirs.size[a]);
            m.src.size[a] = m.dst.size[a] = grid.halo(a);
          }
        }
        phase.messages.push_back(m);
      }
    }
    if (!phase.messages.empty()) phases.push_back(std::move(phase));
  }
  return phases;
}

}  // namespace cush
