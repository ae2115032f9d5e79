// Case "lbm", multi-GPU cush: the lattice is a cush::Field of 19 components (one per
// population) on a grid split along z with ghost layers along z only; its exchange moves only
// the populations that cross each face (cush::HaloComponents) and overlaps the update of each
// slab's interior (Field::exchange_overlapped).

#include <cuda_fp16.h>

#include <optional>
#include <utility>
#include <variant>

#include "cush/field.hpp"
#include "cush_halo.hpp"
#include "lbm.hpp"

namespace cases {
namespace lbm {

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

namespace {

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
  cush::Field<T> a;
  std::optional<cush::Field<T>> b;  // A-B pull's second lattice
  std::size_t steps = 0;
  cush::HaloComponents halo[3] = {esoteric_halo(0), esoteric_halo(1), ab_halo()};

  Lattice(const Duct& d, const Devices& gpus, Options o)
      : duct(d), options(o), a(cush::DeviceSet(gpus.cush), {d.nx, d.ny, d.nz}, 3, lattice_options(), kQ) {
    if (o.pattern == Pattern::ab) b.emplace(cush::Field<T>::alike(a));
    for (cush::Field<T>* f : {&a, b ? &*b : nullptr})
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
    auto out = cush::Field<float>::alike(a, 4);
    const int parity = static_cast<int>((steps + 1) % 2);
    a.for_each([&](const cush::Block<T>& blk) {
      launch_moments(options.pattern, slab(blk, duct), parity, options.storage, physics(duct),
                     slab(out.block(blk.pos()), duct), blk.stream());
    });
    std::vector<float> all(4 * duct.cells());
    out.gather(all.data());
    out.wait();
    const auto part = [&](std::size_t k) {
      return std::vector<float>(all.begin() + k * duct.cells(), all.begin() + (k + 1) * duct.cells());
    };
    return Moments{part(0), part(1), part(2), part(3)};
  }
};

}  // namespace

struct MultiCush::State {
  std::variant<Lattice<float>, Lattice<__half>> lattice;
};

namespace {
std::variant<Lattice<float>, Lattice<__half>> make(const Duct& duct, const Devices& gpus, Options options) {
  check(duct);
  if (options.storage == Storage::fp32) return std::variant<Lattice<float>, Lattice<__half>>(std::in_place_index<0>, duct, gpus, options);
  return std::variant<Lattice<float>, Lattice<__half>>(std::in_place_index<1>, duct, gpus, options);
}
}  // namespace

MultiCush::MultiCush(const Duct& duct, const Devices& gpus, Options options)
    : s_(std::make_unique<State>(State{make(duct, gpus, options)})) {}
MultiCush::~MultiCush() = default;
MultiCush::MultiCush(MultiCush&&) noexcept = default;

void MultiCush::run(std::size_t steps) {
  std::visit([&](auto& l) { for (std::size_t s = 0; s < steps; ++s) l.step(); }, s_->lattice);
}

void MultiCush::wait() {
  std::visit([](auto& l) { l.a.wait(); }, s_->lattice);
}

Moments MultiCush::moments() {
  return std::visit([](auto& l) { return l.moments(); }, s_->lattice);
}

}  // namespace lbm
}  // namespace cases
