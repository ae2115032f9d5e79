// What moves where among GPUs: the transfer lists of copy, scatter, gather, all-gather,
// all-to-all, broadcast, reduce and all-reduce, executed on host arrays for many random plans,
// plus the transport table. No GPU needed.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <set>
#include <string>

#include "support/count_sums.hpp"
#include "ops/device_transfers.hpp"
#include "transports/peer_kernel.hpp"
#include "cush/error.hpp"
#include "cush/reduce.hpp"
#include "cush/transport.hpp"
#include "support/simulate_devices.hpp"

using cush::Collective;
using cush::Layout;
using cush::Range;
using cush::Transport;
using cush::TransferList;
using cush_test::Buffers;

namespace {

using Value = std::uint64_t;
constexpr Value untouched = 0xDEADBEEFDEADBEEFULL;
constexpr int cases = 3000;

Value value_of(std::size_t global, std::size_t replica = 0) { return global * 2654435761ULL + 17 + replica * 1000003ULL; }

std::vector<std::size_t> random_counts(std::mt19937_64& g, std::size_t p, std::size_t max = 60) {
  std::uniform_int_distribution<std::size_t> count(0, max);
  std::vector<std::size_t> counts(p);
  for (auto& c : counts) c = count(g) < max / 6 ? 0 : count(g);  // some empty segments
  return counts;
}

std::size_t random_devices(std::mt19937_64& g) { return std::uniform_int_distribution<std::size_t>(1, 8)(g); }

// Device ids: a random injective map of positions onto 8 GPUs.
std::vector<int> random_ids(std::mt19937_64& g, std::size_t p) {
  std::vector<int> all(8);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), g);
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(p)};
}

Layout random_layout(std::mt19937_64& g, std::size_t n, std::size_t p, bool replicated) {
  if (replicated) return Layout::replicated(n, p);
  // Random cut points of [0, n) into p segments, some empty.
  std::vector<std::size_t> cuts(p - 1);
  std::uniform_int_distribution<std::size_t> at(0, n);
  for (auto& c : cuts) c = at(g);
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::size_t> counts;
  std::size_t prev = 0;
  for (std::size_t c : cuts) {
    counts.push_back(c - prev);
    prev = c;
  }
  counts.push_back(n - prev);
  return Layout::partitioned(counts);
}

// Buffers of a layout, each element holding the value of its global index (replica r of a
// replicated layout: value_of(g, r)).
Buffers<Value> filled(const Layout& l, bool distinct_replicas = false) {
  Buffers<Value> b(l.devices());
  for (std::size_t d = 0; d < l.devices(); ++d) {
    const Range& seg = l.segment(d);
    for (std::size_t k = 0; k < seg.count; ++k) b[d].push_back(value_of(seg.offset + k, distinct_replicas ? d : 0));
  }
  return b;
}

Buffers<Value> blank(const Layout& l) {
  Buffers<Value> b(l.devices());
  for (std::size_t d = 0; d < l.devices(); ++d) b[d].assign(l.capacity(d), untouched);
  return b;
}

Range random_part(std::mt19937_64& g, std::size_t n) {
  const std::size_t first = std::uniform_int_distribution<std::size_t>(0, n - 1)(g);
  const std::size_t count = std::uniform_int_distribution<std::size_t>(1, n - first)(g);
  return std::uniform_int_distribution<int>(0, 2)(g) == 0 ? Range{0, n} : Range{first, count};
}

}  // namespace

// --- copy, scatter, gather, all-gather ------------------------------------------------------

