// A GraphDecomposition's sets, local order and maps (docs/graph.md): from the owner of every
// node, each part's Q, B, O and R in one pass over the graph's entries, then the local order
// [Q\(B+O)] [O\B] [O&B] [B\O] [R by owner], global order kept inside each group.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

#include "cush/error.hpp"
#include "cush/graph.hpp"
#include "graph/graph_input.hpp"
#include "graph/graph_program.hpp"

namespace cush {

namespace {

constexpr const char* where_decomposition = "cush::GraphDecomposition";

// Flags of an owned node: its row reads a ghost (B), another part reads it (O).
constexpr unsigned char in_boundary = 1;
constexpr unsigned char in_sent = 2;

// The group of an owned node in the local order, by its flags: Q\(B+O) 0, B\O 3, O\B 1, O&B 2.
constexpr std::size_t group_of[4] = {0, 3, 1, 2};

// The owner array of a partitioned layout: part p owns the nodes of segment p. Only the layout's
// shape is checked here; the owners themselves go through check_owner like any others.
std::vector<int> owners_from(const Adjacency& graph, const Layout& layout) {
  if (layout.is_replicated())
    throw InvalidArgument(where_decomposition, "layout", "is replicated: a decomposition needs each node in one part");
  if (layout.devices() > static_cast<std::size_t>(INT_MAX))
    throw InvalidArgument(where_decomposition, "layout",
                          std::to_string(layout.devices()) + " parts: more than int holds");
  if (graph.nodes() != 0 && layout.size() != graph.nodes())
    throw InvalidArgument(where_decomposition, "layout",
                          "covers " + std::to_string(layout.size()) + " elements, not the graph's " +
                              std::to_string(graph.nodes()) + " nodes");
  std::vector<int> owner(layout.size());
  for (std::size_t p = 0; p < layout.devices(); ++p) {
    const Range s = layout.segment(p);
    std::fill(owner.begin() + static_cast<std::ptrdiff_t>(s.offset),
              owner.begin() + static_cast<std::ptrdiff_t>(s.end()), static_cast<int>(p));
  }
  return owner;
}

}  // namespace

GraphPart::GraphPart(std::vector<std::int64_t> global, const std::array<std::size_t, 4>& groups,
                     std::vector<std::size_t> ghost_offsets)
    : owned_(groups[0] + groups[1] + groups[2] + groups[3]),
      interior_(groups[0] + groups[1]),
      sent_{groups[0], groups[1] + groups[2]},
      ghost_offsets_(std::move(ghost_offsets)),
      global_(std::move(global)) {
  // global -> local: the (global, local) pairs sorted by global id (|G| < 2^31: checked before).
  // The local order is made of runs already sorted by global id (each group of owned nodes, each
  // owner's ghosts), so merging the runs in turn sorts it in about one pass per run, not log |G|.
  std::vector<std::size_t> runs{0, groups[0], groups[0] + groups[1], groups[0] + groups[1] + groups[2]};
  for (std::size_t k = 0; k + 1 < ghost_offsets_.size(); ++k) runs.push_back(ghost_offsets_[k]);
  runs.push_back(global_.size());
  std::vector<std::pair<std::int64_t, std::int32_t>> pairs(global_.size());
  for (std::size_t l = 0; l < global_.size(); ++l) pairs[l] = {global_[l], static_cast<std::int32_t>(l)};
  for (std::size_t r = 1; r + 1 < runs.size(); ++r)
    std::inplace_merge(pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                       pairs.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]));
  sorted_global_.reserve(pairs.size());
  sorted_local_.reserve(pairs.size());
  for (const auto& [g, l] : pairs) {
    sorted_global_.push_back(g);
    sorted_local_.push_back(l);
  }
}

Range GraphPart::ghosts_from(std::size_t h) const {
  if (h >= ghost_offsets_.size() - 1)  // not h + 1 >= size(): h = SIZE_MAX wraps to 0
    throw InvalidArgument("cush::GraphPart::ghosts_from", "h",
                          "part " + std::to_string(h) + " of " + std::to_string(ghost_offsets_.size() - 1));
  return {ghost_offsets_[h], ghost_offsets_[h + 1] - ghost_offsets_[h]};
}

std::int64_t GraphPart::global(std::size_t local) const {
  if (local >= global_.size())
    throw InvalidArgument(
        "cush::GraphPart::global", "local",
        std::to_string(local) + " is not below the part's " + std::to_string(global_.size()) + " values");
  return global_[local];
}

std::optional<std::size_t> GraphPart::local(std::int64_t global) const noexcept {
  const auto it = std::lower_bound(sorted_global_.begin(), sorted_global_.end(), global);
  if (it == sorted_global_.end() || *it != global) return std::nullopt;
  return static_cast<std::size_t>(sorted_local_[static_cast<std::size_t>(it - sorted_global_.begin())]);
}

GraphDecomposition::GraphDecomposition(const Adjacency& graph, const Layout& layout)
    : GraphDecomposition(graph, owners_from(graph, layout), layout.devices()) {}

