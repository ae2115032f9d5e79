#pragma once
// The halo exchange of a graph field as an exchange program (grid/exchange_program.hpp), so the
// structured grid's schedule (grid/exchange_schedule.hpp) orders it on streams and its host proof
// (tests/support/simulate_streams.hpp) covers it. Pure host code. One phase: every message of the
// decomposition (GraphDecomposition::messages), for every component, moved by its route:
//
//   peer     one step on the sender: a copy straight into the receiver's ghost run (contiguous
//            source), or the gather kernel storing into it over the peer link;
//   staged   gather into a send buffer on the sender, then a copy into the ghost run;
//   host     gather into a send buffer, copy it into a pinned host buffer (the receive buffer),
//            and, on the receiver once the sender is done, copy that into the ghost run (the
//            seed's four steps through host memory).
//
// A contiguous source needs no gather: staged copies it as peer does, host copies it to the host
// buffer directly. Buffers are block buffers of |G| elements per component (component c at
// stride(k) elements into block k's buffer), send buffers on the sender (device memory) and
// receive buffers (pinned host memory; only the host route has them).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "cush/graph.hpp"
#include "grid/exchange_program.hpp"

namespace cush::detail {

enum class GraphRoute { peer, staged, host };

struct GraphExchange {
  ExchangeProgram program;
  /// By message of the decomposition: the sender's local indices of a gather (empty where the
  /// message is a copy). A gather step's index_list is the message's number.
  std::vector<std::vector<std::int32_t>> index_lists;
};

/// The route of the message from part `from` to part `to`.
using GraphRouteOf = std::function<GraphRoute(std::size_t from, std::size_t to)>;

/// The exchange of `components` components of every part's values (parts in the decomposition's
/// order = blocks). Staging buffer m * components + c belongs to message m's component c.
[[nodiscard]] GraphExchange graph_exchange(const GraphDecomposition& dec, std::size_t components,
                                           const GraphRouteOf& route);

}  // namespace cush::detail
