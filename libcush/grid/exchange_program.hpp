#pragma once
// The halo exchange of a Field as a program of copies over symbolic buffers: which box is
// packed, which bytes cross to which device, which box is unpacked, on whose stream. Pure host
// code, so CI runs it on host arrays (tests/grid/test_grid.cpp); the schedule
// (exchange_schedule.hpp) orders the steps on streams, and the GPU engine (field_engine.cpp) maps
// the buffers to device memory and the steps to kernels and copies.

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "cush/grid.hpp"
#include "cush/halo_components.hpp"

namespace cush::detail {

/// A buffer of the exchange: a component of a block's buffer (index = block), or the send /
/// receive staging buffer of a message (index = message number), which lives on the sender /
/// the receiver.
struct BufferRef {
  enum class Kind { block, send, recv };
  Kind kind = Kind::block;
  std::size_t index = 0;
  std::size_t component = 0;  ///< Kind::block: which component (ComponentLayout::stride cells apart)
  friend bool operator==(const BufferRef&, const BufferRef&) = default;
};

/// One side of a step: a buffer of `alloc` cells (x fastest; alloc[0] is the row pitch) and the
/// first corner in it. Cells of a row from `width` on are padding (GridOptions::row_align); a
/// staging buffer has none (width = alloc[0]).
struct StepSide {
  BufferRef buffer;
  Extent3 alloc{};
  Extent3 lo{};
  std::size_t width = 0;
};

/// A box of `size` cells from `src` to `dst`, run on the stream of block `stream`. A step whose
/// both sides are one run of the same shape is `contiguous`: one linear copy of box_span() cells
/// (across devices when the buffers are on two; padding between whole rows is copied along),
/// otherwise a box-copy kernel on the stream's device, which reads that device's memory and may
/// store into a peer's (a pack straight into the receiver's memory).
///
/// A graph field's exchange (graph/graph_exchange.hpp) adds gathers: a step with an `index_list`
/// stores element src[list[i]] at dst.lo[0] + i for i < size[0], where the list is that number in
/// the program's index lists (on the stream's device); src.lo is then 0. Box steps have none.
struct ExchangeStep {
  static constexpr std::size_t no_list = static_cast<std::size_t>(-1);
  std::size_t stream = 0;
  StepSide src;
  StepSide dst;
  Extent3 size{};
  bool contiguous = false;
  std::size_t index_list = no_list;
};

/// One phase (axis): `sends` run on the senders' streams (packs, copies within a device, copies
/// between devices), then every receiver waits for its senders (`links`), then `receives`
/// (unpacks) run on the receivers' streams. Before its sends, a sender waits for the start of the
/// phase on each receiver it writes to (grid/exchange_schedule.hpp orders it all).
struct ExchangePhase {
  std::size_t axis = 0;
  std::vector<ExchangeStep> sends;
  std::vector<std::pair<std::size_t, std::size_t>> links;  // (sender, receiver), distinct blocks, once each
  std::vector<ExchangeStep> receives;
};

struct ExchangeProgram {
  std::vector<ExchangePhase> phases;
  /// Cells of the staging buffers of each message (0: the message needs none on that side).
  std::vector<std::size_t> send_cells;
  std::vector<std::size_t> recv_cells;
  /// The block each message's staging buffers belong to (sender, receiver).
  std::vector<std::pair<std::size_t, std::size_t>> ends;
};

/// The block whose device holds a buffer (staging buffers live on their message's ends).
[[nodiscard]] std::size_t buffer_block(const ExchangeProgram& program, const BufferRef& buffer);

/// True if a box of `size` cells of a buffer of `alloc` cells is one run in memory.
[[nodiscard]] bool box_is_contiguous(const Extent3& alloc, const Extent3& size) noexcept;

/// True if a box of `size` cells at side.lo is one run in memory once the padding at the ends of
/// its rows is counted in: whole rows (all `width` cells), of one plane or of whole planes.
[[nodiscard]] bool box_spans_rows(const StepSide& side, const Extent3& size) noexcept;

/// Cells from a box's first cell to its last, in a buffer of `alloc` cells.
[[nodiscard]] std::size_t box_span(const Extent3& alloc, const Extent3& size) noexcept;

/// True if block `from`'s device may store into block `to`'s memory from a kernel.
using PeerStores = std::function<bool(std::size_t from, std::size_t to)>;

/// The program of one full exchange of `grid`. A strided face whose sender can store into its
/// receiver (`pack_to_peer`, none: never) is packed straight into the receiver's memory (its
/// receive buffer, or its ghosts if they are one run): one kernel instead of pack + copy.
/// Otherwise it is packed on the sender, copied, and unpacked on the receiver. `which`: the
/// components moved (default: component 0, filled everywhere); every message is repeated for
/// each component it carries (its own staging buffers), fills first, then write-backs (the fill
/// messages reversed: ghosts into the owned cells they stand for).
[[nodiscard]] ExchangeProgram exchange_program(const Decomposition& grid, const PeerStores& pack_to_peer = {},
                                               const HaloComponents& which = HaloComponents::all(1));

/// Throws InvalidArgument unless `which` suits a field of `components` components on `grid`:
/// every component below `components`, none both filled and written back along one axis, and
/// write-backs only where the grid keeps ghost layers along one axis.
void check_components(const Decomposition& grid, const HaloComponents& which, std::size_t components);

}  // namespace cush::detail
