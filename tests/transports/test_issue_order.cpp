// The order in which the copy engines' transport issues a transfer list: the transfers across
// links first, never one before the transfer it waits for (pure host code).

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "cush/error.hpp"
#include "ops/device_transfers.hpp"
#include "transports/issue_order.hpp"

using cush::Layout;
using cush::Range;
using cush::Transfer;
using cush::TransferList;
using cush::detail::issue_order;

namespace {

Transfer copy(int from, int to, std::size_t count = 4, int after = -1) {
  return Transfer{{from, 0}, {to, 0}, count, after, false};
}

std::vector<bool> crosses(const TransferList& list) {
  std::vector<bool> remote;
  for (const Transfer& t : list) remote.push_back(t.count != 0 && t.src.pos != t.dst.pos);
  return remote;
}

// Checks the properties issue_order promises of `order` for `list`.
void expect_a_valid_order(const TransferList& list, const std::vector<bool>& remote,
                          const std::vector<std::size_t>& order) {
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> all(list.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  ASSERT_EQ(sorted, all) << "not a permutation";
  std::vector<std::size_t> at(list.size());
  for (std::size_t k = 0; k < order.size(); ++k) at[order[k]] = k;
  // What some remote transfer waits for, directly or through others: issued early on purpose.
  std::vector<bool> needed(list.size(), false);
  for (std::size_t i = list.size(); i-- > 0;)
    if ((remote[i] || needed[i]) && list[i].after >= 0) needed[static_cast<std::size_t>(list[i].after)] = true;
  const auto free_local = [&](std::size_t i) { return !remote[i] && !needed[i]; };
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].after >= 0) EXPECT_LT(at[static_cast<std::size_t>(list[i].after)], at[i]) << i << " before what it waits for";
    for (std::size_t j = 0; j < list.size(); ++j) {
      if (i < j && ((remote[i] && remote[j]) || (free_local(i) && free_local(j))))
        EXPECT_LT(at[i], at[j]) << i << " and " << j << " swapped within their group";
      if (remote[i] && free_local(j)) EXPECT_LT(at[i], at[j]) << "local " << j << " before remote " << i;
    }
  }
}

}  // namespace

TEST(IssueOrder, TransfersAcrossLinksComeFirst) {
  const TransferList list{copy(0, 0), copy(0, 1), copy(1, 1), copy(1, 0)};
  EXPECT_EQ(issue_order(list, crosses(list)), (std::vector<std::size_t>{1, 3, 0, 2}));
}

TEST(IssueOrder, ATransferNeverPrecedesWhatItWaitsFor) {
  // Transfer 2 crosses a link once local copy 0 is done: 0 is issued just before it.
  const TransferList list{copy(0, 0), copy(0, 1), copy(0, 1, 4, 0), copy(1, 1)};
  EXPECT_EQ(issue_order(list, crosses(list)), (std::vector<std::size_t>{1, 0, 2, 3}));
  // A chain: each waits for the one before.
  const TransferList chain{copy(0, 1), copy(1, 2, 4, 0), copy(2, 3, 4, 1), copy(3, 3, 4, 2)};
  EXPECT_EQ(issue_order(chain, crosses(chain)), (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(IssueOrder, WhatARemoteTransferWaitsForMovesUpWithIt) {
  // Local 1 is needed by remote 2 and goes first; local 0 is not, and goes last.
  const TransferList list{copy(0, 0), copy(1, 1), copy(1, 0, 4, 1)};
  EXPECT_EQ(issue_order(list, crosses(list)), (std::vector<std::size_t>{1, 2, 0}));
}

TEST(IssueOrder, EmptyTransfersKeepTheirPlaceAmongTheLocalOnes) {
  const TransferList list{copy(0, 1, 0), copy(0, 0), copy(1, 0)};
  EXPECT_EQ(issue_order(list, crosses(list)), (std::vector<std::size_t>{2, 0, 1}));
}

TEST(IssueOrder, TheAllToAllStartsItsLinksBeforeItsLocalCopies) {
  for (std::size_t p : {2, 3, 4, 8}) {
    const Layout layout = Layout::partitioned(std::vector<std::size_t>(p, 16 * p));
    const TransferList list = cush::all_to_all_transfers(layout, layout, cush::all_to_all_counts(layout, layout));
    const std::vector<bool> remote = crosses(list);
    const std::vector<std::size_t> order = issue_order(list, remote);
    expect_a_valid_order(list, remote, order);
    const std::size_t links = p * (p - 1);
    for (std::size_t k = 0; k < order.size(); ++k) EXPECT_EQ(remote[order[k]], k < links) << p << " devices, place " << k;
  }
}

TEST(IssueOrder, TheChainBroadcastKeepsItsRounds) {
  const Layout layout = Layout::replicated(1000, 4);
  const TransferList list = cush::device_broadcast_transfers(layout, 2, Range{0, 1000}, true, 64);
  const std::vector<bool> remote = crosses(list);
  const std::vector<std::size_t> order = issue_order(list, remote);
  expect_a_valid_order(list, remote, order);
  std::vector<std::size_t> as_listed(list.size());
  std::iota(as_listed.begin(), as_listed.end(), std::size_t{0});
  EXPECT_EQ(order, as_listed);  // every transfer crosses a link: nothing moves
}

TEST(IssueOrder, RandomListsKeepEveryPromise) {
  std::mt19937 rng(45);
  for (int trial = 0; trial < 500; ++trial) {
    const int devices = 1 + static_cast<int>(rng() % 5);
    TransferList list;
    const std::size_t n = rng() % 24;
    for (std::size_t i = 0; i < n; ++i) {
      const int after = i > 0 && rng() % 3 == 0 ? static_cast<int>(rng() % i) : -1;
      list.push_back(copy(static_cast<int>(rng() % devices), static_cast<int>(rng() % devices), rng() % 4, after));
    }
    const std::vector<bool> remote = crosses(list);
    expect_a_valid_order(list, remote, issue_order(list, remote));
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(IssueOrder, BadInputIsRejected) {
  const TransferList list{copy(0, 1), copy(1, 0)};
  EXPECT_THROW((void)issue_order(list, std::vector<bool>{true}), cush::InvalidArgument);
  const TransferList ahead{copy(0, 1, 4, 1), copy(1, 0)};
  EXPECT_THROW((void)issue_order(ahead, crosses(ahead)), cush::InvalidArgument);
  const TransferList itself{copy(0, 1, 4, 0)};
  EXPECT_THROW((void)issue_order(itself, crosses(itself)), cush::InvalidArgument);
}
