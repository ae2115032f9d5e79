#pragma once
// The halo exchange of a GraphDecomposition as a list of messages: for every ordered pair of
// parts (from, to) with R_to & Q_from not empty, the sender's local indices of those nodes and the
// receiver's run of ghosts they fill. Pure host code, so CI runs it on host arrays
// (tests/graph/test_graph.cpp).

#include <span>
#include <vector>

#include "cush/graph.hpp"

namespace cush::detail {

/// The messages of one exchange between `parts`, ordered by (from, to). Each fills all of
/// parts[to].ghosts_from(from), in its order, from the sender's local indices of the same nodes
/// (which lie in the sender's sent() range).
[[nodiscard]] std::vector<GraphMessage> graph_messages(std::span<const GraphPart> parts);

}  // namespace cush::detail
