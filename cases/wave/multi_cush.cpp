// Case "wave", multi-GPU cush: the two levels as two cush::Fields on a periodic grid split along
// z, stepped by cush::advance: an exchange of the current level's `radius` ghost layers per step,
// bulk or overlapped, and the step written over the older field's cells (which the update reads
// only at the cells it writes), after which the two swap roles.

#include "cush/cycle.hpp"
#include "wave.hpp"

namespace cases {
namespace wave {

namespace {
cush::GridOptions grid_options(const Leapfrog& l, int gpus) {
  cush::GridOptions g;
  g.periodic = {true, true, true};
  g.halo = static_cast<std::size_t>(l.radius);
  g.row_align = kRowAlign;
  g.blocks = {1, 1, static_cast<std::size_t>(gpus)};
  return g;
}
}  // namespace

MultiCush::MultiCush(Problem p, const Devices& gpus, Options options)
    : p_(p),
      l_(checked_leapfrog(p)),
      options_(options),
      a_(cush::DeviceSet(gpus.cush), {p.n, p.n, p.n}, 3, grid_options(l_, gpus.count())),
      b_(cush::Field<double>::alike(a_)) {}

void MultiCush::upload(const double* prev, const double* cur) {
  older().scatter(prev);
  current().scatter(cur);
}

void MultiCush::run(std::size_t steps) {
  const cush::CycleOptions cycle{.radius = static_cast<std::size_t>(l_.radius),
                                 .length = 1,
                                 .overlap = options_.schedule == Schedule::overlap};
  const cush::Field<double>& now = cush::advance(
      current(), older(), steps, cycle,
      [&](const cush::Block<double>& cur, const cush::Block<double>& old, const cush::Box& box, std::size_t) {
        launch_step(old.data(), cur.data(), old.data(), stored_box(cur, box), l_, cur.stream());
      });
  swapped_ = &now == &b_;
}

void MultiCush::wait() { a_.wait(); }

void MultiCush::download(double* prev, double* cur) {
  if (prev != nullptr) older().gather(prev);
  current().gather(cur);
  a_.wait();
}

}  // namespace wave
}  // namespace cases
