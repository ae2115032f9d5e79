// Case "wave", multi-GPU cush: the two levels as two cush::Fields on a periodic grid split along
// z, stepped by cush::advance: an exchange of the current level's `radius` ghost layers per step,
// bulk or overlapped, and the step written over the older field's cells (which the update reads
// only at the cells it writes), after which the two swap roles. Fused (Options::steps = T > 1):
// both levels as the two components of one field, T radius ghost layers, and cush::advance's
// fused cycles from it into a field made alike: T steps a launch.

#include <cstring>
#include <vector>

#include "cush/cycle.hpp"
#include "wave.hpp"

namespace cases {
namespace wave {

namespace {
cush::GridOptions grid_options(const Leapfrog& l, std::size_t fused, int gpus) {
  cush::GridOptions g;
  g.periodic = {true, true, true};
  g.halo = fused * static_cast<std::size_t>(l.radius);
  g.row_align = kRowAlign;
  g.blocks = {1, 1, static_cast<std::size_t>(gpus)};
  return g;
}
}  // namespace

MultiCush::MultiCush(Problem p, const Devices& gpus, Options options)
    : p_(p),
      l_(checked_leapfrog(p)),
      options_(options),
      a_(cush::DeviceSet(gpus.cush), {p.n, p.n, p.n}, 3,
         grid_options(l_, checked_fused_steps(p.order, options.steps), gpus.count()), options.steps > 1 ? 2 : 1),
      b_(cush::Field<double>::alike(a_)) {}

void MultiCush::upload(const double* prev, const double* cur) {
  if (options_.steps == 1) {
    older().scatter(prev);
    current().scatter(cur);
    return;
  }
  std::vector<double> both(2 * p_.points());  // the components one after the other
  std::memcpy(both.data(), prev, p_.points() * sizeof(double));
  std::memcpy(both.data() + p_.points(), cur, p_.points() * sizeof(double));
  current().scatter(both.data());
  current().wait();
}

void MultiCush::run(std::size_t steps) {
  const auto radius = static_cast<std::size_t>(l_.radius);
  const bool overlap = options_.schedule == Schedule::overlap;
  if (options_.steps == 1) {
    const cush::Field<double>& now = cush::advance(
        current(), older(), steps, {.radius = radius, .length = 1, .overlap = overlap},
        [&](const cush::Block<double>& cur, const cush::Block<double>& old, const cush::Box& box, std::size_t) {
          launch_step(old.data(), cur.data(), old.data(), stored_box(cur, box), l_, cur.stream());
        });
    swapped_ = &now == &b_;
    return;
  }
  const cush::Field<double>& now = cush::advance(
      current(), older(), steps, {.radius = radius, .length = options_.steps, .fused = true, .overlap = overlap},
      [&](const cush::Block<double>& in, const cush::Block<double>& out, const cush::Box& box, std::size_t t) {
        launch_steps(WaveLevels{in.data(0), in.data(1), out.data(0), out.data(1)}, stored_box(in, box), l_, t,
                     in.stream());
      });
  swapped_ = &now == &b_;
}

void MultiCush::wait() { a_.wait(); }

void MultiCush::download(double* prev, double* cur) {
  if (options_.steps == 1) {
    if (prev != nullptr) older().gather(prev);
    current().gather(cur);
    a_.wait();
    return;
  }
  std::vector<double> both(2 * p_.points());
  current().gather(both.data());
  current().wait();
  if (prev != nullptr) std::memcpy(prev, both.data(), p_.points() * sizeof(double));
  std::memcpy(cur, both.data() + p_.points(), p_.points() * sizeof(double));
}

}  // namespace wave
}  // namespace cases
