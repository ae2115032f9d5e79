// Case "advection", multi-GPU cush: two fields on a periodic grid split along z (cush::Field),
// the halo exchange of cush, and three schedules: bulk-synchronous, overlapped (the interior
// updated during the exchange, the boundary after it), and deep halos (exchange every `depth`
// steps, updating ghost layers too in between).

#include <algorithm>
#include <stdexcept>

#include "advection.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

namespace {
cush::GridOptions grid_options(Options o, int gpus) {
  if (o.depth < 1 || (o.depth > 1 && o.schedule != Schedule::bulk))
    throw std::invalid_argument("cases::advection::MultiCush: deep halos need depth >= 1 and Schedule::bulk");
  cush::GridOptions g;
  g.periodic = {true, true, true};
  g.halo = o.depth;
  g.row_align = kRowAlign;
  g.blocks = {1, 1, static_cast<std::size_t>(gpus)};
  return g;
}

// to = the stencil on from, over the boxes region(block) grown by `grow` cells.
template <class Region>
void update(const cush::Field<double>& from, const cush::Field<double>& to, const Coefficients& c, std::size_t grow,
            Region region) {
  from.for_each([&](cush::Block<double> b) {
    for (const cush::Box& box : region(b))
      launch_stencil(b.data(), to.block(b.pos()).data(), stored_box(b, box, grow), c, b.stream());
  });
}
}  // namespace

MultiCush::MultiCush(Grid g, const std::array<double, 27>& a, const Devices& gpus, Options options)
    : g_(g),
      a_(a),
      options_(options),
      u_(cush::DeviceSet(gpus.cush), {g.nx, g.ny, g.nz}, 3, grid_options(options, gpus.count())),
      v_(cush::Field<double>::alike(u_)) {}

void MultiCush::upload(const double* in) { current().scatter(in); }

void MultiCush::run(std::size_t steps) {
  const Coefficients c = kernel_coefficients(a_);
  const cush::Decomposition& grid = u_.grid();
  auto owned = [](const cush::Block<double>& b) { return std::vector<cush::Box>{cush::Box{{0, 0, 0}, b.owned().size}}; };
  for (std::size_t s = 0; s < steps; s += options_.depth) {
    if (options_.schedule == Schedule::overlap) {
      current().exchange_start();
      update(current(), next(), c, 0, [&](const cush::Block<double>& b) { return std::vector<cush::Box>{grid.interior(b.pos(), 1)}; });
      current().exchange_finish();
      update(current(), next(), c, 0, [&](const cush::Block<double>& b) { return grid.boundary(b.pos(), 1); });
      swapped_ = !swapped_;
      continue;
    }
    current().exchange();
    const std::size_t cycle = std::min(options_.depth, steps - s);
    for (std::size_t r = 0; r < cycle; ++r) {
      update(current(), next(), c, cycle - 1 - r, owned);
      swapped_ = !swapped_;
    }
  }
}

void MultiCush::wait() { u_.wait(); }

void MultiCush::download(double* out) {
  current().gather(out);
  current().wait();
}

}  // namespace advection
}  // namespace cases
