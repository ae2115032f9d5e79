// Multi-step cycles (cush/cycle.hpp): explicit heat diffusion on a periodic 2D grid split over
// every GPU, with a halo `depth` cells deep, so that one exchange serves `depth` steps of the
// 5-point stencil. cush::advance runs the cycles: after each exchange, step s of the cycle
// updates the owned cells and the depth - 1 - s ghost layers around them, so no step needs fresher
// ghosts. The kernel is field_step's, unchanged: advance hands it the boxes. The result is
// compared with the same steps on the host.
//
// Usage: cush_cycle_step [n=2048] [steps=20] [depth=4]

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cush/cush.hpp"
#include "cush/cycle.hpp"
#include "heat2d.cuh"

int main(int argc, char** argv) {
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2048;
    const std::size_t steps = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20;
    const std::size_t depth = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 4;
    cush::GridOptions options;
    options.periodic = {true, true, false};
    options.halo = depth;
    cush::Field<double> a(cush::DeviceSet::all(), cush::Extent3{n, n, 1}, 2, options);
    cush::Field<double> b = cush::Field<double>::alike(a);
    std::printf("cush cycle step: %zu x %zu cells on %zu GPU(s), halo %zu deep, %zu steps, %zu exchanges\n", n, n,
                a.devices().size(), depth, steps, (steps + depth - 1) / depth);

    std::vector<double> start(n * n);
    for (std::size_t i = 0; i < start.size(); ++i) start[i] = std::sin(0.001 * static_cast<double>(i % 7919));
    a.scatter(start.data());
    cush::Field<double>& u = cush::advance(a, b, steps, {.radius = 1, .length = depth},
        [](const cush::Block<double>& in, const cush::Block<double>& out, const cush::Box& box, std::size_t) {
          heat2d::step(in, out, box);  // one step (unfused cycles): on box, from in's cells around it
        });
    std::vector<double> result(n * n);
    u.gather(result.data());
    u.wait();

    const std::vector<double> want = heat2d::host_steps(start, n, steps);
    double worst = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(result[i] - want[i]));
    const bool ok = worst <= 1e-12;
    std::printf("  largest difference from the host: %.3g  %s\n", worst, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_cycle_step: %s\n", e.what());
    return 1;
  }
}
