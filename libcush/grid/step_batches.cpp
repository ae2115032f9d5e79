#include "grid/step_batches.hpp"

namespace cush::detail {

namespace {

// Whether the boxes `a` and `b` (a side and a size each) share a cell.
bool overlap(const StepSide& a, const Extent3& a_size, const StepSide& b, const Extent3& b_size) {
  if (!(a.buffer == b.buffer)) return false;
  if (a.alloc != b.alloc) return true;  // one buffer seen in two shapes: assume the worst
  for (std::size_t d = 0; d < 3; ++d) {
    if (a_size[d] == 0 || b_size[d] == 0) return false;  // an empty box
    if (a.lo[d] + a_size[d] <= b.lo[d] || b.lo[d] + b_size[d] <= a.lo[d]) return false;
  }
  return true;
}

bool is_box_copy(const Instruction& in) { return in.op == Instruction::Op::step && !in.step.contiguous; }

}  // namespace

bool steps_independent(const ExchangeStep& a, const ExchangeStep& b) {
  return !overlap(a.dst, a.size, b.src, b.size) && !overlap(a.src, a.size, b.dst, b.size) &&
         !overlap(a.dst, a.size, b.dst, b.size);
}

std::size_t batch_end(std::span<const Instruction> list, std::size_t first, std::size_t max) {
  if (first >= list.size() || !is_box_copy(list[first])) return first + 1;
  std::size_t end = first + 1;
  while (end < list.size() && end - first < max) {
    const Instruction& next = list[end];
    if (!is_box_copy(next) || !(next.stream == list[first].stream) || next.throttled != list[first].throttled) break;
    bool independent = true;
    for (std::size_t i = first; i < end && independent; ++i) independent = steps_independent(list[i].step, next.step);
    if (!independent) break;
    ++end;
  }
  return end;
}

}  // namespace cush::detail
