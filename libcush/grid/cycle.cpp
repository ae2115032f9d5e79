// The program of a multi-step cycle (cush/cycle.hpp): which boxes each block updates, between
// which exchanges and swaps.

#include "cush/cycle.hpp"

#include <algorithm>
#include <string>

#include "cush/error.hpp"

namespace cush {

namespace {

constexpr const char* where = "cush::cycle_program";

CycleStep action(CycleStep::Kind kind) {
  CycleStep s;
  s.kind = kind;
  return s;
}

// One update of every block: boxes_of(pos) -> its boxes (empty ones dropped).
template <class F>
CycleStep update(const Decomposition& grid, std::size_t substeps, F&& boxes_of) {
  CycleStep s = action(CycleStep::Kind::update);
  s.substeps = substeps;
  for (std::size_t pos = 0; pos < grid.size(); ++pos) {
    std::vector<Box> boxes = boxes_of(pos);
    std::erase_if(boxes, [](const Box& b) { return b.empty(); });
    s.boxes.push_back(std::move(boxes));
  }
  return s;
}

}  // namespace

std::vector<CycleStep> cycle_program(const Decomposition& grid, std::size_t steps, const CycleOptions& o) {
  if (o.radius == 0) throw InvalidArgument(where, "options", "a stencil's radius must be at least 1");
  const std::size_t most = grid.depth() / o.radius;
  if (most == 0)
    throw InvalidArgument(where, "options",
                          "a stencil of radius " + std::to_string(o.radius) + " needs more than the grid's " +
                              std::to_string(grid.depth()) + " ghost layers");
  const std::size_t length = o.length == 0 ? most : o.length;
  if (length > most)
    throw InvalidArgument(where, "options",
                          std::to_string(length) + " steps of radius " + std::to_string(o.radius) + " need " +
                              std::to_string(length * o.radius) + " ghost layers, the grid has " +
                              std::to_string(grid.depth()));
  if (o.overlap && !o.fused && length > 1)
    throw InvalidArgument(where, "options",
                          "an overlapped cycle of " + std::to_string(length) +
                              " steps must be fused (unfused substeps read the ghosts the exchange fills)");
  std::vector<CycleStep> program;
  for (std::size_t done = 0; done < steps;) {
    const std::size_t l = std::min(length, steps - done);
    const std::size_t reach = l * o.radius;
    if (o.overlap) {
      program.push_back(action(CycleStep::Kind::exchange_start));
      program.push_back(update(grid, l, [&](std::size_t pos) { return std::vector<Box>{grid.interior(pos, reach)}; }));
      program.push_back(action(CycleStep::Kind::exchange_finish));
      program.push_back(update(grid, l, [&](std::size_t pos) { return grid.boundary(pos, reach); }));
      program.push_back(action(CycleStep::Kind::swap));
    } else if (o.fused) {
      program.push_back(action(CycleStep::Kind::exchange));
      program.push_back(update(grid, l, [&](std::size_t pos) { return std::vector<Box>{grid.grown(pos, 0)}; }));
      program.push_back(action(CycleStep::Kind::swap));
    } else {
      program.push_back(action(CycleStep::Kind::exchange));
      for (std::size_t s = 0; s < l; ++s) {
        const std::size_t layers = (l - 1 - s) * o.radius;
        program.push_back(update(grid, 1, [&](std::size_t pos) { return std::vector<Box>{grid.grown(pos, layers)}; }));
        program.push_back(action(CycleStep::Kind::swap));
      }
    }
    done += l;
  }
  return program;
}

}  // namespace cush
