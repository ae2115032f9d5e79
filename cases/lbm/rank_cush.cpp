// Case "lbm", cush across processes: multi_cush.cpp with one process per GPU. The lattice is a
// cush::RankField over the group's GPUs; the steps are the same code, and the moments are
// gathered to rank 0.

#include <cuda_fp16.h>

#include <optional>
#include <utility>
#include <variant>

#include "cush/rank_field.hpp"
#include "ranks.hpp"

namespace cases {
namespace lbm {

namespace {

cush::GridOptions lattice_options() {
  cush::GridOptions o;
  o.periodic = {false, false, true};
  o.ghosts = {false, false, true};  // walls on x and y: ghost layers along z only
  o.row_align = kRowAlign;
  return o;
}

// A-B pull: the populations that stream up fill the low ghost layer, those that stream down the
// high one. Esoteric pull: what the exchange after a step of parity p moves (kernels.hpp).
cush::HaloComponents ab_halo() { return cush::HaloComponents().fill(2, +1, kAbUp).fill(2, -1, kAbDown); }
cush::HaloComponents esoteric_halo(int parity) {
  const EsotericExchange e = esoteric_exchange(parity);
  return cush::HaloComponents()
      .fill(2, +1, e.fill_up)
      .fill(2, -1, e.fill_down)
      .write_back(2, +1, e.return_up)
      .write_back(2, -1, e.return_down);
}

template <class T>
Slab slab(const cush::Block<T>& b, const Duct& d) {
  return Slab{b.data(), b.component_stride(), b.pitch(), static_cast<int>(d.nx), static_cast<int>(d.ny),
              static_cast<int>(b.owned().size[2]), 1};
}

// The lattice(s) of one storage type T and the steps on them.
template <class T>
struct Lattice {
  Duct duct;
  Options options;
  cush::RankField<T> a;
  std::optional<cush::RankField<T>> b;  // A-B pull's second lattice
  std::size_t steps = 0;
  cush::HaloComponents halo[3] = {esoteric_halo(0), esoteric_halo(1), ab_halo()};

  Lattice(const cush::ProcessGroup& group, const Duct& d, Options o, cush::RankTransport transport)
      : duct(d), options(o), a(group, {d.nx, d.ny, d.nz}, 3, lattice_options(), kQ, transport) {
    if (o.pattern == Pattern::ab) b.emplace(cush::RankField<T>::alike(a));
    for (cush::RankField<T>* f : {&a, b ? &*b : nullptr})
      if (f)
        f->for_each([&](const cush::Block<T>& blk) {
          launch_rest(slab(blk, duct), o.storage, blk.stream());
          launch_perturb(slab(blk, duct), static_cast<int>(blk.owned().lo[2]), static_cast<int>(duct.nz), o.perturbation,
                         o.storage, blk.stream());
        });
  }

  // The exchange the next step needs: A-B fills the ghosts of the lattice it reads; esoteric
  // pull moves what the step before wrote (nothing before the first step: all at rest).
  const cush::HaloComponents* pending() const {
    if (options.pattern == Pattern::ab) return &halo[2];
    return steps == 0 ? nullptr : &halo[steps % 2];
  }

  void step() {
    const int parity = static_cast<int>((steps + 1) % 2);
    const Physics ph = physics(duct);
    const auto update = [&](const cush::Block<T>& blk, const cush::Box& box) {
      const int z0 = static_cast<int>(box.lo[2]), z1 = z0 + static_cast<int>(box.size[2]);
      if (b) launch_ab_step(slab(blk, duct), slab(b->block(blk.pos()), duct), z0, z1, options.storage, ph, blk.stream());
      else launch_esoteric_step(slab(blk, duct), z0, z1, parity, options.storage, ph, blk.stream());
    };
    const cush::HaloComponents* which = pending();
    if (which && options.overlap) {
      a.exchange_overlapped(*which, 1, update);
    } else {
      if (which) a.exchange(*which);
      a.for_each([&](const cush::Block<T>& blk) { update(blk, cush::Box{{0, 0, 0}, blk.owned().size}); });
    }
    if (b) std::swap(a, *b);
    ++steps;
  }

  Moments moments() {
    if (const cush::HaloComponents* which = pending()) a.exchange(*which);
    auto out = cush::RankField<float>::alike(a, 4);
    const int parity = static_cast<int>((steps + 1) % 2);
    a.for_each([&](const cush::Block<T>& blk) {
      launch_moments(options.pattern, slab(blk, duct), parity, options.storage, physics(duct),
                     slab(out.block(blk.pos()), duct), blk.stream());
    });
    std::vector<float> all(4 * duct.cells());
    out.gather(all.data(), 0);  // to rank 0; the others return no moments
    out.wait();
    if (a.group().rank() != 0) return Moments{};
    const auto part = [&](std::size_t k) {
      return std::vector<float>(all.begin() + k * duct.cells(), all.begin() + (k + 1) * duct.cells());
    };
    return Moments{part(0), part(1), part(2), part(3)};
  }
};

}  // namespace

struct RankCush::State {
  std::variant<Lattice<float>, Lattice<__half>> lattice;
};

namespace {
using Lattices = std::variant<Lattice<float>, Lattice<__half>>;
Lattices make(const cush::ProcessGroup& group, const Duct& duct, Options options, cush::RankTransport transport) {
  check(duct);
  if (options.storage == Storage::fp32) return Lattices(std::in_place_index<0>, group, duct, options, transport);
  return Lattices(std::in_place_index<1>, group, duct, options, transport);
}
}  // namespace

RankCush::RankCush(const cush::ProcessGroup& group, const Duct& duct, Options options, cush::RankTransport transport)
    : s_(std::make_unique<State>(State{make(group, duct, options, transport)})) {}
RankCush::~RankCush() = default;
RankCush::RankCush(RankCush&&) noexcept = default;

void RankCush::run(std::size_t steps) {
  std::visit([&](auto& l) { for (std::size_t s = 0; s < steps; ++s) l.step(); }, s_->lattice);
}

void RankCush::wait() {
  std::visit([](auto& l) { l.a.wait(); }, s_->lattice);
}

Moments RankCush::moments() {
  return std::visit([](auto& l) { return l.moments(); }, s_->lattice);
}

}  // namespace lbm
}  // namespace cases