TEST(DeviceCopy, RandomLayoutsMoveEveryElementOfThePartOnce) {
  std::mt19937_64 g(41);
  for (int c = 0; c < cases; ++c) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 300)(g);
    const std::size_t p = random_devices(g);
    const std::size_t q = random_devices(g);
    const bool src_rep = g() % 4 == 0;
    const bool dst_rep = g() % 4 == 0;
    const Layout src = random_layout(g, n, p, src_rep);
    const Layout dst = random_layout(g, n, q, dst_rep);
    const std::vector<int> src_ids = random_ids(g, p);
    const std::vector<int> dst_ids = random_ids(g, q);
    const Range part = random_part(g, n);
    SCOPED_TRACE("case " + std::to_string(c) + ": n " + std::to_string(n) + ", " + std::to_string(p) + " -> " +
                 std::to_string(q) + (src_rep ? " replicated" : "") + (dst_rep ? " into replicated" : ""));
    const TransferList list = cush::copy_transfers(src, src_ids, dst, dst_ids, part);
    Buffers<Value> out = blank(dst);
    const auto writes = cush_test::simulate_devices(list, filled(src), out);
    for (std::size_t j = 0; j < q; ++j) {
      const Range& seg = dst.segment(j);
      for (std::size_t k = 0; k < seg.count; ++k) {
        const std::size_t global = seg.offset + k;
        const bool inside = global >= part.offset && global < part.end();
        ASSERT_EQ(out[j][k], inside ? value_of(global) : untouched) << "replica/segment " << j << " element " << global;
        ASSERT_EQ(writes[j][k], inside ? 1U : 0U);
      }
    }
    ASSERT_EQ(cush_test::unordered_conflict(list, false), "");
    // From a replicated source, a replica on the destination's own GPU is used when there is one.
    if (src_rep)
      for (const auto& t : list) {
        const int to = dst_ids[static_cast<std::size_t>(t.dst.pos)];
        if (std::find(src_ids.begin(), src_ids.end(), to) != src_ids.end())
          ASSERT_EQ(src_ids[static_cast<std::size_t>(t.src.pos)], to);
      }
  }
}

TEST(DeviceCopy, ScatterReadsOnlyTheRootAndGatherWritesOnlyTheRoot) {
  std::mt19937_64 g(42);
  for (int c = 0; c < cases; ++c) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 200)(g);
    const std::size_t p = random_devices(g);
    const std::size_t q = random_devices(g);
    const Layout rep = Layout::replicated(n, p);
    const Layout part = random_layout(g, n, q, false);
    const std::vector<int> ids_p = random_ids(g, p);
    const std::vector<int> ids_q = random_ids(g, q);
    const int root = static_cast<int>(g() % p);
    // Scatter: every piece from replica `root` (replicas hold distinct values to tell them apart).
    const TransferList s = cush::copy_transfers(rep, ids_p, part, ids_q, Range{0, n}, cush::CopyRoots{root, -1});
    Buffers<Value> out = blank(part);
    cush_test::simulate_devices(s, filled(rep, true), out);
    for (std::size_t j = 0; j < q; ++j)
      for (std::size_t k = 0; k < part.segment(j).count; ++k)
        ASSERT_EQ(out[j][k], value_of(part.segment(j).offset + k, static_cast<std::size_t>(root)));
    // Gather: only replica `root` written, all of it.
    const TransferList gl = cush::copy_transfers(part, ids_q, rep, ids_p, Range{0, n}, cush::CopyRoots{-1, root});
    Buffers<Value> back = blank(rep);
    const auto writes = cush_test::simulate_devices(gl, filled(part), back);
    for (std::size_t r = 0; r < p; ++r)
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(back[r][k], static_cast<int>(r) == root ? value_of(k) : untouched);
        ASSERT_EQ(writes[r][k], static_cast<int>(r) == root ? 1U : 0U);
      }
  }
}

TEST(DeviceCopy, AllGatherOfEqualSegmentsOnTheSameGpusHasOneLocalCopyPerDevice) {
  const std::vector<std::size_t> counts{4, 4, 4};
  const Layout src = Layout::partitioned(counts);
  const Layout dst = Layout::replicated(12, 3);
  const std::vector<int> ids{2, 0, 1};
  const TransferList list = cush::copy_transfers(src, ids, dst, ids, Range{0, 12});
  ASSERT_EQ(list.size(), 9U);
  // The local copies first (step 0), in replica order: replica 1 (device 0) takes segment 1 from
  // position 1 at its offset 4.
  EXPECT_EQ(list[1], (cush::Transfer{{1, 0}, {1, 4}, 4, -1, false}));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(list[i].src.pos, list[i].dst.pos) << i;
  // Step 1, each device to the next id (0 -> 1 -> 2 -> 0), in replica order: replica 0 (device 2)
  // takes segment 2 from position 2 (device 1), replica 2 (device 1) segment 1 from device 0.
  EXPECT_EQ(list[3], (cush::Transfer{{2, 0}, {0, 8}, 4, -1, false}));
  EXPECT_EQ(list[5], (cush::Transfer{{1, 0}, {2, 4}, 4, -1, false}));
}

