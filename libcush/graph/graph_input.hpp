#pragma once
// The bad-input rules of a GraphDecomposition (docs/graph.md): every check runs before anything
// is built, and each names the item at fault (the row, the entry, the node, the part).

#include <cstddef>
#include <cstdint>
#include <span>

#include "cush/graph.hpp"

namespace cush::detail {

/// Throws InvalidArgument (from `where`) unless `graph`'s rows are a CSR of N >= 1 rows: row_ptr
/// starts at 0, never decreases and ends at cols.size() (O(N); the columns are checked where they
/// are read, one by one: throw_bad_column).
void check_rows(const char* where, const Adjacency& graph);
/// The error for entry `entry` of row `row`, whose column is not in [0, N).
[[noreturn]] void throw_bad_column(const char* where, std::size_t row, std::size_t entry, std::int64_t column,
                                   std::size_t nodes);

/// Throws InvalidArgument unless `parts` >= 1 parts of N nodes each own a node: owner.size() == N,
/// every owner in [0, parts), no part without a node (the first one is named).
void check_owner(const char* where, std::span<const int> owner, std::size_t nodes, std::size_t parts);

/// Throws InvalidArgument if part `part`'s values (owned + ghosts) do not fit int32 local indices:
/// 2^31 or more.
void check_local_size(const char* where, std::size_t part, std::size_t owned, std::size_t ghosts);

}  // namespace cush::detail
