#pragma once
// Box copies of an exchange that may run as one kernel launch: consecutive steps on one stream
// that neither read nor write what another of them writes. A periodic field's ghosts filled on
// their own device (the low x ghosts from the high interior, the high from the low) are such
// steps: launched one by one, each waits for the launch before it, and on 4 x H200 the advection
// case's four ghost kernels per step and the gaps between them cost 16 µs more per step than raw
// CUDA's one kernel (docs/results/records/profiles_2026-11-27.md). Pure host code (tests/grid).

#include <cstddef>
#include <span>

#include "grid/exchange_program.hpp"
#include "grid/exchange_schedule.hpp"

namespace cush::detail {

/// The most box copies one launch takes (launch_box_copies).
inline constexpr std::size_t box_copy_max_batch = 4;

/// Whether box copies `a` and `b` may run together, in either order: neither writes a cell that
/// the other reads or writes. Boxes in different buffers never overlap; boxes in one buffer are
/// compared cell range by cell range along each axis (any other shape of the same buffer counts
/// as overlapping).
[[nodiscard]] bool steps_independent(const ExchangeStep& a, const ExchangeStep& b);

/// The end of the batch that starts at list[first] (a step): the instructions from `first` up to
/// the returned index are steps on the same stream, each a box copy (not contiguous), with the
/// same `throttled`, pairwise independent, at most `max` of them. first + 1 where list[first]
/// starts no batch of two (a record, a wait, a contiguous copy, or a step its next depends on).
[[nodiscard]] std::size_t batch_end(std::span<const Instruction> list, std::size_t first,
                                    std::size_t max = box_copy_max_batch);

}  // namespace cush::detail
