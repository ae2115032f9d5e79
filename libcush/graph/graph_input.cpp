#include "graph/graph_input.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cush/error.hpp"

namespace cush::detail {

void check_rows(const char* where, const Adjacency& graph) {
  const std::size_t n = graph.nodes();
  if (n == 0)
    throw InvalidArgument(where, "graph.row_ptr",
                          "a graph needs at least one node: row_ptr has " + std::to_string(graph.row_ptr.size()) +
                              " entries, N + 1 >= 2 wanted");
  if (graph.row_ptr[0] != 0)
    throw InvalidArgument(where, "graph.row_ptr", "row 0 starts at " + std::to_string(graph.row_ptr[0]) + ", not 0");
  for (std::size_t i = 0; i < n; ++i)
    if (graph.row_ptr[i + 1] < graph.row_ptr[i])
      throw InvalidArgument(where, "graph.row_ptr",
                            "row " + std::to_string(i) + " ends at " + std::to_string(graph.row_ptr[i + 1]) +
                                ", before its start " + std::to_string(graph.row_ptr[i]) + " (row_ptr decreases)");
  const std::size_t nnz = graph.cols.size();
  if (graph.row_ptr[n] != static_cast<std::int64_t>(nnz))
    throw InvalidArgument(where, "graph.row_ptr",
                          "the last row (row " + std::to_string(n - 1) + ") ends at " +
                              std::to_string(graph.row_ptr[n]) + ", not at cols.size() = " + std::to_string(nnz));
}

void throw_bad_column(const char* where, std::size_t row, std::size_t entry, std::int64_t column, std::size_t nodes) {
  throw InvalidArgument(where, "graph.cols",
                        "row " + std::to_string(row) + ", entry " + std::to_string(entry) + ": column " +
                            std::to_string(column) + " is not a node (N = " + std::to_string(nodes) + ")");
}

void check_owner(const char* where, std::span<const int> owner, std::size_t nodes, std::size_t parts) {
  if (parts == 0) throw InvalidArgument(where, "parts", "a decomposition needs at least one part");
  if (owner.size() != nodes)
    throw InvalidArgument(
        where, "owner",
        "holds " + std::to_string(owner.size()) + " values, not one per node (N = " + std::to_string(nodes) + ")");
  // The first part without a node is below N + 1 (N nodes fill at most N parts): counting the
  // owners below min(parts, N + 1) names it without an array of `parts` counts.
  std::vector<std::size_t> count(std::min(parts, nodes + 1), 0);
  for (std::size_t i = 0; i < nodes; ++i) {
    const int p = owner[i];
    if (p < 0 || static_cast<std::size_t>(p) >= parts)
      throw InvalidArgument(where, "owner",
                            "node " + std::to_string(i) + " has owner value " + std::to_string(p) + ", not in [0, " +
                                std::to_string(parts) + ")");
    if (static_cast<std::size_t>(p) < count.size()) ++count[static_cast<std::size_t>(p)];
  }
  for (std::size_t p = 0; p < count.size(); ++p)
    if (count[p] == 0) throw InvalidArgument(where, "owner", "part " + std::to_string(p) + " owns no node");
}

void check_local_size(const char* where, std::size_t part, std::size_t owned, std::size_t ghosts) {
  constexpr auto limit = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());  // 2^31 - 1
  if (owned > limit || ghosts > limit - owned)
    throw InvalidArgument(where, "owner",
                          "part " + std::to_string(part) + " holds " + std::to_string(owned) + " owned and " +
                              std::to_string(ghosts) + " ghost nodes: 2^31 or more values, beyond int32 local indices");
}

}  // namespace cush::detail
