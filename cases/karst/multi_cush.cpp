// Case "karst", multi-GPU cush: a plan over the members (any cush distribution), plans alike it
// for the forcing and observed curve (replicated: broadcast) and for the curves and misfits (the
// members' split, gathered); each GPU runs its segment of members with the shared kernels.

#include <optional>
#include <stdexcept>
#include <vector>

#include "cush/cush.hpp"
#include "ensemble.hpp"
#include "kernels.hpp"

namespace cases {
namespace karst {

namespace {

// The plans of runs with `count` members and `steps` steps, and each GPU's workspace.
struct Plans {
  Plans(const Setup& setup, const cush::DeviceSet& devices, const cush::Distribution& d, std::size_t count, std::size_t steps);
  std::size_t count, steps;
  cush::Plan<Groups> members;
  cush::Plan<double> forcing, observed, curves, misfits;
  std::vector<std::optional<Workspace>> work;  // by position in the device set
};

Plans::Plans(const Setup& setup, const cush::DeviceSet& devices, const cush::Distribution& d, std::size_t count_,
             std::size_t steps_)
    : count(count_),
      steps(steps_),
      members(devices, count, d),
      forcing(cush::Plan<double>::alike(members, 3 * steps, cush::Distribution::replicated())),
      observed(cush::Plan<double>::alike(members, steps, cush::Distribution::replicated())),
      curves(cush::Plan<double>::alike(members, count * steps, d.with_granularity(steps))),
      misfits(cush::Plan<double>::alike(members, count, d)),
      work(devices.size()) {
  members.for_each([&](cush::Segment<Groups> s) {
    if (curves.segment(s.pos()).size() != s.size() * steps)
      throw std::logic_error("cases::karst::MultiCush: the curves' split differs from the members'");
    work[s.pos()].emplace(cush::physical_device(s.device()), setup.model, setup.grid, s.size());
  });
}

}  // namespace

struct MultiCush::State {
  Setup setup;
  cush::DeviceSet devices;
  cush::Distribution distribution;
  std::optional<Plans> plans;
};

MultiCush::MultiCush(const Setup& setup, const Devices& gpus, cush::Distribution distribution)
    : s_(std::make_unique<State>(State{setup, cush::DeviceSet(gpus.cush), std::move(distribution), std::nullopt})) {
  check(setup.model, setup.grid, Forcing{}, {});
}

MultiCush::~MultiCush() = default;
MultiCush::MultiCush(MultiCush&&) noexcept = default;
MultiCush& MultiCush::operator=(MultiCush&&) noexcept = default;

Runs MultiCush::run(const Forcing& forcing, std::span<const Groups> members, std::span<const double> observed) {
  State& st = *s_;
  check_run("cases::karst::MultiCush", st.setup.model, st.setup.grid, forcing, members, observed);
  const std::size_t count = members.size(), steps = forcing.steps();
  Runs out;
  if (count == 0 || steps == 0) return out;
  if (!st.plans || st.plans->count != count || st.plans->steps != steps) {
    st.plans.reset();
    st.plans.emplace(st.setup, st.devices, st.distribution, count, steps);
  }
  Plans& p = *st.plans;
  const std::vector<double> packed = pack(forcing);
  p.members.scatter(members.data());
  p.forcing.broadcast(packed.data());
  if (!observed.empty()) p.observed.broadcast(observed.data());
  p.members.for_each([&](cush::Segment<Groups> m) {
    double* curves = p.curves.segment(m.pos()).data();
    launch_forward(st.setup.model, st.setup.grid, st.setup.outlet, forcing,
                   Batch{m.data(), p.forcing.segment(m.pos()).data(), curves, m.size()}, *p.work[m.pos()], m.stream(),
                   st.setup.path);
    if (!observed.empty())
      launch_misfits(curves, p.observed.segment(m.pos()).data(), m.size(), steps, p.misfits.segment(m.pos()).data(), m.stream());
  });
  out.curves.resize(count * steps);
  p.curves.gather(out.curves.data());
  if (!observed.empty()) {
    out.misfits.resize(count);
    p.misfits.gather(out.misfits.data());
  }
  p.members.wait();
  return out;
}

}  // namespace karst
}  // namespace cases
