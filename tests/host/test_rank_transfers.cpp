// Host tests of transfer lists over ranks (host/rank_transfers.hpp): every operation's list on
// random layouts, its positions given to random ranks, each rank run in a thread of its own with
// only its own positions' memory and the messages between ranks through a mailbox. Every element
// of every buffer must equal the list run in order in one memory.

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cush/error.hpp"
#include "cush/layout.hpp"
#include "host/rank_transfers.hpp"
#include "ops/device_transfers.hpp"
#include "support/rank_executor.hpp"
#include "support/transfer_cases.hpp"

namespace {

using cush::Layout;
using cush::Range;
using cush::TransferList;
using cush_test::Case;
using cush_test::Value;

// Messages between the threads: a send lands in the mailbox at once (it never waits), a receive
// waits until its message is there.
class Mailbox {
 public:
  void put(int to, std::size_t tag, std::vector<Value> data) {
    {
      std::lock_guard<std::mutex> lock(m_);
      if (!box_.emplace(std::make_pair(to, tag), std::move(data)).second) duplicate_ = true;
    }
    cv_.notify_all();
  }
  std::vector<Value> take(int to, std::size_t tag) {
    std::unique_lock<std::mutex> lock(m_);
    const auto key = std::make_pair(to, tag);
    if (!cv_.wait_for(lock, std::chrono::seconds(20), [&] { return box_.count(key) != 0; }))
      throw std::runtime_error("rank " + std::to_string(to) + " waited 20 s for message " + std::to_string(tag));
    std::vector<Value> data = std::move(box_.at(key));
    box_.erase(key);
    return data;
  }
  [[nodiscard]] bool empty_and_unique() const { return box_.empty() && !duplicate_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::map<std::pair<int, std::size_t>, std::vector<Value>> box_;
  bool duplicate_ = false;
};

struct ThreadComm {
  struct Handle {
    int peer = 0;
    std::size_t tag = 0, count = 0;
  };
  Mailbox* box;
  int me;
  Handle send(int peer, std::size_t tag, const Value* data, std::size_t count) {
    box->put(peer, tag, std::vector<Value>(data, data + count));
    return Handle{peer, tag, count};
  }
  void wait_send(const Handle&) {}
  Handle receive(int peer, std::size_t tag, std::size_t count) { return Handle{peer, tag, count}; }
  std::vector<Value> wait_receive(const Handle& h) { return box->take(me, h.tag); }
};

// Runs `c` over `ranks` ranks (position p of the source on src_rank[p], of the destination on
// dst_rank[p], the host buffer on `root`) and compares every buffer with the list run in order.
void run_over_ranks(std::mt19937_64& rng, const Case& c, int ranks, const std::vector<int>& src_rank,
                    const std::vector<int>& dst_rank, int root) {
  SCOPED_TRACE(c.what + " over " + std::to_string(ranks) + " ranks, root " + std::to_string(root));
  std::vector<std::vector<Value>> src0 = cush_test::buffers(rng, c.src), dst0 = c.one_plan ? src0 : cush_test::buffers(rng, c.dst);
  std::vector<Value> host0 = cush_test::random_values(rng, std::max(c.src.size(), c.dst.size()));
  // The reference: one memory, the list in order.
  std::vector<std::vector<Value>> ref_src = src0, ref_dst = dst0;
  std::vector<Value> ref_host = host0;
  cush_test::run_in_order<Value>(c.list, {&ref_src, c.one_plan ? &ref_src : &ref_dst, &ref_host});
  // Each rank with its own positions only.
  const cush::detail::RankMap map{src_rank, c.one_plan ? src_rank : dst_rank, root};
  struct Mine {
    std::vector<std::vector<Value>> src, dst;
    std::vector<Value> host;
  };
  std::vector<Mine> mine(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    Mine& m = mine[static_cast<std::size_t>(r)];
    m.src.resize(src0.size());
    m.dst.resize(dst0.size());
    for (std::size_t p = 0; p < src0.size(); ++p)
      if (src_rank[p] == r) m.src[p] = src0[p];
    for (std::size_t p = 0; p < dst0.size(); ++p)
      if ((c.one_plan ? src_rank : dst_rank)[p] == r) m.dst[p] = dst0[p];
    if (r == root) m.host = host0;
  }
  Mailbox box;
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        Mine& m = mine[static_cast<std::size_t>(r)];
        ThreadComm comm{&box, r};
        cush_test::run_rank_steps<Value>(cush::detail::rank_steps(c.list, map, r),
                                         {&m.src, c.one_plan ? &m.src : &m.dst, &m.host}, comm);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < ranks; ++r) ASSERT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
  EXPECT_TRUE(box.empty_and_unique()) << "a message was sent twice or never received";
  for (std::size_t p = 0; p < src0.size(); ++p)
    EXPECT_EQ(mine[static_cast<std::size_t>(src_rank[p])].src[p], ref_src[p]) << "source position " << p;
  if (!c.one_plan)
    for (std::size_t p = 0; p < dst0.size(); ++p)
      EXPECT_EQ(mine[static_cast<std::size_t>(dst_rank[p])].dst[p], ref_dst[p]) << "destination position " << p;
  EXPECT_EQ(mine[static_cast<std::size_t>(root)].host, ref_host) << "the root's host buffer";
}

TEST(RankTransfers, EveryOperationOverRanksEqualsTheListInOrder) {
  std::mt19937_64 rng(4949);
  for (int trial = 0; trial < 60; ++trial)
    for (const Case& c : cush_test::random_cases(rng)) {
      const int ranks = 1 + static_cast<int>(rng() % 4);
      run_over_ranks(rng, c, ranks, cush_test::random_ranks(rng, c.src.devices(), ranks), cush_test::random_ranks(rng, c.dst.devices(), ranks),
                     static_cast<int>(rng() % static_cast<unsigned>(ranks)));
      if (HasFatalFailure()) return;
    }
}

TEST(RankTransfers, EachTransferIsALocalCopyASendOrAReceive) {
  // Two positions on two ranks, the host on rank 0: a scatter sends rank 1 its segment.
  const Layout l = Layout::partitioned(std::vector<std::size_t>{3, 5});
  const TransferList list = cush::scatter_transfers(l, Range{0, 8});
  const std::vector<int> ranks{0, 1};
  const cush::detail::RankMap map{{}, ranks, 0};
  const auto zero = cush::detail::rank_steps(list, map, 0), one = cush::detail::rank_steps(list, map, 1);
  ASSERT_EQ(zero.size(), 2U);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_EQ(zero[0].kind, cush::detail::RankStep::Kind::local);
  EXPECT_EQ(zero[1].kind, cush::detail::RankStep::Kind::send);
  EXPECT_EQ(zero[1].peer, 1);
  EXPECT_EQ(one[0].kind, cush::detail::RankStep::Kind::receive);
  EXPECT_EQ(one[0].peer, 0);
  EXPECT_EQ(one[0].index, zero[1].index);
  EXPECT_EQ(one[0].transfer.count, 5U);
}

TEST(RankTransfers, BadRanksAreRejected) {
  const Layout l = Layout::partitioned(std::vector<std::size_t>{3, 5});
  const TransferList list = cush::scatter_transfers(l, Range{0, 8});
  const std::vector<int> short_list{0};
  EXPECT_THROW((void)cush::detail::rank_steps(list, {{}, short_list, 0}, 0), cush::InvalidArgument);
  const std::vector<int> negative{0, -1};
  EXPECT_THROW((void)cush::detail::rank_steps(list, {{}, negative, 0}, 0), cush::InvalidArgument);
  // A transfer that waits for one delivered to a third rank cannot be split.
  TransferList odd(2);
  odd[0] = cush::Transfer{{0, 0}, {1, 0}, 1, -1, false};
  odd[1] = cush::Transfer{{2, 0}, {0, 0}, 1, 0, false};
  const std::vector<int> three{0, 1, 2};
  EXPECT_THROW((void)cush::detail::rank_steps(odd, {three, three, 0}, 0), std::logic_error);
}

}  // namespace
