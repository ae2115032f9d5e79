// Case "advection", cush across processes: multi_cush.cpp with one process per GPU. The fields are
// cush::RankField over the group's GPUs; the schedules are the same code (cush::advance).

#include <stdexcept>

#include "cush/cycle.hpp"
#include "kernels.hpp"
#include "ranks.hpp"

namespace cases {
namespace advection {

namespace {
cush::GridOptions grid_options(Options o, std::size_t gpus) {
  if (o.depth < 1 || (o.depth > 1 && o.schedule != Schedule::bulk))
    throw std::invalid_argument("cases::advection::RankCush: deep halos need depth >= 1 and Schedule::bulk");
  if (checked_fused_steps(o.steps) > 1 && o.depth > 1)
    throw std::invalid_argument("cases::advection::RankCush: fused steps take depth 1 (their ghost layers are the steps)");
  cush::GridOptions g;
  g.periodic = {true, true, true};
  g.halo = o.depth * o.steps;
  g.row_align = kRowAlign;
  g.blocks = {1, 1, gpus};
  return g;
}
}  // namespace

RankCush::RankCush(const cush::ProcessGroup& group, Grid g, const std::array<double, 27>& a, Options options,
                   cush::RankTransport transport)
    : a_(checked_coefficients(a, options)),
      options_(options),
      u_(group, {g.nx, g.ny, g.nz}, 3, grid_options(options, group.devices().size()), 1, transport),
      v_(cush::RankField<double>::alike(u_)) {}

void RankCush::upload(const double* in) { current().scatter(in, 0); }

void RankCush::run(std::size_t steps) {
  const Coefficients c = kernel_coefficients(a_, options_.factorized);
  const cush::CycleOptions cycle{.radius = 1,
                                 .length = options_.depth * options_.steps,
                                 .fused = options_.steps > 1,
                                 .overlap = options_.schedule == Schedule::overlap};
  const cush::RankField<double>& result = cush::advance(
      current(), next(), steps, cycle,
      [&](const cush::Block<double>& in, const cush::Block<double>& out, const cush::Box& box, std::size_t substeps) {
        launch_stencil_steps(in.data(), out.data(), stored_box(in, box), c, substeps, in.stream());
      });
  swapped_ = &result == &v_;
}

void RankCush::wait() { u_.wait(); }

void RankCush::download(double* out) {
  current().gather(out, 0);
  current().wait();
}

}  // namespace advection
}  // namespace cases
