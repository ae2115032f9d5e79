#pragma once
// Case "wave": the skewed tiling (skewed.hpp) run as a GPU kernel would run it, plane by plane, on
// the host. Each tile marches the input planes p of its columns; at plane p its stage l computes
// level l at plane p - l r (the streaming kernel's pipeline, wave_steps.cuh). Tiles are blocks:
// at most `resident` at once, started in ticket order, and a tile runs plane p only once its
// -x, -y and -x-y neighbours have run plane p (the flag it spins on counts their planes). Which
// runnable tile goes next is the scheduler's choice: at random, or always the latest ticket (the
// far end of the wavefront as early as the wait lets it).
//
// The model checks every read of every plane: a cell not yet written, or written by a tile the
// reader may not read (skewed_reads_from), counts as broken and gives NaN. With the wait above,
// any schedule must give T steps of step_host bit for bit and never stall; with a looser wait
// (`slack` planes) the model must see broken reads (test_skewed_host.cpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "skewed.hpp"

namespace cases {
namespace wave {

/// How skewed_pipeline_host schedules the tiles.
struct SkewedSchedule {
  std::size_t resident = 1;  ///< tiles in flight at most (blocks resident on the GPU), >= 1
  bool latest_first = false;  ///< run the runnable tile of the latest ticket, else one at random
  std::uint64_t seed = 1;     ///< the random choice's seed
  long slack = 0;             ///< a tile runs plane p once its neighbours ran plane p - slack (0: the kernel's wait)
};

/// What the pipeline model saw.
struct SkewedPipelineReport {
  std::size_t updates = 0;  ///< cells updated (column planes, every level and tile)
  std::size_t broken = 0;   ///< cell updates with a broken read (their results are NaN)
  bool stalled = false;     ///< tiles were left and no resident tile could run
  std::size_t waits = 0;    ///< times a resident tile could not run its next plane
};

/// `steps` leapfrog steps of the periodic n^3 grid (x fastest) through the skewed tiling run
/// plane by plane as `schedule` says, the z ghosts T r deep like the x and y ghosts. `older`
/// and `current` hold u^{n-1} and u^n on entry, u^{n+T-1} and u^{n+T} after (NaN downstream of
/// a broken read, and where a stall left cells unwritten). Same arithmetic as step_host.
/// std::invalid_argument for a bad tiling (check_tiling), arrays that are not n^3, resident 0
/// or a negative slack.
SkewedPipelineReport skewed_pipeline_host(const SkewedTiling& t, double courant2, const SkewedSchedule& schedule,
                                          std::vector<double>& older, std::vector<double>& current);

}  // namespace wave
}  // namespace cases
