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

namespace {

constexpr double kappa = 0.2;  // diffusion number: stable below 0.25

// One thread per cell of the rows y0 + blockIdx.y, from x0 on, `width` cells wide (local
// coordinates of block `in`); ghosts are read where a neighbour lies beyond the owned cells.
__global__ void diffuse(cush::Block<double> in, double* out, std::ptrdiff_t x0, std::ptrdiff_t y0, std::ptrdiff_t width) {
  const std::ptrdiff_t x = x0 + static_cast<std::ptrdiff_t>(blockIdx.x * blockDim.x + threadIdx.x);
  const std::ptrdiff_t y = y0 + static_cast<std::ptrdiff_t>(blockIdx.y);
  if (x >= x0 + width) return;
  const double* u = in.data();
  const double c = u[in.index(x, y, 0)];
  const double around = u[in.index(x - 1, y, 0)] + u[in.index(x + 1, y, 0)] + u[in.index(x, y - 1, 0)] +
                        u[in.index(x, y + 1, 0)];
  out[in.index(x, y, 0)] = c + kappa * (around - 4.0 * c);
}

// The stencil over `box` (local coordinates) of block `in`, into the same cells of `out`.
void step(const cush::Block<double>& in, const cush::Block<double>& out, const cush::Box& box) {
  if (box.empty()) return;
  const dim3 grid(static_cast<unsigned>((box.size[0] + 127) / 128), static_cast<unsigned>(box.size[1]));
  diffuse<<<grid, 128, 0, in.stream()>>>(in, out.data(), box.lo[0], box.lo[1],
                                          static_cast<std::ptrdiff_t>(box.size[0]));
}

std::vector<double> host_steps(std::vector<double> u, std::size_t n, std::size_t steps) {
  std::vector<double> v(u.size());
  const auto at = [n](std::size_t x, std::size_t y) { return (y % n) * n + x % n; };
  for (std::size_t s = 0; s < steps; ++s) {
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        const double c = u[at(x, y)];
        const double around = u[at(x + n - 1, y)] + u[at(x + 1, y)] + u[at(x, y + n - 1)] + u[at(x, y + 1)];
        v[at(x, y)] = c + kappa * (around - 4.0 * c);
      }
    std::swap(u, v);
  }
  return u;
}

}  // namespace

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
