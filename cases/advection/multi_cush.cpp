// Case "advection", multi-GPU cush: two fields on a periodic grid split along z (cush::Field),
// stepped by cush::advance: bulk-synchronous or overlapped exchanges (the interior updated during
// the exchange, the boundary after it), deep halos (exchange every `depth` steps, updating ghost
// layers too in between), or fused cycles (one launch of T steps per exchange of T layers).

#include <stdexcept>

#include "advection.hpp"
#include "cush/cycle.hpp"
#include "kernels.hpp"

namespace cases {
namespace advection {

namespace {
cush::GridOptions grid_options(Options o, int gpus) {
  if (o.depth < 1 || (o.depth > 1 && o.schedule != Schedule::bulk))
    throw std::invalid_argument("cases::advection::MultiCush: deep halos need depth >= 1 and Schedule::bulk");
  if (checked_fused_steps(o.steps) > 1 && o.depth > 1)
    throw std::invalid_argument("cases::advection::MultiCush: fused steps take depth 1 (their ghost layers are the steps)");
  cush::GridOptions g;
  g.periodic = {true, true, true};
  g.halo = o.depth * o.steps;
  g.row_align = kRowAlign;
  g.blocks = {1, 1, static_cast<std::size_t>(gpus)};
  return g;
}
}  // namespace

MultiCush::MultiCush(Grid g, const std::array<double, 27>& a, const Devices& gpus, Options options)
    : g_(g),
      a_(checked_coefficients(a, options)),
      options_(options),
      u_(cush::DeviceSet(gpus.cush), {g.nx, g.ny, g.nz}, 3, grid_options(options, gpus.count())),
      v_(cush::Field<double>::alike(u_)) {}

void MultiCush::upload(const double* in) { current().scatter(in); }

void MultiCush::run(std::size_t steps) {
  const Coefficients c = kernel_coefficients(a_, options_.factorized);
  const cush::CycleOptions cycle{.radius = 1,
                                 .length = options_.depth * options_.steps,
                                 .fused = options_.steps > 1,
                                 .overlap = options_.schedule == Schedule::overlap};
  const cush::Field<double>& result = cush::advance(
      current(), next(), steps, cycle,
      [&](const cush::Block<double>& in, const cush::Block<double>& out, const cush::Box& box, std::size_t substeps) {
        launch_stencil_steps(in.data(), out.data(), stored_box(in, box), c, substeps, in.stream());
      });
  swapped_ = &result == &v_;
}

void MultiCush::wait() { u_.wait(); }

void MultiCush::download(double* out) {
  current().gather(out);
  current().wait();
}

}  // namespace advection
}  // namespace cases