// At every step of an all-gather each device receives from one other: the k-th copy that each
// source issues goes to a different destination, for any device order.
TEST(DeviceCopy, AllGatherStepsSpreadOverTheDestinations) {
  for (const std::vector<int>& ids : {std::vector<int>{3, 1, 0, 2}, std::vector<int>{0, 1, 2, 3, 4}, std::vector<int>{5, 2}}) {
    const std::size_t p = ids.size();
    const Layout src = Layout::partitioned(std::vector<std::size_t>(p, 7));
    const Layout dst = Layout::replicated(7 * p, p);
    const TransferList list = cush::copy_transfers(src, ids, dst, ids, Range{0, 7 * p});
    ASSERT_EQ(list.size(), p * p);
    std::vector<std::vector<int>> queue(p);  // destinations by source, in issue order
    for (const auto& t : list) queue[static_cast<std::size_t>(t.src.pos)].push_back(t.dst.pos);
    for (std::size_t k = 0; k < p; ++k) {
      std::vector<int> at_k;
      for (const auto& q : queue) at_k.push_back(q.at(k));
      std::sort(at_k.begin(), at_k.end());
      EXPECT_EQ(std::adjacent_find(at_k.begin(), at_k.end()), at_k.end()) << "step " << k << ", " << p << " devices";
    }
  }
}

TEST(DeviceCopy, RejectsMismatchedPlansAndRoots) {
  const std::vector<std::size_t> a{3, 4};
  const std::vector<std::size_t> b{5, 3};
  const std::vector<int> ids{0, 1};
  EXPECT_THROW((void)cush::copy_transfers(Layout::partitioned(a), ids, Layout::partitioned(b), ids, Range{0, 7}),
               cush::InvalidArgument);
  EXPECT_THROW((void)cush::copy_transfers(Layout::partitioned(a), ids, Layout::partitioned(a), ids, Range{2, 9}),
               cush::InvalidArgument);
  EXPECT_THROW((void)cush::copy_transfers(Layout::partitioned(a), ids, Layout::replicated(7, 2), ids, Range{0, 7},
                                          cush::CopyRoots{0, -1}),
               cush::InvalidArgument);  // source root on a partitioned source
  EXPECT_THROW((void)cush::copy_transfers(Layout::partitioned(a), ids, Layout::replicated(7, 2), ids, Range{0, 7},
                                          cush::CopyRoots{-1, 2}),
               cush::InvalidArgument);  // no position 2
}

// --- all-to-all ------------------------------------------------------------------------------

TEST(AllToAll, CountsOfARowBlockTransposeAreProductsOfTheBlocks) {
  std::mt19937_64 g(43);
  for (int c = 0; c < 500; ++c) {
    const std::size_t rows = std::uniform_int_distribution<std::size_t>(1, 40)(g);
    const std::size_t cols = std::uniform_int_distribution<std::size_t>(1, 40)(g);
    const std::size_t p = random_devices(g);
    const std::size_t q = random_devices(g);
    const Layout row_split = random_layout(g, rows, p, false);
    const Layout col_split = random_layout(g, cols, q, false);
    std::vector<std::size_t> src_counts;
    std::vector<std::size_t> dst_counts;
    for (const Range& r : row_split.segments()) src_counts.push_back(r.count * cols);
    for (const Range& r : col_split.segments()) dst_counts.push_back(r.count * rows);
    const std::vector<std::size_t> counts =
        cush::all_to_all_counts(Layout::partitioned(src_counts), Layout::partitioned(dst_counts));
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = 0; j < q; ++j)
        ASSERT_EQ(counts[i * q + j], row_split.segment(i).count * col_split.segment(j).count);
  }
}

TEST(AllToAll, CountsThatAreNotWholeNumbersAreRejected) {
  const std::vector<std::size_t> a{3, 4};
  const std::vector<std::size_t> b{4, 3};
  EXPECT_THROW((void)cush::all_to_all_counts(Layout::partitioned(a), Layout::partitioned(b)), cush::InvalidArgument);
}

