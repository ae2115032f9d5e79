// Case "rbffd", multi-GPU cush: the single-GPU step on a cush::GraphDecomposition of A's pattern,
// each stage input a cush::GraphField whose exchange fills the ghosts; overlapped, the interior
// rows run while it does; split, the boundary rows' owned-column entries too.

#include <stdexcept>

#include "rbffd.hpp"

namespace cases {
namespace rbffd {

namespace {
cush::GraphDecomposition slabs(const Problem& p, const Devices& gpus) {
  if (p.a == nullptr || !(p.dt > 0)) throw std::invalid_argument("cases::rbffd: a problem needs a matrix and dt > 0");
  const cush::DeviceSet devices(gpus.cush);
  const cush::Adjacency pattern{p.a->row_ptr, p.a->cols};
  return {pattern, cush::Layout::make(p.a->rows(), cush::Distribution::uniform(), devices.topology().devices())};
}
}  // namespace

MultiCush::MultiCush(const Problem& p, const Devices& gpus, Options options)
    : dt_(p.dt),
      options_(options),
      x0_(cush::DeviceSet(gpus.cush), slabs(p, gpus)),
      x1_(cush::GraphField<double>::alike(x0_)),
      u_(cush::GraphField<double>::alike(x0_)),
      acc_(cush::GraphField<double>::alike(x0_)) {
  x0_.set_transport(options.transport);
  x1_.set_transport(options.transport);
  const cush::Adjacency pattern{p.a->row_ptr, p.a->cols};
  const auto weights = [&](const cush::LocalAdjacency& rows) {
    std::vector<double> values;
    for (const std::int64_t e : rows.entries) values.push_back(p.a->values[static_cast<std::size_t>(e)]);
    return values;
  };
  x0_.for_each([&](const cush::GraphBlock<double>& b) {
    const cush::LocalAdjacency rows = x0_.decomposition().localize(b.pos(), pattern);
    const int gpu = cush::physical_device(b.device());
    a_.push_back(std::make_unique<DeviceEll>(ell_from_csr(rows.row_ptr, rows.cols, weights(rows)), gpu));
    if (options.schedule != Schedule::split) return;
    const cush::SplitAdjacency split = cush::split_columns(rows, b.part());
    const cush::Range edge = b.part().boundary();
    for (const auto& [half, to] : {std::pair{&split.owned, &own_}, std::pair{&split.ghosts, &ghosts_}})
      to->push_back(std::make_unique<DeviceEll>(
          ell_of_rows(half->row_ptr, half->cols, weights(*half), edge.offset, edge.count), gpu));
    partial_.emplace_back(b.device(), edge.count * sizeof(double));
  });
}

void MultiCush::upload(const double* u0) {
  const std::span<const double> host(u0, x0_.decomposition().nodes());
  u_.scatter(host);
  x(current_).scatter(host);
}

void MultiCush::stage(int stage) {
  const cush::GraphField<double>& next = x(1 - current_);
  const auto rows = [&](const cush::GraphBlock<double>& in, cush::Range r) {
    launch_stage(a_[in.pos()]->view(), r.offset, r.count, in.data(), next.block(in.pos()).data(), u_.block(in.pos()).data(),
                 acc_.block(in.pos()).data(), stage, dt_, in.stream());
  };
  if (options_.schedule == Schedule::overlap) {
    x(current_).exchange_overlapped(rows);
  } else if (options_.schedule == Schedule::split) {
    const auto partial = [&](const cush::GraphBlock<double>& in) { return static_cast<double*>(partial_[in.pos()].data()); };
    x(current_).exchange_overlapped_split(
        [&](const cush::GraphBlock<double>& in, cush::Range) {
          rows(in, in.part().interior());
          launch_partial(own_[in.pos()]->view(), in.data(), partial(in), in.stream());
        },
        [&](const cush::GraphBlock<double>& in, cush::Range r) {
          launch_finish_stage(ghosts_[in.pos()]->view(), r.offset, in.data(), partial(in), next.block(in.pos()).data(),
                              u_.block(in.pos()).data(), acc_.block(in.pos()).data(), stage, dt_, in.stream());
        });
  } else {
    x(current_).exchange();
    x(current_).for_each([&](const cush::GraphBlock<double>& in) { rows(in, in.part().owned()); });
  }
  current_ = 1 - current_;
}

void MultiCush::run(std::size_t steps) {
  const auto one_step = [&] {
    for (int s = 0; s < 4; ++s) stage(s);
  };
  if (options_.graph && !step_) step_.emplace(x0_.streams(), one_step);
  for (std::size_t s = 0; s < steps; ++s) options_.graph ? step_->launch() : one_step();
}

void MultiCush::exchange() { x(current_).exchange(); }

void MultiCush::wait() { u_.wait(); }

void MultiCush::download(double* u) {
  u_.gather(std::span<double>(u, u_.decomposition().nodes()));
  u_.wait();
}

}  // namespace rbffd
}  // namespace cases
