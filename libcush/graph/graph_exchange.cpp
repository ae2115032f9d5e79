#include "graph/graph_exchange.hpp"

#include <utility>

namespace cush::detail {

namespace {

// A run of `count` elements from `first` in a buffer of `size` elements (a 1-D box).
StepSide run_side(BufferRef buffer, std::size_t size, std::size_t first) {
  return StepSide{buffer, Extent3{size, 1, 1}, Extent3{first, 0, 0}, size};
}

}  // namespace

GraphExchange graph_exchange(const GraphDecomposition& dec, std::size_t components, const GraphRouteOf& route) {
  using Kind = BufferRef::Kind;
  GraphExchange out;
  ExchangePhase phase;
  const std::span<const GraphMessage> messages = dec.messages();
  for (std::size_t m = 0; m < messages.size(); ++m) {
    const GraphMessage& msg = messages[m];
    const std::size_t from_size = dec.part(msg.from).size();
    const std::size_t to_size = dec.part(msg.to).size();
    const std::size_t count = msg.dst.count;
    const GraphRoute r = route(msg.from, msg.to);
    const bool gather = !msg.contiguous;
    out.index_lists.push_back(gather ? msg.src_local : std::vector<std::int32_t>{});
    const Extent3 size{count, 1, 1};
    for (std::size_t c = 0; c < components; ++c) {
      const std::size_t s = m * components + c;  // its staging buffers
      out.program.ends.emplace_back(msg.from, msg.to);
      out.program.send_cells.push_back(gather && r != GraphRoute::peer ? count : 0);
      out.program.recv_cells.push_back(r == GraphRoute::host ? count : 0);
      const StepSide ghosts = run_side(BufferRef{Kind::block, msg.to, c}, to_size, msg.dst.offset);
      // Where the values leave from: the sender's buffer (one run), or the gather's output.
      StepSide source = run_side(BufferRef{Kind::block, msg.from, c}, from_size, gather ? 0 : msg.src_local.front());
      if (gather) {
        const StepSide whole = source;
        source = r == GraphRoute::peer ? ghosts : run_side(BufferRef{Kind::send, s, 0}, count, 0);
        phase.sends.push_back(ExchangeStep{msg.from, whole, source, size, false, m});
        if (r == GraphRoute::peer) continue;
      }
      if (r != GraphRoute::host) {
        phase.sends.push_back(ExchangeStep{msg.from, source, ghosts, size, true});
        continue;
      }
      const StepSide host = run_side(BufferRef{Kind::recv, s, 0}, count, 0);
      phase.sends.push_back(ExchangeStep{msg.from, source, host, size, true});
      phase.receives.push_back(ExchangeStep{msg.to, host, ghosts, size, true});
    }
    phase.links.emplace_back(msg.from, msg.to);
  }
  if (!phase.sends.empty()) out.program.phases.push_back(std::move(phase));
  return out;
}

}  // namespace cush::detail