GraphDecomposition::GraphDecomposition(const Adjacency& graph, std::span<const int> owner, std::size_t parts) {
  detail::check_rows(where_decomposition, graph);  // the columns: in the pass that reads them
  const std::size_t n = graph.nodes();
  detail::check_owner(where_decomposition, owner, n, parts);
  nodes_ = n;
  entries_ = graph.cols.size();
  const auto owner_of = [&](std::int64_t node) {
    return static_cast<std::size_t>(owner[static_cast<std::size_t>(node)]);
  };
  // Q of every part in global order (a counting sort by owner): part p's nodes are
  // by_owner[q_start[p] .. q_start[p + 1]).
  std::vector<std::size_t> q_start(parts + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++q_start[owner_of(static_cast<std::int64_t>(i)) + 1];
  std::partial_sum(q_start.begin(), q_start.end(), q_start.begin());
  std::vector<std::int64_t> by_owner(n);
  {
    std::vector<std::size_t> next(q_start.begin(), q_start.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      by_owner[next[owner_of(static_cast<std::int64_t>(i))]++] = static_cast<std::int64_t>(i);
  }

  // B and O: an entry i -> j across parts puts i in B (of i's part) and j in O (of j's part).
  // R of part p: the nodes of other parts its rows read, each once (mark[j] = the last part that
  // took j), grouped by owner, global order within. Each column is checked as it is read (the
  // error names the first bad entry in the parts' order), so the entries are read once.
  std::vector<unsigned char> flags(n, 0);
  std::vector<std::vector<std::int64_t>> ghosts(parts);
  constexpr std::uint32_t none = UINT32_MAX;  // parts <= 2^31: each owns a node, owners are ints
  std::vector<std::uint32_t> mark(n, none);
  for (std::size_t p = 0; p < parts; ++p) {
    for (std::size_t k = q_start[p]; k < q_start[p + 1]; ++k) {
      const auto i = static_cast<std::size_t>(by_owner[k]);
      const auto last = static_cast<std::size_t>(graph.row_ptr[i + 1]);
      for (auto e = static_cast<std::size_t>(graph.row_ptr[i]); e < last; ++e) {
        const std::int64_t j = graph.cols[e];
        if (j < 0 || j >= static_cast<std::int64_t>(n)) detail::throw_bad_column(where_decomposition, i, e, j, n);
        const auto jj = static_cast<std::size_t>(j);
        if (owner_of(j) == p) continue;
        flags[i] |= in_boundary;
        flags[jj] |= in_sent;
        if (mark[jj] != static_cast<std::uint32_t>(p)) {
          mark[jj] = static_cast<std::uint32_t>(p);
          ghosts[p].push_back(j);
        }
      }
    }
    std::sort(ghosts[p].begin(), ghosts[p].end(),
              [&](std::int64_t a, std::int64_t b) { return std::pair(owner_of(a), a) < std::pair(owner_of(b), b); });
    detail::check_local_size(where_decomposition, p, q_start[p + 1] - q_start[p], ghosts[p].size());
  }

  // Each part's local order: its owned nodes by group (a stable counting sort), then its ghosts.
  parts_.reserve(parts);
  for (std::size_t p = 0; p < parts; ++p) {
    std::array<std::size_t, 4> groups{};
    for (std::size_t k = q_start[p]; k < q_start[p + 1]; ++k)
      ++groups[group_of[flags[static_cast<std::size_t>(by_owner[k])]]];
    std::array<std::size_t, 4> next{0, groups[0], groups[0] + groups[1], groups[0] + groups[1] + groups[2]};
    const std::size_t owned = q_start[p + 1] - q_start[p];
    std::vector<std::int64_t> global(owned + ghosts[p].size());
    for (std::size_t k = q_start[p]; k < q_start[p + 1]; ++k)
      global[next[group_of[flags[static_cast<std::size_t>(by_owner[k])]]]++] = by_owner[k];
    std::copy(ghosts[p].begin(), ghosts[p].end(), global.begin() + static_cast<std::ptrdiff_t>(owned));
    std::vector<std::size_t> ghost_offsets(parts + 1, 0);
    for (const std::int64_t j : ghosts[p]) ++ghost_offsets[owner_of(j) + 1];
    ghost_offsets[0] = owned;
    std::partial_sum(ghost_offsets.begin(), ghost_offsets.end(), ghost_offsets.begin());
    std::vector<std::int64_t>().swap(ghosts[p]);
    parts_.push_back(GraphPart(std::move(global), groups, std::move(ghost_offsets)));
  }
  messages_ = detail::graph_messages(parts_);
}

const GraphPart& GraphDecomposition::part(std::size_t pos) const {
  if (pos >= parts_.size())
    throw InvalidArgument("cush::GraphDecomposition::part", "pos",
                          std::to_string(pos) + " is not a part (" + std::to_string(parts_.size()) + " parts)");
  return parts_[pos];
}

}  // namespace cush
