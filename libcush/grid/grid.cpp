#include "cush/grid.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "cush/error.hpp"

namespace cush {

namespace {

constexpr const char* where_grid = "cush::Decomposition";

// Cells of part `c` of `n` cells split into `parts`, and its first cell.
std::size_t part_size(std::size_t n, std::size_t parts, std::size_t c) { return n / parts + (c < n % parts ? 1 : 0); }
std::size_t part_start(std::size_t n, std::size_t parts, std::size_t c) {
  return c * (n / parts) + std::min(c, n % parts);
}

std::string text(const Extent3& e) {
  return std::to_string(e[0]) + " x " + std::to_string(e[1]) + " x " + std::to_string(e[2]);
}

}  // namespace

bool Box::contains(const std::array<std::ptrdiff_t, 3>& p) const noexcept {
  for (std::size_t a = 0; a < 3; ++a)
    if (p[a] < lo[a] || p[a] >= lo[a] + static_cast<std::ptrdiff_t>(size[a])) return false;
  return true;
}

Extent3 choose_process_grid(std::size_t count, const Extent3& extent, std::size_t dims, std::size_t min_thickness,
                            const std::array<bool, 3>& splittable) {
  constexpr const char* where = "cush::choose_process_grid";
  if (count == 0) throw InvalidArgument(where, "count", "a grid needs at least one block");
  if (dims < 1 || dims > 3) throw InvalidArgument(where, "dims", "must be 1, 2 or 3, not " + std::to_string(dims));
  for (std::size_t a = 0; a < 3; ++a)
    if (extent[a] == 0)  // every block would be empty
      throw InvalidArgument(where, "extent", text(extent) + " has no cells along axis " + std::to_string(a));
  std::optional<Extent3> best;
  // Score: the surface of the largest block (smaller is more cubic), then larger blocks along x,
  // then along y.
  std::tuple<std::size_t, std::size_t, std::size_t> best_score{};
  for (std::size_t bx = 1; bx <= count; ++bx) {
    if (count % bx != 0) continue;
    for (std::size_t by = 1; by <= count / bx; ++by) {
      if ((count / bx) % by != 0) continue;
      const Extent3 b{bx, by, count / bx / by};
      bool fits = true;
      Extent3 largest{};
      for (std::size_t a = 0; a < 3; ++a) {
        if ((a >= dims || !splittable[a]) && b[a] != 1) fits = false;
        if (b[a] > 1 && extent[a] / b[a] < std::max<std::size_t>(1, min_thickness)) fits = false;
        largest[a] = (extent[a] + b[a] - 1) / b[a];
      }
      if (!fits) continue;
      const std::size_t surface = largest[0] * largest[1] + largest[1] * largest[2] + largest[0] * largest[2];
      // Larger extents along x and y rank first: negate through the maximum.
      const std::tuple<std::size_t, std::size_t, std::size_t> score{surface, ~largest[0], ~largest[1]};
      if (!best || score < best_score) {
        best = b;
        best_score = score;
      }
    }
  }
  if (!best)
    throw InvalidArgument(where, "count",
                          std::to_string(count) + " blocks do not fit a grid of " + text(extent) +
                              " cells with blocks at least " + std::to_string(min_thickness) + " cells thick");
  return *best;
}

Decomposition::Decomposition(const Extent3& extent, std::size_t dims, std::size_t count, const GridOptions& options)
    : extent_(extent), dims_(dims), periodic_(options.periodic), row_align_(options.row_align), depth_(options.halo) {
  if (dims < 1 || dims > 3) throw InvalidArgument(where_grid, "dims", "must be 1, 2 or 3, not " + std::to_string(dims));
  for (std::size_t a = 0; a < 3; ++a) {
    if (extent[a] == 0) throw InvalidArgument(where_grid, "extent", "the grid " + text(extent) + " is empty");
    if (a >= dims && extent[a] != 1)
      throw InvalidArgument(where_grid, "extent",
                            "a " + std::to_string(dims) + "D grid has extent 1 beyond its axes, not " + text(extent));
    if (a >= dims && periodic_[a])
      throw InvalidArgument(where_grid, "options.periodic", "axis " + std::to_string(a) + " is not an axis of the grid");
  }
  if (options.halo == 0) throw InvalidArgument(where_grid, "options.halo", "the halo depth must be at least 1");
  if (options.row_align == 0 || options.row_align > 4096)
    throw InvalidArgument(where_grid, "options.row_align", "must be 1 to 4096 cells, not " + std::to_string(options.row_align));
  for (std::size_t a = 0; a < 3; ++a) halo_[a] = a < dims && options.ghosts[a] ? options.halo : 0;

  const bool given = options.blocks != Extent3{0, 0, 0};
  if (given) {
    blocks_ = options.blocks;
    if (blocks_[0] * blocks_[1] * blocks_[2] != count)
      throw InvalidArgument(where_grid, "options.blocks",
                            "the process grid " + text(blocks_) + " does not have " + std::to_string(count) + " blocks");
    for (std::size_t a = 0; a < 3; ++a)
      if (blocks_[a] == 0 || (a >= dims && blocks_[a] != 1))
        throw InvalidArgument(where_grid, "options.blocks", "the process grid " + text(blocks_) + " does not fit a " +
                                                                std::to_string(dims) + "D grid");
    for (std::size_t a = 0; a < dims; ++a)
      if (blocks_[a] > 1 && halo_[a] == 0)
        throw InvalidArgument(where_grid, "options.blocks",
                              "the process grid " + text(blocks_) + " splits axis " + std::to_string(a) +
                                  ", which keeps no ghost layers (options.ghosts)");
  } else {
    blocks_ = choose_process_grid(count, extent, dims, options.halo, options.ghosts);
  }
  // A ghost region is filled from the next block only: every block of an axis that exchanges
  // must be at least as thick as the halo.
  for (std::size_t a = 0; a < dims; ++a) {
    const bool exchanges = halo_[a] > 0 && (blocks_[a] > 1 || periodic_[a]);
    if (exchanges && extent[a] / blocks_[a] < options.halo)
      throw InvalidArgument(where_grid, "options.halo",
                            "blocks of " + std::to_string(extent[a] / blocks_[a]) + " cells along axis " +
                                std::to_string(a) + " are thinner than the halo depth " + std::to_string(options.halo));
  }
}

Extent3 Decomposition::coords(std::size_t pos) const {
  if (pos >= size()) throw InvalidArgument("cush::Decomposition::coords", "pos", std::to_string(pos) + " is out of range");
  return {pos % blocks_[0], (pos / blocks_[0]) % blocks_[1], pos / (blocks_[0] * blocks_[1])};
}

std::size_t Decomposition::block_at(const Extent3& c) const {
  for (std::size_t a = 0; a < 3; ++a)
    if (c[a] >= blocks_[a])
      throw InvalidArgument("cush::Decomposition::block_at", "coords", text(c) + " is outside the process grid " + text(blocks_));
  return c[0] + blocks_[0] * (c[1] + blocks_[1] * c[2]);
}

Box Decomposition::owned(std::size_t pos) const {
  const Extent3 c = coords(pos);
  Box b;
  for (std::size_t a = 0; a < 3; ++a) {
    b.lo[a] = static_cast<std::ptrdiff_t>(part_start(extent_[a], blocks_[a], c[a]));
    b.size[a] = part_size(extent_[a], blocks_[a], c[a]);
  }
  return b;
}

Extent3 Decomposition::allocated(std::size_t pos) const {
  const Box o = owned(pos);
  const std::size_t pitch = (row_cells(pos) + row_align_ - 1) / row_align_ * row_align_;
  return {pitch, o.size[1] + 2 * halo_[1], o.size[2] + 2 * halo_[2]};
}

std::size_t Decomposition::row_cells(std::size_t pos) const { return owned(pos).size[0] + 2 * halo_[0]; }

std::size_t Decomposition::allocated_cells(std::size_t pos) const {
  const Extent3 e = allocated(pos);
  return e[0] * e[1] * e[2];
}

std::size_t Decomposition::index(std::size_t pos, const std::array<std::ptrdiff_t, 3>& p) const {
  const Extent3 e = allocated(pos);
  const Extent3 used{row_cells(pos), e[1], e[2]};  // the padding holds no cell
  std::array<std::size_t, 3> q{};
  for (std::size_t a = 0; a < 3; ++a) {
    const std::ptrdiff_t shifted = p[a] + static_cast<std::ptrdiff_t>(halo_[a]);
    if (shifted < 0 || shifted >= static_cast<std::ptrdiff_t>(used[a]))
      throw InvalidArgument("cush::Decomposition::index", "p", "the cell lies outside the block's buffer");
    q[a] = static_cast<std::size_t>(shifted);
  }
  return q[0] + e[0] * (q[1] + e[1] * q[2]);
}

std::optional<std::size_t> Decomposition::neighbor(std::size_t pos, std::size_t axis, int dir) const {
  if (axis > 2 || (dir != -1 && dir != 1))
    throw InvalidArgument("cush::Decomposition::neighbor", "axis/dir", "axis must be 0-2 and dir -1 or +1");
  Extent3 c = coords(pos);
  if (axis >= dims_ || halo_[axis] == 0) return std::nullopt;
  const std::size_t n = blocks_[axis];
  if (dir < 0) {
    if (c[axis] == 0 && !periodic_[axis]) return std::nullopt;
    c[axis] = (c[axis] + n - 1) % n;
  } else {
    if (c[axis] + 1 == n && !periodic_[axis]) return std::nullopt;
    c[axis] = (c[axis] + 1) % n;
  }
  return block_at(c);
}

bool Decomposition::exchanged_in_place(std::size_t axis) const {
  if (axis > 2) throw InvalidArgument("cush::Decomposition::exchanged_in_place", "axis", "must be 0-2");
  for (std::size_t a = 0; a <= axis; ++a)
    if (blocks_[a] > 1) return false;
  return true;
}

Box Decomposition::interior(std::size_t pos, std::size_t radius) const {
  if (radius > depth_)
    throw InvalidArgument("cush::Decomposition::interior", "radius",
                          "a stencil of radius " + std::to_string(radius) + " needs more than the " +
                              std::to_string(depth_) + " ghost layers");
  const Box o = owned(pos);
  Box in;
  for (std::size_t a = 0; a < 3; ++a) {
    const bool later = !exchanged_in_place(a);  // ghosts written while the interior is updated
    const std::size_t low = later && neighbor(pos, a, -1) ? radius : 0;
    const std::size_t high = later && neighbor(pos, a, +1) ? radius : 0;
    in.lo[a] = static_cast<std::ptrdiff_t>(std::min(low, o.size[a]));
    in.size[a] = o.size[a] > low + high ? o.size[a] - low - high : 0;
  }
  if (in.empty()) in.size = {0, 0, 0};
  return in;
}

Box Decomposition::grown(std::size_t pos, std::size_t layers) const {
  if (layers > depth_)
    throw InvalidArgument("cush::Decomposition::grown", "layers",
                          std::to_string(layers) + " is more than the " + std::to_string(depth_) + " ghost layers");
  const Box o = owned(pos);
  Box out;
  for (std::size_t a = 0; a < 3; ++a) {
    const std::size_t low = neighbor(pos, a, -1) ? layers : 0;
    const std::size_t high = neighbor(pos, a, +1) ? layers : 0;
    out.lo[a] = -static_cast<std::ptrdiff_t>(low);
    out.size[a] = o.size[a] + low + high;
  }
  return out;
}

std::vector<Box> Decomposition::boundary(std::size_t pos, std::size_t radius) const {
  const Box o = owned(pos);
  const Box in = interior(pos, radius);
  std::vector<Box> out;
  const auto add = [&](Box b) {
    if (!b.empty()) out.push_back(b);
  };
  if (in.empty()) {
    add(Box{{0, 0, 0}, o.size});
    return out;
  }
  const auto end = [](const Box& b, std::size_t a) { return b.lo[a] + static_cast<std::ptrdiff_t>(b.size[a]); };
  const auto n = [&](std::size_t a) { return static_cast<std::ptrdiff_t>(o.size[a]); };
  // z slabs over the whole x-y extent.
  add(Box{{0, 0, 0}, {o.size[0], o.size[1], static_cast<std::size_t>(in.lo[2])}});
  add(Box{{0, 0, end(in, 2)}, {o.size[0], o.size[1], static_cast<std::size_t>(n(2) - end(in, 2))}});
  // y slabs over the whole x extent, within the interior's z range.
  add(Box{{0, 0, in.lo[2]}, {o.size[0], static_cast<std::size_t>(in.lo[1]), in.size[2]}});
  add(Box{{0, end(in, 1), in.lo[2]}, {o.size[0], static_cast<std::size_t>(n(1) - end(in, 1)), in.size[2]}});
  // x slabs within the interior's y and z ranges.
  add(Box{{0, in.lo[1], in.lo[2]}, {static_cast<std::size_t>(in.lo[0]), in.size[1], in.size[2]}});
  add(Box{{end(in, 0), in.lo[1], in.lo[2]}, {static_cast<std::size_t>(n(0) - end(in, 0)), in.size[1], in.size[2]}});
  return out;
}

}  // namespace cush
