#pragma once
// Case "lbm", multi-GPU cush: the field layout and the exchanges of multi_cush.cpp, for whoever
// needs the same exchange without the steps (bench_lbm.cpp times the exchange alone, to state the
// share of it that the overlapped step hides). Defined in multi_cush.cpp.

#include "cush/field.hpp"
#include "kernels.hpp"

namespace cases {
namespace lbm {

/// Walls on x and y, periodic along z, ghost layers along z only, rows aligned as kRowAlign.
cush::GridOptions lattice_options();

/// What the exchange before a step moves: A-B pull, the populations that stream across each face;
/// esoteric pull, what the step of this parity (the one just done) left for the neighbours.
cush::HaloComponents ab_halo();
cush::HaloComponents esoteric_halo(int parity);

}  // namespace lbm
}  // namespace cases
