#pragma once
/// @file graph.hpp
/// @brief An unstructured (graph) domain split into parts, one per device, with ghost nodes.
/// Pure host code: which nodes each part owns, which it reads from other parts, the order of
/// its local values, the maps between local and global indices, and the messages of the halo
/// exchange (docs/graph.md).
///
/// The graph is a directed stencil graph in CSR form: row i lists the nodes that centre i reads
/// (edge i -> j for j in row i; edges are one-way). Per part g, over the node sets of the seed's
/// Table 1.1: Q = the nodes g owns; R = the nodes its rows read that other parts own (ghosts);
/// G = Q + R; B = the nodes of Q whose row reads a node of R (boundary rows); O = the nodes of Q
/// that some other part reads (sent). A part's values are held in its *local order*:
///
///   [Q\(B+O)] [O\B] [O&B] [B\O] [R of part 0] [R of part 1] ...
///
/// with the global order kept inside each group, so interior rows Q\B, boundary rows B, the sent
/// set O and each owner's piece of R are each one range of local indices (0-based).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cush/layout.hpp"

namespace cush {

/// @brief A graph in CSR form over global node ids 0..N-1: row i is centre i's stencil,
/// cols[row_ptr[i] .. row_ptr[i + 1]). N = row_ptr.size() - 1.
///
/// A view, not a copy: a GraphDecomposition reads the graph while it is built and keeps no
/// reference to it (it keeps only each part's own sets and maps), so the arrays need only live
/// through the call. Rows may be empty, hold a column twice, or lack their centre.
struct Adjacency {
  std::span<const std::int64_t> row_ptr;
  std::span<const std::int64_t> cols;
  /// N: the rows (0 for an empty row_ptr).
  [[nodiscard]] std::size_t nodes() const noexcept { return row_ptr.empty() ? 0 : row_ptr.size() - 1; }
};

/// @brief A graph's rows in one part's local order with columns renumbered to local indices
/// (GraphDecomposition::localize). Row r is the owned node global(r); its entries keep the order
/// of that node's row in the global graph, so entry k of row r is entry row_ptr_global[global(r)]
/// + (k - row_ptr[r]) of the global graph (its weight, say).
struct LocalAdjacency {
  std::vector<std::int64_t> row_ptr;  ///< |Q| + 1 offsets
  std::vector<std::int32_t> cols;     ///< local indices, all below the part's size() (< 2^31)
  /// Each entry's index in the global graph's cols: the weights of a matrix with the graph's
  /// pattern, local entry k's = values[entries[k]].
  std::vector<std::int64_t> entries;
};

/// @brief A part's localized rows split by where their columns are (split_columns): for the
/// split overlap of PETSc's MatMult (GraphField::exchange_overlapped_split). Both keep every
/// owned row (|Q| + 1 offsets) and each row's entry order; entries keep their global index.
struct SplitAdjacency {
  LocalAdjacency owned;   ///< the entries whose column is owned (local index < |Q|)
  LocalAdjacency ghosts;  ///< the entries whose column is a ghost; empty for interior rows
};

/// @brief One part (device position) of a GraphDecomposition: its ranges of local indices and
/// the maps between local and global indices.
class GraphPart {
 public:
  /// |G|: the part's values, owned and ghost.
  [[nodiscard]] std::size_t size() const noexcept { return global_.size(); }
  /// Q: every owned node, [Q\(B+O)] [O\B] [O&B] [B\O].
  [[nodiscard]] Range owned() const noexcept { return {0, owned_}; }
  /// Q\B = [Q\(B+O)] [O\B]: rows that read no ghost (computable before the exchange finishes).
  [[nodiscard]] Range interior() const noexcept { return {0, interior_}; }
  /// B = [O&B] [B\O]: rows that read a ghost.
  [[nodiscard]] Range boundary() const noexcept { return {interior_, owned_ - interior_}; }
  /// O = [O\B] [O&B]: the owned nodes some other part reads.
  [[nodiscard]] Range sent() const noexcept { return sent_; }
  /// R: the ghosts, grouped by owner (owners ascending).
  [[nodiscard]] Range ghosts() const noexcept { return {owned_, global_.size() - owned_}; }
  /// The ghosts part `h` owns (an empty range, at the place they would be, if none; h may be
  /// this part). Throws InvalidArgument if h is not a part.
  [[nodiscard]] Range ghosts_from(std::size_t h) const;

