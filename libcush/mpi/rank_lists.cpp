#include "mpi/rank_lists.hpp"

#include <string>

#include "cush/error.hpp"
#include "mpi/fingerprint.hpp"

namespace cush::detail {

std::uint64_t list_fingerprint(const TransferList& list) {
  Fingerprint f;
  f.add(list.size());
  for (const Transfer& t : list) {
    f.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(t.src.pos)));
    f.add(t.src.offset);
    f.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(t.dst.pos)));
    f.add(t.dst.offset);
    f.add(t.count);
    f.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(t.after)));
    f.add(t.combine ? 1 : 0);
  }
  return f.h;
}

std::vector<RankStep> rank_steps(const ProcessGroup& group, const TransferList& list, const RankMap& ranks) {
  constexpr const char* where = "cush: an operation over ranks";
  group.agree(where, "the transfers of the operation", list_fingerprint(list));
  Fingerprint f;
  f.add(static_cast<std::uint64_t>(ranks.host_rank));
  for (int r : ranks.src) f.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(r)));
  f.add(0x5eed);
  for (int r : ranks.dst) f.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(r)));
  group.agree(where, "the ranks of the positions and of the host buffer", f.h);
  // The same input everywhere from here: what fails, fails on every rank.
  const auto check = [&](int r, const std::string& what) {
    if (r < 0 || r >= group.size())
      throw InvalidArgument(where, "ranks", what + " is on rank " + std::to_string(r) + " of " + std::to_string(group.size()) + " ranks");
  };
  check(ranks.host_rank, "the host buffer");
  for (std::size_t p = 0; p < ranks.src.size(); ++p) check(ranks.src[p], "source position " + std::to_string(p));
  for (std::size_t p = 0; p < ranks.dst.size(); ++p) check(ranks.dst[p], "destination position " + std::to_string(p));
  return rank_steps(list, ranks, group.rank());
}

}  // namespace cush::detail
