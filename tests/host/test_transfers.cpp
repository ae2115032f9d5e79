// What moves where: layouts and the transfer lists of host<->device operations, executed on host
// arrays for many random plans.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "cush/error.hpp"
#include "cush/layout.hpp"
#include "host/transfer.hpp"
#include "support/simulate.hpp"

using cush::Layout;
using cush::Range;
using cush::TransferList;
using cush_test::Memory;

namespace {

constexpr std::uint64_t sentinel = 0xDEADBEEFDEADBEEFULL;

std::uint64_t value_of(std::size_t global) { return global * 2654435761ULL + 17; }

Memory<std::uint64_t> device_memory(const Layout& l, std::uint64_t fill) {
  Memory<std::uint64_t> m;
  for (std::size_t d = 0; d < l.devices(); ++d) m.devices.emplace_back(l.capacity(d), fill);
  return m;
}

Layout random_layout(std::mt19937_64& g) {
  const std::size_t p = std::uniform_int_distribution<std::size_t>(1, 8)(g);
  std::uniform_int_distribution<std::size_t> count(0, 50);
  std::vector<std::size_t> counts(p);
  for (auto& c : counts) c = count(g) < 10 ? 0 : count(g);  // some empty segments
  if (std::uniform_int_distribution<int>(0, 4)(g) == 0) {
    std::size_t n = 0;
    for (auto c : counts) n += c;
    return Layout::replicated(n, p);
  }
  return Layout::partitioned(counts);
}

Range random_part(std::mt19937_64& g, std::size_t n) {
  if (n == 0) return Range{0, 0};
  const std::size_t first = std::uniform_int_distribution<std::size_t>(0, n - 1)(g);
  const std::size_t count = std::uniform_int_distribution<std::size_t>(1, n - first)(g);
  return std::uniform_int_distribution<int>(0, 2)(g) == 0 ? Range{0, n} : Range{first, count};
}

}  // namespace

TEST(Layout, PartitionsContiguouslyInSetOrder) {
  const std::vector<std::size_t> counts{3, 0, 5};
  const Layout l = Layout::partitioned(counts);
  EXPECT_EQ(l.size(), 8U);
  EXPECT_FALSE(l.is_replicated());
  EXPECT_EQ(l.segment(0), (Range{0, 3}));
  EXPECT_EQ(l.segment(1), (Range{3, 0}));
  EXPECT_EQ(l.segment(2), (Range{3, 5}));
  const Layout r = Layout::replicated(8, 2);
  EXPECT_TRUE(r.is_replicated());
  EXPECT_EQ(r.segment(1), (Range{0, 8}));
  EXPECT_EQ(cush::intersect(Range{2, 5}, Range{4, 10}), (Range{4, 3}));
  EXPECT_TRUE(cush::intersect(Range{0, 2}, Range{5, 1}).empty());
}

TEST(Transfers, ScatterOfTwoSegmentsIsTwoCopies) {
  const std::vector<std::size_t> counts{3, 5};
  const TransferList list = cush::scatter_transfers(Layout::partitioned(counts), Range{0, 8});
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0], (cush::Transfer{{cush::Location::host, 0}, {0, 0}, 3, -1}));
  EXPECT_EQ(list[1], (cush::Transfer{{cush::Location::host, 3}, {1, 0}, 5, -1}));
  // Elements [2, 5) of the extent: the tail of segment 0 and the head of segment 1.
  const TransferList part = cush::scatter_transfers(Layout::partitioned(counts), Range{2, 3});
  ASSERT_EQ(part.size(), 2U);
  EXPECT_EQ(part[0], (cush::Transfer{{cush::Location::host, 0}, {0, 2}, 1, -1}));
  EXPECT_EQ(part[1], (cush::Transfer{{cush::Location::host, 1}, {1, 0}, 2, -1}));
}

TEST(Transfers, RejectPartsOutsideTheExtentAndBroadcastsToPartitions) {
  const std::vector<std::size_t> counts{3, 5};
  const Layout l = Layout::partitioned(counts);
  EXPECT_THROW((void)cush::scatter_transfers(l, Range{5, 4}), cush::InvalidArgument);
  EXPECT_THROW((void)cush::gather_transfers(l, Range{9, 0}), cush::InvalidArgument);
  EXPECT_THROW((void)cush::broadcast_transfers(l, Range{0, 8}, {}), cush::InvalidArgument);
}