TEST(AllToAll, RandomUnevenCountsDeliverEveryPieceInSourceOrder) {
  std::mt19937_64 g(44);
  for (int c = 0; c < cases; ++c) {
    const std::size_t p = random_devices(g);
    const std::size_t q = random_devices(g);
    std::vector<std::size_t> counts(p * q);
    for (auto& x : counts) x = g() % 5 == 0 ? 0 : g() % 20;
    const auto [rows, cols] = cush_test::count_sums(counts, p, q);
    if (std::accumulate(rows.begin(), rows.end(), std::size_t{0}) == 0) continue;
    const Layout src = Layout::partitioned(rows);
    const Layout dst = Layout::partitioned(cols);
    const TransferList list = cush::all_to_all_transfers(src, dst, counts);
    Buffers<Value> out = blank(dst);
    const auto writes = cush_test::simulate_devices(list, filled(src), out);
    // Reference: destination j is piece (0, j), piece (1, j), ... of the sources.
    for (std::size_t j = 0; j < q; ++j) {
      std::vector<Value> expected;
      for (std::size_t i = 0; i < p; ++i) {
        std::size_t start = 0;
        for (std::size_t k = 0; k < j; ++k) start += counts[i * q + k];
        for (std::size_t k = 0; k < counts[i * q + j]; ++k) expected.push_back(value_of(src.segment(i).offset + start + k));
      }
      ASSERT_EQ(out[j], expected) << "destination " << j << " of case " << c;
      for (unsigned w : writes[j]) ASSERT_EQ(w, 1U);
    }
    ASSERT_EQ(cush_test::unordered_conflict(list, false), "");
  }
}

TEST(AllToAll, RejectsCountsThatDoNotAddUp) {
  const std::vector<std::size_t> a{2, 2};
  const Layout l = Layout::partitioned(a);
  const std::vector<std::size_t> bad_rows{1, 1, 1, 2};  // row 1 sums to 3
  const std::vector<std::size_t> wrong_size{1, 1, 1};
  EXPECT_THROW((void)cush::all_to_all_transfers(l, l, bad_rows), cush::InvalidArgument);
  EXPECT_THROW((void)cush::all_to_all_transfers(l, l, wrong_size), cush::InvalidArgument);
  EXPECT_THROW((void)cush::all_to_all_transfers(Layout::replicated(4, 2), l, std::vector<std::size_t>{2, 0, 0, 2}),
               cush::InvalidArgument);
}

// --- broadcast, reduce, all-reduce -------------------------------------------------------------

TEST(DeviceBroadcast, EveryReplicaGetsTheRootsPartDirectOrRelayed) {
  std::mt19937_64 g(45);
  for (int c = 0; c < cases; ++c) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 200)(g);
    const std::size_t p = random_devices(g);
    const std::size_t root = g() % p;
    const bool split = g() % 2 == 0;
    const std::size_t chunk = g() % 3 == 0 ? 0 : std::uniform_int_distribution<std::size_t>(1, 40)(g);
    const Range part = random_part(g, n);
    const Layout l = Layout::replicated(n, p);
    const TransferList list = cush::device_broadcast_transfers(l, root, part, split, chunk);
    Buffers<Value> b = filled(l, true);
    cush_test::simulate_devices(list, b, b);
    for (std::size_t r = 0; r < p; ++r)
      for (std::size_t k = 0; k < n; ++k) {
        const bool inside = k >= part.offset && k < part.end();
        ASSERT_EQ(b[r][k], value_of(k, inside ? root : r)) << "replica " << r << " element " << k;
      }
    ASSERT_EQ(cush_test::unordered_conflict(list, true), "") << "case " << c;
    // Relayed on three or more devices: the part leaves the root once, not p - 1 times, and no
    // device sends more than the part; each device receives it from one sender only (no two
    // senders share its incoming link); no copy is larger than the chunk, and every forward waits
    // for the copy that brought its elements.
    if (split && p >= 3) {
      std::size_t from_root = 0;
      std::vector<std::size_t> sent(p, 0);
      std::vector<std::set<int>> senders(p);
      for (const auto& t : list) {
        sent[static_cast<std::size_t>(t.src.pos)] += t.count;
        senders[static_cast<std::size_t>(t.dst.pos)].insert(t.src.pos);
        from_root += t.src.pos == static_cast<int>(root) ? t.count : 0;
        if (chunk != 0) ASSERT_LE(t.count, chunk);
        if (t.src.pos != static_cast<int>(root)) {
          ASSERT_GE(t.after, 0);
          const auto& in = list[static_cast<std::size_t>(t.after)];
          ASSERT_EQ(in.dst.pos, t.src.pos);
          ASSERT_EQ(in.dst.offset, t.src.offset);
          ASSERT_EQ(in.count, t.count);
        }
      }
      ASSERT_EQ(from_root, part.count) << "case " << c;
      for (std::size_t r = 0; r < p; ++r) {
        ASSERT_LE(sent[r], part.count) << "device " << r << ", case " << c;
        ASSERT_EQ(senders[r].size(), r == root || part.empty() ? 0U : 1U) << "device " << r << ", case " << c;
      }
    }
  }
}

