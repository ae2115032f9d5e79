#include "grid/exchange_program.hpp"

#include <algorithm>
#include <string>

#include "cush/error.hpp"
#include "grid/halo.hpp"

namespace cush::detail {

std::size_t buffer_block(const ExchangeProgram& program, const BufferRef& buffer) {
  switch (buffer.kind) {
    case BufferRef::Kind::send: return program.ends.at(buffer.index).first;
    case BufferRef::Kind::recv: return program.ends.at(buffer.index).second;
    case BufferRef::Kind::block: break;
  }
  return buffer.index;
}

bool box_is_contiguous(const Extent3& alloc, const Extent3& size) noexcept {
  if (size[1] * size[2] <= 1) return true;   // one row, or part of one
  if (size[0] != alloc[0]) return false;      // rows with gaps between them
  return size[2] == 1 || size[1] == alloc[1];  // whole rows of one plane, or whole planes
}

bool box_spans_rows(const StepSide& side, const Extent3& size) noexcept {
  if (size[1] * size[2] <= 1) return box_is_contiguous(side.alloc, size);
  if (side.lo[0] != 0 || size[0] != side.width) return false;
  return size[2] == 1 || size[1] == side.alloc[1];
}

std::size_t box_span(const Extent3& alloc, const Extent3& size) noexcept {
  if (size[0] * size[1] * size[2] == 0) return 0;
  return (size[2] - 1) * alloc[0] * alloc[1] + (size[1] - 1) * alloc[0] + size[0];
}

namespace {

Extent3 buffer_lo(const Decomposition& grid, const Box& local) {
  Extent3 lo{};
  for (std::size_t a = 0; a < 3; ++a) lo[a] = static_cast<std::size_t>(local.lo[a] + static_cast<std::ptrdiff_t>(grid.halo(a)));
  return lo;
}

// The steps of a message between two blocks that are not one run of the same shape on both
// sides: pack (on the sender, or straight into the receiver where `peer_stores`), copy, unpack.
void send_through_staging(ExchangePhase& out, ExchangeProgram& program, std::size_t id, const StepSide& src,
                          const StepSide& dst, const Extent3& size, bool src_run, bool dst_run, bool peer_stores) {
  using Kind = BufferRef::Kind;
  const std::size_t from = src.buffer.index, to = dst.buffer.index;
  const std::size_t cells = size[0] * size[1] * size[2];
  // The staging buffers hold the box as a dense array of its own size.
  const StepSide send{{Kind::send, id}, size, {}, size[0]};
  const StepSide recv{{Kind::recv, id}, size, {}, size[0]};
  const bool direct = !src_run && peer_stores;
  if (!src_run && !direct) {
    program.send_cells[id] = cells;
    out.sends.push_back(ExchangeStep{from, src, send, size, false});
  }
  // A strided receiving side is unpacked by the receiver: stores of a few bytes each across
  // the link waste most of it (measured 2.8x slower for x faces of depth 1; docs/results/records/grid_design.md).
  if (direct && dst_run) {
    out.sends.push_back(ExchangeStep{from, src, dst, size, false});
  } else if (direct) {
    program.recv_cells[id] = cells;
    out.sends.push_back(ExchangeStep{from, src, recv, size, false});
    out.receives.push_back(ExchangeStep{to, recv, dst, size, false});
  } else {
    if (!dst_run) program.recv_cells[id] = cells;
    out.sends.push_back(ExchangeStep{from, src_run ? src : send, dst_run ? dst : recv, size, true});
    if (!dst_run) out.receives.push_back(ExchangeStep{to, recv, dst, size, false});
  }
}

}  // namespace

namespace {

// The steps of message `m` carrying component `c`.
void add_message(ExchangePhase& out, ExchangeProgram& program, const Decomposition& grid, const PeerStores& pack_to_peer,
                 const HaloMessage& m, std::size_t c) {
  using Kind = BufferRef::Kind;
  const std::size_t id = program.ends.size();
  program.ends.emplace_back(m.from, m.to);
  const StepSide src{{Kind::block, m.from, c}, grid.allocated(m.from), buffer_lo(grid, m.src), grid.row_cells(m.from)};
  const StepSide dst{{Kind::block, m.to, c}, grid.allocated(m.to), buffer_lo(grid, m.dst), grid.row_cells(m.to)};
  const Extent3 size = m.src.size;
  // Runs without gaps can be copied to and from the dense staging buffers; runs of whole
  // padded rows only into a box of the same shape (the same pitches).
  const bool src_run = box_is_contiguous(src.alloc, size);
  const bool dst_run = box_is_contiguous(dst.alloc, size);
  const bool same_rows = box_spans_rows(src, size) && box_spans_rows(dst, size) && src.alloc[0] == dst.alloc[0] &&
                         (size[2] == 1 || src.alloc[1] == dst.alloc[1]);
  program.send_cells.push_back(0);
  program.recv_cells.push_back(0);
  if (m.from == m.to) {
    // Within one buffer: one step, a linear copy if both boxes are runs (without gaps, or of
    // whole padded rows).
    out.sends.push_back(ExchangeStep{m.from, src, dst, size, (src_run && dst_run) || same_rows});
    return;
  }
  if (same_rows) {
    out.sends.push_back(ExchangeStep{m.from, src, dst, size, true});
  } else {
    send_through_staging(out, program, id, src, dst, size, src_run, dst_run, pack_to_peer && pack_to_peer(m.from, m.to));
  }
  const std::pair<std::size_t, std::size_t> link{m.from, m.to};
  if (std::find(out.links.begin(), out.links.end(), link) == out.links.end()) out.links.push_back(link);
}

}  // namespace

ExchangeProgram exchange_program(const Decomposition& grid, const PeerStores& pack_to_peer, const HaloComponents& which) {
  ExchangeProgram program;
  for (const HaloPhase& phase : halo_phases(grid)) {
    ExchangePhase out;
    out.axis = phase.axis;
    for (const HaloMessage& m : phase.messages)
      for (std::size_t c : which.filled(phase.axis, m.dir)) add_message(out, program, grid, pack_to_peer, m, c);
    // A write-back travels the other way: the ghosts m filled, into the cells they stand for.
    for (const HaloMessage& m : phase.messages) {
      const HaloMessage back{m.to, m.from, m.dst, m.src, m.axis, -m.dir};
      for (std::size_t c : which.written_back(phase.axis, back.dir)) add_message(out, program, grid, pack_to_peer, back, c);
    }
    if (!out.sends.empty()) program.phases.push_back(std::move(out));
  }
  return program;
}

void check_components(const Decomposition& grid, const HaloComponents& which, std::size_t components) {
  constexpr const char* where = "cush::Field::exchange";
  std::size_t ghost_axes = 0;
  for (std::size_t a = 0; a < 3; ++a) ghost_axes += grid.halo(a) > 0 ? 1 : 0;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    std::vector<std::size_t> filled, back;
    for (int dir : {-1, 1}) {
      for (std::size_t c : which.filled(axis, dir)) filled.push_back(c);
      for (std::size_t c : which.written_back(axis, dir)) back.push_back(c);
    }
    for (std::size_t c : filled)
      if (c >= components)
        throw InvalidArgument(where, "components", "component " + std::to_string(c) + " of a field of " +
                                                       std::to_string(components) + " components");
    const auto thinnest = [&] {
      std::size_t t = grid.extent()[axis];
      for (std::size_t k = 0; k < grid.size(); ++k) t = std::min(t, grid.owned(k).size[axis]);
      return t;
    };
    for (std::size_t c : which.written_back(axis, +1)) {
      const std::vector<std::size_t>& down = which.written_back(axis, -1);
      if (std::find(down.begin(), down.end(), c) != down.end() && thinnest() < 2 * grid.halo(axis))
        throw InvalidArgument(where, "components",
                              "component " + std::to_string(c) + " is written back both ways along axis " +
                                  std::to_string(axis) + " into blocks thinner than twice the halo: a cell would get two values");
    }
    for (std::size_t c : back) {
      if (c >= components)
        throw InvalidArgument(where, "components", "component " + std::to_string(c) + " of a field of " +
                                                       std::to_string(components) + " components");
      if (std::find(filled.begin(), filled.end(), c) != filled.end())
        throw InvalidArgument(where, "components", "component " + std::to_string(c) + " is both filled and written back along axis " +
                                                       std::to_string(axis));
      if (ghost_axes > 1)
        throw InvalidArgument(where, "components",
                              "write_back needs a grid with ghost layers along one axis only (GridOptions::ghosts): "
                              "a corner ghost would stand for cells of two blocks");
    }
  }
}

}  // namespace cush::detail
