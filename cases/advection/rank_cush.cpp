// Case "advection", cush across processes: multi_cush.cpp with one process per GPU. The fields are
// cush::RankField over the group's GPUs; the schedules are the same code.

#include <algorithm>
#include <stdexcept>

#include "kernels.hpp"
#include "ranks.hpp"

namespace cases {
namespace advection {

namespace {
cush::GridOptions grid_options(Options o, std::size_t gpus) {
  if (o.depth < 1 || (o.depth > 1 && o.schedule != Schedule::bulk))
    throw std::invalid_argument("cases::advection::RankCush: deep halos need depth >= 1 and Schedule::bulk");
  cush::GridOptions g;
  g.periodic = {true, true, true};
  g.halo = o.depth;
  g.row_align = kRowAlign;
  g.blocks = {1, 1, gpus};
  return g;
}

// to = the stencil on from, over the boxes region(block) grown by `grow` cells.
template <class Region>
void update(const cush::RankField<double>& from, const cush::RankField<double>& to, const Coefficients& c,
            std::size_t grow, Region region) {
  from.for_each([&](cush::Block<double> b) {
    for (const cush::Box& box : region(b))
      launch_stencil(b.data(), to.block(b.pos()).data(), stored_box(b, box, grow), c, b.stream());
  });
}
}  // namespace

RankCush::RankCush(const cush::ProcessGroup& group, Grid g, const std::array<double, 27>& a, Options options,
                   cush::RankTransport transport)
    : a_(a),
      options_(options),
      u_(group, {g.nx, g.ny, g.nz}, 3, grid_options(options, group.devices().size()), 1, transport),
      v_(cush::RankField<double>::alike(u_)) {}

void RankCush::upload(const double* in) { current().scatter(in, 0); }

void RankCush::run(std::size_t steps) {
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

void RankCush::wait() { u_.wait(); }

void RankCush::download(double* out) {
  current().gather(out, 0);
  current().wait();
}

}  // namespace advection
}  // namespace cases