namespace {
template <class T>
void check_reductions(std::uint64_t seed, const std::function<T(T, T)>& op) {
  std::mt19937_64 g(seed);
  for (int c = 0; c < cases / 3; ++c) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 300)(g);
    const std::size_t p = random_devices(g);
    const std::size_t granularity = std::uniform_int_distribution<std::size_t>(1, 8)(g);
    const Layout l = Layout::replicated(n, p);
    Buffers<T> in(p, std::vector<T>(n));
    for (auto& b : in)
      for (T& x : b) x = static_cast<T>(g() % 1000) - static_cast<T>(std::is_signed_v<T> ? 500 : 0);
    std::vector<T> expected = in[0];
    for (std::size_t r = 1; r < p; ++r)
      for (std::size_t k = 0; k < n; ++k) expected[k] = op(expected[k], in[r][k]);

    Buffers<T> all = in;
    const TransferList ar = cush::all_reduce_transfers(l, Range{0, n}, granularity);
    cush_test::simulate_devices<T>(ar, all, all, op);
    for (std::size_t r = 0; r < p; ++r) ASSERT_EQ(all[r], expected) << "all-reduce replica " << r << ", case " << c;
    ASSERT_EQ(cush_test::unordered_conflict(ar, true), "");
    // Each share but the last starts on a multiple of the granularity.
    for (const auto& t : ar) ASSERT_EQ(t.src.offset % granularity, 0U);

    const std::size_t root = g() % p;
    Buffers<T> one = in;
    const TransferList rd = cush::reduce_transfers(l, root, Range{0, n});
    cush_test::simulate_devices<T>(rd, one, one, op);
    for (std::size_t r = 0; r < p; ++r) ASSERT_EQ(one[r], r == root ? expected : in[r]) << "reduce replica " << r;
    ASSERT_EQ(cush_test::unordered_conflict(rd, true), "");
  }
}
}  // namespace

TEST(Reduction, SumMinMaxOverRandomReplicasMatchTheReference) {
  check_reductions<std::int64_t>(46, [](std::int64_t a, std::int64_t b) { return a + b; });
  check_reductions<std::int32_t>(47, [](std::int32_t a, std::int32_t b) { return std::min(a, b); });
  check_reductions<std::uint64_t>(48, [](std::uint64_t a, std::uint64_t b) { return std::max(a, b); });
}

TEST(Reduction, NeedsAReplicatedLayoutAndAValidRoot) {
  const std::vector<std::size_t> a{2, 2};
  EXPECT_THROW((void)cush::all_reduce_transfers(Layout::partitioned(a), Range{0, 4}), cush::InvalidArgument);
  EXPECT_THROW((void)cush::reduce_transfers(Layout::replicated(4, 2), 2, Range{0, 4}), cush::InvalidArgument);
  EXPECT_THROW((void)cush::device_broadcast_transfers(Layout::partitioned(a), 0, Range{0, 4}, false),
               cush::InvalidArgument);
  EXPECT_TRUE(cush::all_reduce_transfers(Layout::replicated(4, 1), Range{0, 4}).empty());
}

TEST(Reduction, ElementTypesMapFromCxxTypes) {
  static_assert(cush::element_type_of<float>() == cush::ElementType::float32);
  static_assert(cush::element_type_of<const double>() == cush::ElementType::float64);
  static_assert(cush::element_type_of<std::int8_t>() == cush::ElementType::int8);
  static_assert(cush::element_type_of<unsigned char>() == cush::ElementType::uint8);
  static_assert(cush::element_type_of<int>() == cush::ElementType::int32);
  static_assert(cush::element_type_of<std::uint64_t>() == cush::ElementType::uint64);
  EXPECT_EQ(cush::size_of(cush::ElementType::int64), 8U);
  EXPECT_STREQ(cush::to_string(cush::ReduceOp::max), "max");
  EXPECT_STREQ(cush::to_string(cush::ElementType::uint32), "uint32");
}