TEST(Transfers, ScatterWritesEachElementOfThePartOnceToItsOwner) {
  std::mt19937_64 g(7);
  for (int k = 0; k < 3000; ++k) {
    const Layout l = random_layout(g);
    const Range part = random_part(g, l.size());
    Memory<std::uint64_t> m = device_memory(l, sentinel);
    for (std::size_t i = 0; i < part.count; ++i) m.host.push_back(value_of(part.offset + i));
    cush_test::simulate(cush::scatter_transfers(l, part), m);
    for (std::size_t d = 0; d < l.devices(); ++d) {
      const Range seg = l.segment(d);
      for (std::size_t i = 0; i < seg.count; ++i) {
        const std::size_t global = seg.offset + i;
        const bool inside = global >= part.offset && global < part.end();
        ASSERT_EQ(m.devices[d][i], inside ? value_of(global) : sentinel) << "case " << k << " device " << d << " element " << i;
        ASSERT_EQ(m.device_writes[d][i], inside ? 1U : 0U) << "case " << k;
      }
    }
  }
}

TEST(Transfers, GatherFillsEveryHostElementOnce) {
  std::mt19937_64 g(8);
  for (int k = 0; k < 3000; ++k) {
    const Layout l = random_layout(g);
    const Range part = random_part(g, l.size());
    Memory<std::uint64_t> m = device_memory(l, 0);
    for (std::size_t d = 0; d < l.devices(); ++d)
      for (std::size_t i = 0; i < l.capacity(d); ++i) m.devices[d][i] = value_of(l.segment(d).offset + i);
    m.host.assign(part.count, sentinel);
    cush_test::simulate(cush::gather_transfers(l, part), m);
    for (std::size_t i = 0; i < part.count; ++i) {
      ASSERT_EQ(m.host[i], value_of(part.offset + i)) << "case " << k << " element " << i;
      ASSERT_EQ(m.host_writes[i], 1U) << "case " << k;
    }
  }
}

TEST(Transfers, BroadcastCompletesEveryReplicaWithAndWithoutPeers) {
  std::mt19937_64 g(9);
  for (int k = 0; k < 3000; ++k) {
    const std::size_t p = std::uniform_int_distribution<std::size_t>(1, 8)(g);
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 200)(g);
    const Layout l = Layout::replicated(n, p);
    const Range part = random_part(g, n);
    cush::BroadcastOptions options;
    options.use_peers = std::uniform_int_distribution<int>(0, 1)(g) == 1;
    options.chunk = std::uniform_int_distribution<std::size_t>(0, 30)(g);
    Memory<std::uint64_t> m = device_memory(l, sentinel);
    for (std::size_t i = 0; i < part.count; ++i) m.host.push_back(value_of(part.offset + i));
    const TransferList list = cush::broadcast_transfers(l, part, options);
    cush_test::simulate(list, m);
    for (std::size_t d = 0; d < p; ++d)
      for (std::size_t i = 0; i < n; ++i) {
        const bool inside = i >= part.offset && i < part.end();
        ASSERT_EQ(m.devices[d][i], inside ? value_of(i) : sentinel) << "case " << k << " device " << d;
        ASSERT_EQ(m.device_writes[d][i], inside ? 1U : 0U) << "case " << k;
      }
    // Host links: with peers each device reads only its share of the host buffer.
    std::size_t from_host = 0;
    for (const auto& t : list) {
      if (t.src.is_host()) from_host += t.count;
      else ASSERT_GE(t.after, 0) << "a peer copy must wait for its data to land";
      if (t.after >= 0) ASSERT_EQ(list[static_cast<std::size_t>(t.after)].dst, t.src) << "case " << k;
    }
    ASSERT_EQ(from_host, options.use_peers && p > 1 ? part.count : part.count * p) << "case " << k;
  }
}

