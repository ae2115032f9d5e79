#include "grid/rank_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"

namespace cush::detail {

void check_block_ranks(std::span<const int> block_rank, std::size_t blocks, int ranks) {
  constexpr const char* where = "cush: a grid over ranks";
  if (block_rank.size() != blocks)
    throw InvalidArgument(where, "block ranks",
                          "names the ranks of " + std::to_string(block_rank.size()) + " blocks, the grid has " + std::to_string(blocks));
  for (std::size_t k = 0; k < blocks; ++k)
    if (block_rank[k] < 0 || block_rank[k] >= ranks)
      throw InvalidArgument(where, "block ranks",
                            "gives block " + std::to_string(k) + " to rank " + std::to_string(block_rank[k]) + " of " +
                                std::to_string(ranks) + " ranks");
}

ExchangeProgram exchange_program_over_ranks(const Decomposition& grid, std::span<const int> block_rank,
                                            const PeerStores& pack_to_peer, const HaloComponents& which) {
  int ranks = 0;
  for (int r : block_rank) ranks = std::max(ranks, r + 1);
  check_block_ranks(block_rank, grid.size(), ranks);
  const std::vector<int> owner(block_rank.begin(), block_rank.end());
  const PeerStores within = [owner, pack_to_peer](std::size_t from, std::size_t to) {
    return owner[from] == owner[to] && pack_to_peer && pack_to_peer(from, to);
  };
  return exchange_program(grid, within, which);
}

namespace {

// The block whose memory a step's side is in.
std::size_t side_block(const ExchangeProgram& p, const StepSide& s) { return buffer_block(p, s.buffer); }

}  // namespace

RankProgram rank_program(const ExchangeProgram& program, std::span<const int> block_rank, int rank) {
  const auto on = [&](std::size_t block) { return block_rank[block] == rank; };
  RankProgram out;
  out.rank = rank;
  out.ends = program.ends;
  out.send_cells.assign(program.send_cells.size(), 0);
  out.recv_cells.assign(program.recv_cells.size(), 0);
  for (std::size_t m = 0; m < program.ends.size(); ++m) {
    if (on(program.ends[m].first)) out.send_cells[m] = program.send_cells[m];
    if (on(program.ends[m].second)) out.recv_cells[m] = program.recv_cells[m];
  }
  std::size_t tag = 0;  // every step of the global program in order: the same numbers on every rank
  for (const ExchangePhase& phase : program.phases) {
    RankPhase mine;
    mine.axis = phase.axis;
    for (const ExchangeStep& step : phase.sends) {
      const std::size_t here = tag++;
      const std::size_t from = side_block(program, step.src), to = side_block(program, step.dst);
      if (block_rank[from] == block_rank[to]) {
        if (on(step.stream)) mine.sends.push_back(step);
        continue;
      }
      // Between two ranks: only a linear copy can be a send and a receive.
      if (!step.contiguous || from != step.stream)
        throw std::logic_error("cush: a step of the exchange program writes into another rank's memory from a kernel");
      const std::size_t cells = box_span(step.src.alloc, step.size);
      if (on(from)) mine.outgoing.push_back(RankTransfer{here, block_rank[to], from, step.src, cells, to});
      if (on(to)) mine.incoming.push_back(RankTransfer{here, block_rank[from], to, step.dst, cells, from});
    }
    for (const auto& link : phase.links)
      if (on(link.first) && on(link.second)) mine.links.push_back(link);
    for (const ExchangeStep& step : phase.receives)
      if (on(step.stream)) mine.receives.push_back(step);
    if (!mine.sends.empty() || !mine.outgoing.empty() || !mine.incoming.empty() || !mine.receives.empty())
      out.phases.push_back(std::move(mine));
  }
  return out;
}

}  // namespace cush::detail
