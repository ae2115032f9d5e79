#pragma once
/// @file cycle.hpp
/// @brief Multi-step cycles over a grid with deep halos: L steps of a stencil of radius r per
/// exchange, with halo depth >= L r (spec: docs/grid.md, "Multi-step cycles"). Pure host code:
/// the program of exchanges, updates and swaps that a cycle runs, for any field to execute.
///
/// Per cycle of L steps (the last cycle may be shorter):
/// - unfused: exchange(), then L updates, substep s on grown(pos, (L - 1 - s) r) with one step
///   each, the two fields swapped after each: the ghosts the exchange filled are consumed a
///   radius a step;
/// - fused: exchange(), then one update of L steps on the owned box, then one swap: the kernel
///   computes its own intermediate levels (on its box grown by (L - 1 - s) r, never past a
///   non-periodic edge: Decomposition::grown);
/// - fused and overlapped: exchange_start(), the L-step update on interior(pos, L r),
///   exchange_finish(), the L-step update on each box of boundary(pos, L r), one swap. Overlap
///   needs fused or L = 1.
/// Ghost cells beyond a non-periodic edge are the user's and stay as they are through a cycle.
///
/// advance() runs such a program on two fields made alike (or, unfused, on one field in place):
///
///     cush::Field<double>& result = cush::advance(a, b, steps, {.radius = 1, .length = 4},
///         [&](const cush::Block<double>& in, const cush::Block<double>& out, const cush::Box& box,
///             std::size_t substeps) { /* enqueue `substeps` steps on `box` of `out` from `in` */ });

#include <cstddef>
#include <utility>
#include <vector>

#include "cush/error.hpp"
#include "cush/grid.hpp"

namespace cush {

struct CycleOptions {
  /// The stencil's reach per step (>= 1).
  std::size_t radius = 1;
  /// Steps per exchange (L); 0: as many as the halo holds, depth / radius.
  std::size_t length = 0;
  /// One update computes all of a cycle's steps (a fused kernel), else one update per step.
  bool fused = false;
  /// exchange_start, the interior, exchange_finish, the boundary (fused, or length 1).
  bool overlap = false;
};

/// @brief One action of a cycle program (cycle_program).
struct CycleStep {
  enum class Kind {
    exchange,        ///< fill every ghost
    exchange_start,  ///< start filling them (Field::exchange_start)
    exchange_finish, ///< finish (Field::exchange_finish)
    update,          ///< per block, `substeps` steps on each of boxes[pos], from the current input into the output
    swap,            ///< the output becomes the next input
  };
  Kind kind = Kind::exchange;
  /// update: by block position, the boxes (local coordinates, disjoint, none empty) to compute.
  std::vector<std::vector<Box>> boxes;
  /// update: the steps each box advances (1 unfused; the cycle's length fused).
  std::size_t substeps = 0;
};

/// The program of `steps` steps on `grid` (in order). An update writes its boxes of the output
/// field from the input field's values on the boxes grown by substeps x radius. Throws
/// InvalidArgument for radius 0, radius x length beyond the grid's depth(), or overlap with
/// length > 1 unfused.
[[nodiscard]] std::vector<CycleStep> cycle_program(const Decomposition& grid, std::size_t steps,
                                                   const CycleOptions& options);

/// Runs `steps` steps as cycle_program(a.grid(), steps, options) lists them, on two fields made
/// alike (`a` holds the start): exchanges of the current input, swaps of the two roles, and for
/// an update, per block (its device current) and per box, update(in, out, box, substeps): enqueue
/// on in.stream() `substeps` steps of the stencil on `box` (local coordinates) of `out`, from
/// `in`'s values on the box grown by substeps x radius. Returns the field holding the result (`a`
/// or `b`). Nothing blocks the host. `Fields` is a Field<T>, or any type with grid(), exchange(),
/// exchange_start(), exchange_finish(), block(pos) and for_each(f) (the host tests' model).
/// InvalidArgument as cycle_program, or if `a` and `b` are one field.
template <class Fields, class Update>
Fields& advance(Fields& a, Fields& b, std::size_t steps, const CycleOptions& options, Update&& update) {
  if (&a == &b) throw InvalidArgument("cush::advance", "b", "must be another field than a (made alike)");
  Fields* in = &a;
  Fields* out = &b;
  for (const CycleStep& s : cycle_program(a.grid(), steps, options)) {
    switch (s.kind) {
      case CycleStep::Kind::exchange: in->exchange(); break;
      case CycleStep::Kind::exchange_start: in->exchange_start(); break;
      case CycleStep::Kind::exchange_finish: in->exchange_finish(); break;
      case CycleStep::Kind::update:
        in->for_each([&](const auto& block) {
          const auto target = out->block(block.pos());
          for (const Box& box : s.boxes[block.pos()]) update(block, target, box, s.substeps);
        });
        break;
      case CycleStep::Kind::swap: std::swap(in, out); break;
    }
  }
  return *in;
}

/// In place (a leapfrog keeping two levels as components and overwriting the older one by parity;
/// an esoteric-pull lattice Boltzmann step): the cycles of cycle_program(u.grid(), steps, options)
/// on one field, unfused and bulk only. Per update, per block (its device current) and box,
/// update(block, box, step) enqueues step number `step` (0 for the first step of this call) on
/// `box`, reading the values it needs on the box grown by the radius. InvalidArgument for fused
/// or overlapped options (an in-place update during an exchange would overwrite what it sends),
/// and as cycle_program.
template <class Fields, class Update>
void advance(Fields& u, std::size_t steps, const CycleOptions& options, Update&& update) {
  if (options.fused || options.overlap)
    throw InvalidArgument("cush::advance", "options", "a field updated in place runs unfused cycles, not overlapped");
  std::size_t step = 0;
  for (const CycleStep& s : cycle_program(u.grid(), steps, options)) {
    if (s.kind == CycleStep::Kind::exchange) {
      u.exchange();
    } else if (s.kind == CycleStep::Kind::update) {
      u.for_each([&](const auto& block) {
        for (const Box& box : s.boxes[block.pos()]) update(block, box, step);
      });
      ++step;
    }
  }
}

}  // namespace cush