  /// The global id of local index `local`. Throws InvalidArgument unless local < size().
  [[nodiscard]] std::int64_t global(std::size_t local) const;
  /// The local index of global node `global`; none for a node outside G (a binary search over
  /// the part's sorted (global, local) pairs: no part holds a map of all N nodes).
  [[nodiscard]] std::optional<std::size_t> local(std::int64_t global) const noexcept;
  /// Every global id in local order (the local -> global map).
  [[nodiscard]] std::span<const std::int64_t> globals() const noexcept { return global_; }

 private:
  friend class GraphDecomposition;
  /// `global`: the local order; `groups`: the sizes of Q\(B+O), O\B, O&B and B\O; `ghost_offsets`:
  /// parts + 1 local indices, the ghosts of part h at [ghost_offsets[h], ghost_offsets[h + 1]).
  GraphPart(std::vector<std::int64_t> global, const std::array<std::size_t, 4>& groups,
            std::vector<std::size_t> ghost_offsets);

  std::size_t owned_ = 0;
  std::size_t interior_ = 0;
  Range sent_{};
  std::vector<std::size_t> ghost_offsets_;
  std::vector<std::int64_t> global_;
  std::vector<std::int64_t> sorted_global_;  // G's global ids ascending,
  std::vector<std::int32_t> sorted_local_;   // and their local indices
};

/// Splits `rows` (GraphDecomposition::localize of `part`) into its owned-column and ghost-column
/// entries. A row's sum over `owned` plus its sum over `ghosts` equals its sum over `rows` up to
/// rounding (the sum's order changes where a row mixes them). Throws InvalidArgument if `rows`
/// has not |Q| + 1 offsets, or a column is outside the part's G.
[[nodiscard]] SplitAdjacency split_columns(const LocalAdjacency& rows, const GraphPart& part);

/// @brief One message of the halo exchange: the nodes of part `from` that part `to` reads
/// (R_to & Q_from), gathered from `from`'s local indices `src_local` into the run `dst` of
/// `to`'s local indices (all of to's ghosts_from(from), in its order). `contiguous`: the source
/// indices are one run too (a plain copy; else a gather).
struct GraphMessage {
  std::size_t from = 0;
  std::size_t to = 0;
  std::vector<std::int32_t> src_local;
  Range dst{};
  bool contiguous = false;
};

/// @brief A graph split into parts by an owner per node: each part's sets, local order and maps,
/// and the exchange's messages.
class GraphDecomposition {
 public:
  /// @param graph  the stencil graph (read here only)
  /// @param owner  the part of each node, N values in [0, parts)
  /// @param parts  number of parts (devices); each must own at least one node
  /// Throws InvalidArgument, before building anything, for: N = 0, parts = 0 or more parts than
  /// nodes, a row_ptr not starting at 0, decreasing or not ending at cols.size() (the row), a
  /// column outside [0, N) (row and entry), owner.size() != N, an owner outside [0, parts) (node
  /// and value), a part that owns no node, a part of 2^31 or more values (|G| must fit int32).
  GraphDecomposition(const Adjacency& graph, std::span<const int> owner, std::size_t parts);
  /// Part p owns the nodes of layout.segment(p) (consecutive ranges). Throws InvalidArgument as
  /// above, and for a replicated layout or one whose size() is not N.
  GraphDecomposition(const Adjacency& graph, const Layout& layout);

  /// Parts.
  [[nodiscard]] std::size_t size() const noexcept { return parts_.size(); }
  /// N.
  [[nodiscard]] std::size_t nodes() const noexcept { return nodes_; }
  /// The graph's entries (cols.size()).
  [[nodiscard]] std::size_t entries() const noexcept { return entries_; }
  /// Part `pos`. Throws InvalidArgument unless pos < size().
  [[nodiscard]] const GraphPart& part(std::size_t pos) const;
  /// Every message of one exchange, one per ordered pair (from, to) with R_to & Q_from not
  /// empty, ordered by (from, to).
  [[nodiscard]] std::span<const GraphMessage> messages() const noexcept { return messages_; }

  /// The rows of part `pos`'s owned nodes in its local order, columns renumbered to local
  /// indices, entry order within a row kept. `graph` must be the graph this decomposition was
  /// built from: throws InvalidArgument if its N or entry count differ, its row_ptr is malformed,
  /// a column of an owned row is not in the part's G, or a ghost is read by no owned row.
  [[nodiscard]] LocalAdjacency localize(std::size_t pos, const Adjacency& graph) const;

 private:
  std::size_t nodes_ = 0;
  std::size_t entries_ = 0;
  std::vector<GraphPart> parts_;
  std::vector<GraphMessage> messages_;
};

}  // namespace cush
