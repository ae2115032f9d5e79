// The messages of a graph exchange, and a part's rows renumbered to local indices.

#include "graph/graph_program.hpp"

#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "graph/graph_input.hpp"

namespace cush {

namespace detail {

std::vector<GraphMessage> graph_messages(std::span<const GraphPart> parts) {
  std::vector<GraphMessage> messages;
  for (std::size_t from = 0; from < parts.size(); ++from)
    for (std::size_t to = 0; to < parts.size(); ++to) {
      if (to == from) continue;
      const Range dst = parts[to].ghosts_from(from);
      if (dst.empty()) continue;
      GraphMessage m{from, to, {}, dst, true};
      m.src_local.reserve(dst.count);
      const Range sent = parts[from].sent();
      for (std::size_t k = dst.offset; k < dst.end(); ++k) {
        const std::optional<std::size_t> src = parts[from].local(parts[to].global(k));
        // Every ghost of `to` that `from` owns is in from's O, by the definition of O.
        if (!src || *src < sent.offset || *src >= sent.end())
          throw std::logic_error("cush: ghost " + std::to_string(parts[to].global(k)) + " of part " +
                                 std::to_string(to) + " is not among the nodes part " + std::to_string(from) +
                                 " sends");
        if (!m.src_local.empty() && static_cast<std::size_t>(m.src_local.back()) + 1 != *src) m.contiguous = false;
        m.src_local.push_back(static_cast<std::int32_t>(*src));  // below |G| < 2^31
      }
      messages.push_back(std::move(m));
    }
  return messages;
}

}  // namespace detail

LocalAdjacency GraphDecomposition::localize(std::size_t pos, const Adjacency& graph) const {
  constexpr const char* where = "cush::GraphDecomposition::localize";
  if (pos >= parts_.size())
    throw InvalidArgument(where, "pos",
                          std::to_string(pos) + " is not a part (" + std::to_string(parts_.size()) + " parts)");
  if (graph.nodes() != nodes_ || graph.cols.size() != entries_)
    throw InvalidArgument(where, "graph",
                          "has " + std::to_string(graph.nodes()) + " nodes and " + std::to_string(graph.cols.size()) +
                              " entries, the decomposition's graph " + std::to_string(nodes_) + " and " +
                              std::to_string(entries_));
  detail::check_rows(where, graph);  // the owned rows' columns are checked below, one by one
  const GraphPart& part = parts_[pos];
  // global -> local for this call: one array of N (O(N) memory while it runs), so each entry is
  // one lookup, not a search of the part's map.
  std::vector<std::int32_t> local_of(nodes_, -1);
  for (std::size_t l = 0; l < part.size(); ++l)
    local_of[static_cast<std::size_t>(part.globals()[l])] = static_cast<std::int32_t>(l);
  const Range owned = part.owned();
  const Range interior = part.interior();
  const Range ghosts = part.ghosts();
  const auto row_start = [&](std::size_t r) {
    return static_cast<std::size_t>(graph.row_ptr[static_cast<std::size_t>(part.global(r))]);
  };
  const auto row_end = [&](std::size_t r) {
    return static_cast<std::size_t>(graph.row_ptr[static_cast<std::size_t>(part.global(r)) + 1]);
  };

  LocalAdjacency out;
  out.row_ptr.reserve(owned.count + 1);
  std::size_t entries = 0;
  for (std::size_t r = owned.offset; r < owned.end(); ++r) entries += row_end(r) - row_start(r);
  out.cols.reserve(entries);
  out.entries.reserve(entries);
  out.row_ptr.push_back(0);
  // Which ghosts some row reads: each must be (R is the columns of Q's rows outside Q).
  std::vector<unsigned char> read(ghosts.count, 0);
  for (std::size_t r = owned.offset; r < owned.end(); ++r) {
    bool reads_ghost = false;
    for (std::size_t e = row_start(r); e < row_end(r); ++e) {
      const std::int64_t c = graph.cols[e];
      const std::int32_t l = c >= 0 && c < static_cast<std::int64_t>(nodes_) ? local_of[static_cast<std::size_t>(c)] : -1;
      if (l < 0)
        throw InvalidArgument(where, "graph",
                              "row " + std::to_string(part.global(r)) + ", entry " + std::to_string(e) + ": column " +
                                  std::to_string(c) + " is not among part " + std::to_string(pos) +
                                  "'s nodes: not the decomposition's graph");
      if (static_cast<std::size_t>(l) >= ghosts.offset) {
        read[static_cast<std::size_t>(l) - ghosts.offset] = 1;
        reads_ghost = true;
      }
      out.cols.push_back(l);
      out.entries.push_back(static_cast<std::int64_t>(e));
    }
    // Rows of B read a ghost, the interior's none.
    if (reads_ghost != (r >= interior.end()))
      throw InvalidArgument(where, "graph",
                            "row " + std::to_string(part.global(r)) + (reads_ghost ? " reads" : " reads no") +
                                " ghost of part " + std::to_string(pos) + ", unlike in the decomposition's graph");
    out.row_ptr.push_back(static_cast<std::int64_t>(out.cols.size()));
  }
  for (std::size_t k = 0; k < ghosts.count; ++k)
    if (!read[k])
      throw InvalidArgument(where, "graph",
                            "no row of part " + std::to_string(pos) + " reads its ghost node " +
                                std::to_string(part.global(ghosts.offset + k)) + ": not the decomposition's graph");
  return out;
}

}  // namespace cush
