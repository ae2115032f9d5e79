// A time step on a Field with the halo exchange hidden behind interior work: explicit heat
// diffusion (the 5-point stencil) on a periodic 2D grid split over every GPU. While the
// exchange fills the ghosts, each GPU updates the cells that need none of them; then the
// boundary cells. Two fields made alike share the streams, so no other ordering is needed.
// The result after every step count is compared with the same steps on the host.
//
// Usage: cush_field_step [n=2048] [steps=20]

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "cush/cush.hpp"
#include "heat2d.cuh"

using heat2d::host_steps;
using heat2d::step;

int main(int argc, char** argv) {
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2048;
    const std::size_t steps = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20;
    const cush::DeviceSet gpus = cush::DeviceSet::all();
    cush::GridOptions options;
    options.periodic = {true, true, false};
    cush::Field<double> a(gpus, cush::Extent3{n, n, 1}, 2, options);
    cush::Field<double> b = cush::Field<double>::alike(a);
    const cush::Decomposition& grid = a.grid();
    std::printf("cush field step: %zu x %zu cells on %zu GPU(s), blocks %zu x %zu, %zu steps\n", n, n, gpus.size(),
                grid.blocks()[0], grid.blocks()[1], steps);

    std::vector<double> start(n * n);
    for (std::size_t i = 0; i < start.size(); ++i) start[i] = std::sin(0.001 * static_cast<double>(i % 7919));
    a.scatter(start.data());
    cush::Field<double>* u = &a;
    cush::Field<double>* v = &b;
    for (std::size_t s = 0; s < steps; ++s) {
      u->exchange_start();
      u->for_each([&](cush::Block<double> in) { step(in, v->block(in.pos()), grid.interior(in.pos(), 1)); });
      u->exchange_finish();
      u->for_each([&](cush::Block<double> in) {
        for (const cush::Box& box : grid.boundary(in.pos(), 1)) step(in, v->block(in.pos()), box);
      });
      std::swap(u, v);
    }
    std::vector<double> result(n * n);
    u->gather(result.data());
    u->wait();

    const std::vector<double> want = host_steps(start, n, steps);
    double worst = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(result[i] - want[i]));
    const bool ok = worst <= 1e-12;
    std::printf("  largest difference from the host: %.3g  %s\n", worst, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_field_step: %s\n", e.what());
    return 1;
  }
}
