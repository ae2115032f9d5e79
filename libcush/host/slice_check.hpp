#pragma once
// The one check of a Slice argument, shared by Layout and Plan.

#include "cush/layout.hpp"

namespace cush::detail {

/// Throws InvalidArgument (from `where`) unless s.index < s.count.
void check_slice(Slice s, const char* where);

}  // namespace cush::detail
