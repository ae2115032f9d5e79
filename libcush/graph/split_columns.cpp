// A part's localized rows split into the entries that read owned values and those that read
// ghosts (graph.hpp, split_columns).

#include <string>

#include "cush/error.hpp"
#include "cush/graph.hpp"

namespace cush {

SplitAdjacency split_columns(const LocalAdjacency& rows, const GraphPart& part) {
  constexpr const char* where = "cush::split_columns";
  const std::size_t owned = part.owned().count;
  if (rows.row_ptr.size() != owned + 1 || rows.row_ptr.front() != 0 ||
      rows.row_ptr.back() != static_cast<std::int64_t>(rows.cols.size()) || rows.entries.size() != rows.cols.size())
    throw InvalidArgument(where, "rows",
                          "is not a localization of this part: " + std::to_string(rows.row_ptr.size()) +
                              " row offsets for " + std::to_string(owned) + " owned rows, " +
                              std::to_string(rows.cols.size()) + " columns, " + std::to_string(rows.entries.size()) +
                              " entries");
  SplitAdjacency out;
  for (LocalAdjacency* half : {&out.owned, &out.ghosts}) {
    half->row_ptr.reserve(owned + 1);
    half->row_ptr.push_back(0);
  }
  for (std::size_t r = 0; r < owned; ++r) {
    const std::int64_t begin = rows.row_ptr[r], end = rows.row_ptr[r + 1];
    if (begin > end) throw InvalidArgument(where, "rows", "row " + std::to_string(r) + "'s offsets decrease");
    for (auto e = static_cast<std::size_t>(begin); e < static_cast<std::size_t>(end); ++e) {
      const std::int32_t c = rows.cols[e];
      if (c < 0 || static_cast<std::size_t>(c) >= part.size())
        throw InvalidArgument(where, "rows",
                              "row " + std::to_string(r) + " reads local index " + std::to_string(c) + ", outside the part's " +
                                  std::to_string(part.size()) + " values");
      LocalAdjacency& half = static_cast<std::size_t>(c) < owned ? out.owned : out.ghosts;
      half.cols.push_back(c);
      half.entries.push_back(rows.entries[e]);
    }
    for (LocalAdjacency* half : {&out.owned, &out.ghosts})
      half->row_ptr.push_back(static_cast<std::int64_t>(half->cols.size()));
  }
  return out;
}

}  // namespace cush
