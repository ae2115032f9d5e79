#include "host/rank_transfers.hpp"

#include <stdexcept>
#include <string>

#include "cush/error.hpp"

namespace cush::detail {

namespace {

void check_end(const Location& l, std::span<const int> ranks, const char* side, std::size_t index) {
  if (l.is_host()) return;
  if (l.pos < 0 || static_cast<std::size_t>(l.pos) >= ranks.size() || ranks[static_cast<std::size_t>(l.pos)] < 0)
    throw InvalidArgument("cush: a transfer list over ranks", "ranks",
                          "give no rank to the " + std::string(side) + " position " + std::to_string(l.pos) +
                              " of transfer " + std::to_string(index));
}

}  // namespace

std::vector<RankStep> rank_steps(const TransferList& list, const RankMap& ranks, int rank) {
  std::vector<RankStep> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    check_end(t.src, ranks.src, "source", i);
    check_end(t.dst, ranks.dst, "destination", i);
    const int from = ranks.of_src(t.src), to = ranks.of_dst(t.dst);
    // A transfer waits for another (`after`) either to read what that one delivered (a relay) or
    // to write after it into the same place (the combines of a reduce, in turn): the rank that
    // ordering falls on holds the earlier transfer's destination, as the order rules of the
    // header keep it there. Any other wait would need a message of its own.
    if (t.after >= 0) {
      const int landed = ranks.of_dst(list.at(static_cast<std::size_t>(t.after)).dst);
      if (landed != from && landed != to)
        throw std::logic_error("cush: transfer " + std::to_string(i) + " waits for transfer " + std::to_string(t.after) +
                               ", which delivers to a rank that neither reads nor writes transfer " + std::to_string(i));
    }
    if (from == rank && to == rank) {
      out.push_back(RankStep{RankStep::Kind::local, i, -1, t});
    } else if (from == rank) {
      out.push_back(RankStep{RankStep::Kind::send, i, to, t});
    } else if (to == rank) {
      out.push_back(RankStep{RankStep::Kind::receive, i, from, t});
    }
  }
  return out;
}

}  // namespace cush::detail
