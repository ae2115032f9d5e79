#pragma once
// Work that may fail on one rank of a process group but must not leave the others going on
// alone: allocations, checks only one rank can make. Part of cush::mpi.

#include <functional>

#include "cush/process_group.hpp"

namespace cush::detail {

/// Collective: runs `f` on every rank, then tells every rank whether it failed anywhere. The
/// rank where it threw rethrows its exception; the others throw InvalidArgument (for `where`,
/// argument "group") naming each failed rank and its message. Returns only if no rank failed.
void together(const ProcessGroup& group, const char* where, const std::function<void()>& f);

/// Collective: the root of a scatter or gather (the same on every rank, a rank of the group) and
/// the root's host pointer (non-null where `needs_host`), checked on every rank; InvalidArgument
/// on every rank otherwise.
void check_root(const ProcessGroup& group, const void* host, bool needs_host, int root, const char* where);

}  // namespace cush::detail
