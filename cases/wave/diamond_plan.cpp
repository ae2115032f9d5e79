// cush_wave_diamond_plan: what DiamondTorre's schedule (diamond.hpp) asks of a GPU kernel for an
// n^2 plane of columns, diamond radius R and T steps a sweep: towers, stages (towers a GPU may run
// at once, stage after stage), and the traffic per update of the sweep (FP64, both levels a column
// node: 16 B a move). Host only; the sweep's block carries T ghost columns a side.
//
//   usage: cush_wave_diamond_plan <n> <R> <T>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "diamond.hpp"

namespace {

long positive(const char* text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1) throw std::invalid_argument(std::string(what) + ": a whole number, 1 or more");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--help") {
    std::printf("usage: cush_wave_diamond_plan <n> <R> <T>\n");
    return 0;
  }
  try {
    if (argc != 4) throw std::invalid_argument("three arguments: n, R and T");
    const auto n = static_cast<std::size_t>(positive(argv[1], "n"));
    const int r = static_cast<int>(positive(argv[2], "R"));
    const auto t = static_cast<std::size_t>(positive(argv[3], "T"));
    if (n < 3 || n > 4096 || r > 16 || t > 256) throw std::invalid_argument("n 3 .. 4096, R up to 16, T up to 256");
    const std::size_t side = n + 2 * t;
    const std::vector<std::vector<cases::wave::TowerBase>> stages = cases::wave::diamond_stages(side, side, r, t);
    std::size_t towers = 0, widest = 0, narrowest = static_cast<std::size_t>(-1);
    for (const auto& s : stages) {
      towers += s.size();
      widest = std::max(widest, s.size());
      narrowest = std::min(narrowest, s.size());
    }
    // The traffic of the sweep, on a block of 3 z nodes (the counts are per column).
    std::vector<double> even(side * side * 3, 0.0), odd(side * side * 3, 0.0);
    const auto order = cases::wave::diamond_towers(side, side, r, t);
    const cases::wave::DiamondTraffic traffic = cases::wave::diamond_sweep_host(0.25, side, side, 3, r, t, order, even, odd);
    std::printf("plane %zu^2 (+ %zu ghost columns a side), diamond radius %d (%d columns), %zu steps a sweep\n", n, t, r,
                2 * r * r + 2 * r + 1, t);
    std::printf("towers %zu in %zu stages: %.1f a stage on average, %zu .. %zu\n", towers, stages.size(),
                static_cast<double>(towers) / static_cast<double>(stages.size()), narrowest, widest);
    std::printf("column updates %zu, loads %zu, stores %zu: %.2f B an update (FP64, 16 B a move); one step: 24 B\n",
                traffic.updates, traffic.loads, traffic.stores,
                16.0 * static_cast<double>(traffic.loads + traffic.stores) / static_cast<double>(traffic.updates));
    std::printf("updates useful to the plane: %.3f of those made (the rest are the ghosts')\n",
                static_cast<double>(n * n * t) / static_cast<double>(traffic.updates));
    return traffic.broken == 0 ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cush_wave_diamond_plan: %s\nusage: cush_wave_diamond_plan <n> <R> <T>\n", e.what());
    return 2;
  }
}
