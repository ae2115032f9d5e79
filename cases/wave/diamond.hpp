#pragma once
// Case "wave": DiamondTorre (seed 004), the schedule on the host. A sweep of T leapfrog steps at
// order 2 over a block of columns (x, y; every column holds all its z nodes) that carries T ghost
// layers on each side in x and y, filled at the start:
//
//   - Tiles: the x-y plane is tiled by diamonds D_R = {|dx| + |dy| <= R} (2R^2 + 2R + 1 columns),
//     centred on the lattice spanned by (R, R + 1) and (R + 1, -R).
//   - Towers: the tower of the tile centred at b updates, at its step s = 0 .. T - 1, the columns
//     of the diamond centred at b + (s, 0) from level s to s + 1: a prism leaning towards +x. At
//     each step the diamonds of all towers again tile the plane, so every column is updated once
//     per level, by one tower.
//   - Order: towers run in order of decreasing b_x (the seed's sweep "from NS - Nt down to 0").
//     A tower reads the columns on its +x side that towers run before it left behind.
//   - Storage: the seed's two levels per column, the new level written over the older one. A
//     column at level L holds L and L - 1, so a neighbour may be at level L or L + 1 when a column
//     goes from L to L + 1: the slack DiamondTorre needs, and all it may use.
//
// The host model below runs exactly this and checks it: a column whose update finds a neighbour
// at another level (or outside the block) gets NaN, which spreads. The columns near the block's
// edge are garbage after a sweep, as the ghosts of a fused kernel are; the owned columns must equal
// T steps of step_host bit for bit (test_diamond_host.cpp). The GPU kernel follows this schedule
// (diamond_kernel.hpp; README.md, "DiamondTorre").

#include <cstddef>
#include <span>
#include <vector>

namespace cases {
namespace wave {

/// A tile's centre in the block's (x, y) columns; may lie outside the block.
struct TowerBase {
  long x = 0;
  long y = 0;
};

/// The lattice point whose diamond of radius `radius` holds column (x, y); radius >= 1.
[[nodiscard]] TowerBase diamond_tile(long x, long y, int radius);

/// The towers a sweep of `steps` steps over an nx x ny block runs: every tile whose prism meets
/// the block, in sweep order (b_x decreasing; ties by b_y). std::invalid_argument for radius < 1,
/// steps < 1 or an empty block.
[[nodiscard]] std::vector<TowerBase> diamond_towers(std::size_t nx, std::size_t ny, int radius, std::size_t steps);

/// Columns moved and updated by a sweep's towers, for the kernel's traffic model.
struct DiamondTraffic {
  std::size_t updates = 0;  ///< column updates inside the block
  std::size_t loads = 0;    ///< columns a tower reads from memory: its base, then each column entering it
  std::size_t stores = 0;   ///< columns a tower writes back: each leaving it, then its top
  /// Updates that broke the schedule: the column, or a neighbour inside the block, at a level
  /// other than the one the update needs (0 for a valid order; their results are NaN).
  std::size_t broken = 0;
};

/// One sweep of the host model over a block of nx x ny columns of nz nodes (x fastest, then y,
/// then z, periodic in z), the towers run in `order`. The two levels live in buffers by parity:
/// `even` holds level 0 on entry (then levels 2, 4 ...), `odd` level -1 (then 1, 3 ...); afterwards
/// level `steps` is in the buffer of its parity and level `steps` - 1 in the other, wherever the
/// schedule was valid; elsewhere (the edges, or everywhere downstream of an order that breaks a
/// dependence) NaN. Same arithmetic as step_host at order 2. Returns the traffic.
/// std::invalid_argument for sizes that do not match, nz < 3, radius < 1 or steps < 1.
DiamondTraffic diamond_sweep_host(double courant2, std::size_t nx, std::size_t ny, std::size_t nz, int radius,
                                  std::size_t steps, std::span<const TowerBase> order, std::span<double> even,
                                  std::span<double> odd);

/// The towers of diamond_towers grouped into stages a GPU may run at once: a tower's stage is one
/// more than the greatest stage of the towers it depends on (those that write a column at a level
/// its updates read, or read a level its updates overwrite), 0 without any. No two towers of a
/// stage depend on each other; stages run one after the other.
[[nodiscard]] std::vector<std::vector<TowerBase>> diamond_stages(std::size_t nx, std::size_t ny, int radius,
                                                                 std::size_t steps);

/// How a GPU sweep runs a tower's column of nz nodes (diamond_tower.cuh): in `chunks` blocks (a
/// thread-block cluster where more than one) of `lanes` = nz / chunks threads, block b holding
/// nodes b lanes .. (b + 1) lanes - 1. `chunks` 0 chooses the fewest that divide nz into blocks
/// of at most max_lanes threads. std::invalid_argument if nz < 3, if `chunks` does not divide nz,
/// or if no split fits max_lanes threads in at most max_chunks blocks.
struct DiamondChunks {
  int chunks = 1, lanes = 0;
};
[[nodiscard]] DiamondChunks diamond_chunks(std::size_t nz, std::size_t chunks = 0, std::size_t max_lanes = 256,
                                           std::size_t max_chunks = 8);

/// How diamond_stages_sweep_host runs the towers of a stage, to stand in for a GPU running them
/// at once: each tower whole in turn (in the stage's order, or the reverse), or all of them a step
/// at a time. (A step at a time is ordinary stepping, right for any grouping; the two whole-tower
/// orders are what tells stages of independent towers from others.)
enum class DiamondInterleave { towers_in_turn, towers_in_turn_reversed, steps_together };

/// diamond_sweep_host over stages: stage after stage, the towers of each interleaved as `how` says.
DiamondTraffic diamond_stages_sweep_host(double courant2, std::size_t nx, std::size_t ny, std::size_t nz, int radius,
                                         std::size_t steps, std::span<const std::vector<TowerBase>> stages,
                                         DiamondInterleave how, std::span<double> even, std::span<double> odd);

/// `steps` leapfrog steps at order 2 of the periodic n^3 grid through one DiamondTorre sweep:
/// copies the grid into a block with `steps` ghost columns on each side in x and y, runs
/// diamond_sweep_host with diamond_towers' order and copies the owned columns back. Equal bit for
/// bit to `steps` calls of step_host (the levels swapped after each). Returns the sweep's traffic.
DiamondTraffic diamond_steps_host(double courant2, std::size_t n, int radius, std::size_t steps,
                                  std::vector<double>& older, std::vector<double>& current);

/// The host model's blocks are x fastest (node (x, y, z) at x + nx (y + ny z)), the GPU kernel's
/// z fastest (at z + nz (x + nx y), diamond_kernel.hpp): a block in the other layout.
/// std::invalid_argument unless `block` holds nx ny nz values.
[[nodiscard]] std::vector<double> z_fastest(std::span<const double> block, std::size_t nx, std::size_t ny, std::size_t nz);
[[nodiscard]] std::vector<double> x_fastest(std::span<const double> block, std::size_t nx, std::size_t ny, std::size_t nz);

/// Two blocks' levels (x fastest) held against each other: the nodes where either level's bits
/// differ (NaN against NaN counts as equal: the garbage at a block's edges), and the nodes more
/// than `margin` columns from the x-y edges where `got` is not finite.
struct BlockComparison {
  long differing = 0;
  long inside_not_finite = 0;
};
[[nodiscard]] BlockComparison compare_blocks(std::span<const double> got_even, std::span<const double> got_odd,
                                             std::span<const double> want_even, std::span<const double> want_odd,
                                             std::size_t nx, std::size_t ny, std::size_t nz, std::size_t margin);

}  // namespace wave
}  // namespace cases