// --- the transport table --------------------------------------------------------------------

TEST(Simulator, FindsTransfersThatTouchTheSameElementsWithoutAnOrder) {
  // Two copies into device 1, overlapping at element 3: racy unless the second waits for the first.
  TransferList list{cush::Transfer{{0, 0}, {1, 0}, 4, -1, false}, cush::Transfer{{2, 0}, {1, 3}, 2, -1, false}};
  EXPECT_NE(cush_test::unordered_conflict(list, true), "");
  list[1].after = 0;
  EXPECT_EQ(cush_test::unordered_conflict(list, true), "");
  // A read of what another transfer writes, in the same plan.
  const TransferList read_write{cush::Transfer{{0, 0}, {1, 0}, 4, -1, false}, cush::Transfer{{1, 2}, {2, 0}, 2, -1, false}};
  EXPECT_NE(cush_test::unordered_conflict(read_write, true), "");
  EXPECT_EQ(cush_test::unordered_conflict(read_write, false), "");  // two plans: different buffers
}

// The peer_kernel's all-reduce shares (transports/peer_kernel.hpp): every element in exactly one
// share, shares in order, each bound on a granule but where the rest (the last partial granule)
// has gone (after it every bound is the end), as even as granules allow.
TEST(PeerKernelReduction, SharesCoverThePartOnGranules) {
  std::mt19937_64 g(49);
  for (int c = 0; c < cases; ++c) {
    const std::size_t count = std::uniform_int_distribution<std::size_t>(0, 5000)(g);
    const std::size_t parts = std::uniform_int_distribution<std::size_t>(1, 16)(g);
    const std::size_t granularity = std::uniform_int_distribution<std::size_t>(1, 64)(g);
    const std::vector<std::size_t> b = cush::detail::peer_reduction_shares(count, parts, granularity);
    ASSERT_EQ(b.size(), parts + 1);
    ASSERT_EQ(b.front(), 0U);
    ASSERT_EQ(b.back(), count);
    std::size_t smallest = count, largest = 0;
    for (std::size_t k = 0; k < parts; ++k) {
      ASSERT_LE(b[k], b[k + 1]);
      if (k + 1 < parts) ASSERT_TRUE(b[k + 1] % granularity == 0 || b[k + 1] == count) << "case " << c << ", share " << k;
      if (k + 1 < parts) {
        smallest = std::min(smallest, b[k + 1] - b[k]);
        largest = std::max(largest, b[k + 1] - b[k]);
      }
    }
    if (parts > 2) ASSERT_LE(largest - smallest, granularity) << "case " << c;
  }
}

// A spread reduce's shares: the root's is empty, the others are the shares of the others alone
// (so they cover the part, in order, on granules), whatever position the root has.
TEST(PeerKernelReduction, SpreadSharesLeaveTheRootsEmpty) {
  std::mt19937_64 g(50);
  for (int c = 0; c < cases; ++c) {
    const std::size_t count = std::uniform_int_distribution<std::size_t>(0, 5000)(g);
    const std::size_t parts = std::uniform_int_distribution<std::size_t>(2, 16)(g);
    const std::size_t root = std::uniform_int_distribution<std::size_t>(0, parts - 1)(g);
    const std::size_t granularity = std::uniform_int_distribution<std::size_t>(1, 64)(g);
    const std::vector<std::size_t> b = cush::detail::peer_reduce_spread_shares(count, parts, root, granularity);
    ASSERT_EQ(b.size(), parts + 1);
    ASSERT_EQ(b[root], b[root + 1]) << "case " << c << ": the root's share is not empty";
    std::vector<std::size_t> others = b;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(root));
    ASSERT_EQ(others, cush::detail::peer_reduction_shares(count, parts - 1, granularity)) << "case " << c;
  }
  EXPECT_THROW((void)cush::detail::peer_reduce_spread_shares(10, 1, 0, 1), cush::InvalidArgument);
  EXPECT_THROW((void)cush::detail::peer_reduce_spread_shares(10, 4, 4, 1), cush::InvalidArgument);
}
