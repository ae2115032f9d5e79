#pragma once
// Case "wave": the skewed (wavefront) tiling of T fused leapfrog steps, on the host: the schedule
// checked here first (README.md, "The skewed kernel worked out further"). The GPU kernel that
// follows it is a probe, bench/probes/wave_skewed_variant.cuh (README.md, "The skewed kernel on
// the GPU": right, but slower than the streaming kernel).
//
//   - Tiles of w x h columns (every column holds all its z nodes). Tile (i, j) stores at level T
//     the columns [i w, (i + 1) w) x [j h, (j + 1) h); its level l (1 <= l <= T) is the same
//     rectangle moved by (T - l) r towards +x and +y (r = order / 2), clipped to the columns that
//     level must have: [-(T - l) r, n + (T - l) r) on each axis, from the periodic ghosts T r deep.
//   - So the cells a level reads outside its own tile, the stencil's at the level below and the
//     older level at the cell, lie in the tiles at -x, -y and -x-y, and within 2 r columns of
//     their +x or +y edges: a tile publishes those strips per level, its neighbours read them.
//   - One more column and row of tiles (i or j = -1) computes the cells no tile's rectangle
//     covers near the low edges; it reads only its own cells and the input levels.
//   - Tickets in row-major order (x fastest): every tile a tile waits for holds a smaller ticket.
//
// The host model runs the tiles whole, one after another, and checks every read: a cell read
// from any tile but the reader and its -x, -y and -x-y neighbours, or not written yet, counts as
// broken and gives NaN, which spreads. Run in ticket order, the stored levels must equal T steps
// of step_host bit for bit (test_skewed_host.cpp). skewed_pipeline.hpp runs the same tiling plane
// by plane, as blocks waiting on their neighbours' flags would.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace cases {
namespace wave {

/// A skewed tiling of `steps` fused steps of the periodic n^3 grid at `order`, tiles w x h.
struct SkewedTiling {
  std::size_t n = 0;
  int order = 2;
  std::size_t steps = 1;
  std::size_t w = 0, h = 0;
};

/// Columns [x0, x1) x [y0, y1), in the grid's coordinates (negative and >= n in the ghosts).
struct ColumnRange {
  long x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};

/// A tile by its place: i, j from -1.
using SkewedTile = std::pair<long, long>;

/// std::invalid_argument unless n > order, steps >= 1, w and h >= max(1, 2 (steps - 1) r) (the
/// extra column and row of tiles must cover the cells the others' rectangles leave), and the
/// order is one of coefficients'.
void check_tiling(const SkewedTiling& t);

/// The columns tile (i, j) computes at `level` (1 .. steps), clipped as above (may be empty).
[[nodiscard]] ColumnRange skewed_footprint(const SkewedTiling& t, SkewedTile tile, std::size_t level);

/// Whether a tile may read what `writer` computed: itself, or its -x, -y or -x-y neighbour.
[[nodiscard]] bool skewed_reads_from(SkewedTile reader, SkewedTile writer);

/// The tiles in ticket order: j = -1 .. ceil(n / h) - 1, within it i = -1 .. ceil(n / w) - 1.
[[nodiscard]] std::vector<SkewedTile> skewed_tickets(const SkewedTiling& t);

/// What the host model saw.
struct SkewedReport {
  std::size_t updates = 0;  ///< cells updated, every level and tile
  std::size_t broken = 0;   ///< cell updates with a read that broke the schedule (their results are NaN)
  long edge_x = 0;          ///< the most columns from a writer's +x edge a neighbour read (2 r where T > 1)
  long edge_y = 0;          ///< the same from the +y edge
  std::size_t published = 0;  ///< the most distinct columns of one tile and level that others read
};

/// `steps` leapfrog steps of the periodic n^3 grid (x fastest) through the skewed tiling, the
/// tiles run whole in `order` (skewed_tickets for the schedule), the z ghosts T r deep like the
/// x and y ghosts. `older` and `current` hold
/// u^{n-1} and u^n on entry, u^{n+T-1} and u^{n+T} after, where the schedule held (NaN
/// downstream of a broken read). Same arithmetic as step_host. std::invalid_argument for a bad
/// tiling (check_tiling) or arrays that are not n^3.
SkewedReport skewed_steps_host(const SkewedTiling& t, double courant2, std::span<const SkewedTile> order,
                               std::vector<double>& older, std::vector<double>& current);

}  // namespace wave
}  // namespace cases