// Slices: the parts of each segment tile it in order, keep granules whole and differ in size by
// at most one granule; bad slices are rejected.
TEST(Layout, SlicesTileEverySegmentInWholeGranules) {
  std::mt19937_64 g(11);
  for (int k = 0; k < 2000; ++k) {
    const Layout l = random_layout(g);
    const std::size_t granularity = std::uniform_int_distribution<std::size_t>(1, 4)(g);
    const std::size_t count = std::uniform_int_distribution<std::size_t>(1, 9)(g);
    for (std::size_t d = 0; d < l.devices(); ++d) {
      const Range seg = l.segment(d);
      std::size_t next = seg.offset;
      std::size_t smallest = seg.count, largest = 0;
      for (std::size_t i = 0; i < count; ++i) {
        const Range r = l.slice(d, cush::Slice{i, count}, granularity);
        ASSERT_EQ(r.offset, next) << "case " << k;
        if (r.end() != seg.end()) ASSERT_EQ(r.count % granularity, 0U) << "case " << k << ": a granule was cut";
        smallest = std::min(smallest, r.count);
        largest = std::max(largest, r.count);
        next = r.end();
      }
      ASSERT_EQ(next, seg.end()) << "case " << k;
      if (seg.count % granularity == 0) EXPECT_LE(largest - smallest, granularity) << "case " << k;
    }
  }
  const Layout l = Layout::partitioned(std::vector<std::size_t>{10, 7});
  EXPECT_EQ(l.slice(1, cush::Slice{0, 3}), (Range{10, 3}));
  EXPECT_EQ(l.slice(1, cush::Slice{2, 3}), (Range{15, 2}));
  EXPECT_EQ(l.slice(0, cush::Slice{1, 2}, 4), (Range{4, 6})) << "10 elements in granules of 4: 4 + 6";
  EXPECT_THROW((void)l.slice(0, cush::Slice{3, 3}), cush::InvalidArgument);
  EXPECT_THROW((void)l.slice(0, cush::Slice{0, 0}), cush::InvalidArgument);
  EXPECT_THROW((void)l.slice(0, cush::Slice{0, 1}, 0), cush::InvalidArgument);
}

// Scattering every slice in turn writes each element once to its owner; a single slice writes
// only its own elements. Gathering every slice fills the host once. Host offsets count from 0.
TEST(Transfers, SlicedScatterAndGatherMoveEachElementOnce) {
  std::mt19937_64 g(12);
  for (int k = 0; k < 1500; ++k) {
    const Layout l = random_layout(g);
    const std::size_t granularity = std::uniform_int_distribution<std::size_t>(1, 3)(g);
    const std::size_t count = std::uniform_int_distribution<std::size_t>(1, 6)(g);
    const std::size_t only = std::uniform_int_distribution<std::size_t>(0, count - 1)(g);
    Memory<std::uint64_t> m = device_memory(l, sentinel);
    for (std::size_t i = 0; i < l.size(); ++i) m.host.push_back(value_of(i));
    cush_test::simulate(cush::scatter_transfers(l, cush::Slice{only, count}, granularity), m);
    for (std::size_t d = 0; d < l.devices(); ++d) {
      const Range r = l.slice(d, cush::Slice{only, count}, granularity);
      for (std::size_t i = 0; i < l.capacity(d); ++i) {
        const std::size_t global = l.segment(d).offset + i;
        const bool inside = global >= r.offset && global < r.end();
        ASSERT_EQ(m.devices[d][i], inside ? value_of(global) : sentinel) << "case " << k << " device " << d;
        ASSERT_EQ(m.device_writes[d][i], inside ? 1U : 0U) << "case " << k;
      }
    }
    std::vector<std::vector<unsigned>> writes(l.devices());
    for (std::size_t d = 0; d < l.devices(); ++d) writes[d].assign(l.capacity(d), 0);
    for (std::size_t i = 0; i < count; ++i) {
      cush_test::simulate(cush::scatter_transfers(l, cush::Slice{i, count}, granularity), m);
      for (std::size_t d = 0; d < l.devices(); ++d)
        for (std::size_t e = 0; e < l.capacity(d); ++e) writes[d][e] += m.device_writes[d][e];
    }
    for (std::size_t d = 0; d < l.devices(); ++d)
      for (std::size_t i = 0; i < l.capacity(d); ++i) {
        ASSERT_EQ(m.devices[d][i], value_of(l.segment(d).offset + i)) << "case " << k;
        ASSERT_EQ(writes[d][i], 1U) << "case " << k << ": every slice once";
      }

    m.host.assign(l.size(), sentinel);
    std::vector<unsigned> host_writes(l.size(), 0);
    for (std::size_t i = 0; i < count; ++i) {
      cush_test::simulate(cush::gather_transfers(l, cush::Slice{i, count}, granularity), m);
      for (std::size_t e = 0; e < l.size(); ++e) host_writes[e] += m.host_writes[e];
    }
    for (std::size_t i = 0; i < l.size(); ++i) {
      ASSERT_EQ(m.host[i], value_of(i)) << "case " << k << " element " << i;
      ASSERT_EQ(host_writes[i], 1U) << "case " << k;
    }
  }
}
