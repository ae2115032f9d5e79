// Fuzz harness of the GPU<->GPU transfer planner (libcush/ops/device_transfers.hpp).
//
// Each input decodes one operation of the planner and its arguments:
//  - copy_transfers (redistribution, all-gather, device scatter and gather): two plans of 0..2048
//    elements on 1..8 GPUs each (ids drawn from the same 8 GPUs, so the sets may overlap), laid out
//    by any distribution (uniform, memory capacity or bandwidth, weighted, custom cuts, replicated)
//    with any granularity, a part of the extent and CopyRoots;
//  - all_to_all_counts of two such plans, then all_to_all_transfers with the counts it derived;
//  - all_to_all_transfers with a random counts matrix, sometimes spoiled (an entry off by one, a
//    wrong size, entries that add up only modulo 2^64, a replicated side);
//  - device_broadcast_transfers (direct or split), reduce_transfers and all_reduce_transfers on one
//    plan, with a root, a part and a granularity.
// Arguments may break the contract: extents that differ, parts past the extent, roots past the set.
//
// Invariants. The planner throws cush::InvalidArgument exactly when the arguments break its
// contract (all_to_all_counts of an empty extent may also return all counts 0), and nothing else.
// An accepted list is run in order on host buffers holding a distinct value per device and element
// (tag()); every transfer must name positions of its plans, stay inside both buffers, wait only on
// an earlier transfer, and be ordered (through `after` chains) after every earlier transfer that
// touches the same elements with a write. Ordered so, any schedule gives the result of the
// in-order run, which must be the operation's:
//  - copy: each destination element in the part is written once, with the source element of the
//    same global index (from a replicated source: the root replica, else the one on the same GPU if
//    there is one); the rest of the destination, and replicas other than its root, are untouched;
//  - all-to-all: destination segment j is pieces (0, j), (1, j), ... of the source segments, each
//    element written once; derived counts are s_i * d_j / n;
//  - broadcast: every replica holds the root's part, each element written once; split, no device
//    sends more than the part and each receives it from one sender;
//  - reduce / all-reduce: the root's (every replica's) part holds the sum of all replicas, each
//    replica counted once; all-reduce shares start on multiples of the granularity; nothing else
//    changes.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cush/distribution.hpp"
#include "cush/error.hpp"
#include "cush/layout.hpp"
#include "decode.hpp"
#include "support/count_sums.hpp"
#include "fuzz.hpp"
#include "ops/device_transfers.hpp"

using cush::Layout;
using cush::Range;
using cush::Transfer;
using cush::TransferList;
using cush_fuzz::Bytes;

namespace {

constexpr std::size_t gpus = 8;  // device ids are drawn from 0..7; a plan has 1..8 of them
constexpr std::size_t huge = std::numeric_limits<std::size_t>::max();

using Buffers = std::vector<std::vector<double>>;

// --- values -----------------------------------------------------------------------------------

// Element k of the buffer at position `pos` before the operation: distinct for every (pos, k), and
// exact in sums of up to 15 tags per position, whose low 32 bits count in hex digit `pos` how many
// times that position contributed (so a sum tells exactly which replicas were reduced, how often).
double tag(std::size_t pos, std::size_t k) {
  return std::ldexp(1.0, 4 * static_cast<int>(pos)) + std::ldexp(static_cast<double>(k), 32);
}

// The sum of element k over `p` replicas, each counted once.
double sum_of_tags(std::size_t p, std::size_t k) {
  double sum = 0;
  for (std::size_t r = 0; r < p; ++r) sum += tag(r, k);
  return sum;
}

// Buffers of a layout filled with tags; `sign` -1 for a destination plan, told apart from sources.
Buffers filled(const Layout& l, double sign) {
  Buffers b(l.devices());
  for (std::size_t pos = 0; pos < l.devices(); ++pos) {
    b[pos].resize(l.capacity(pos));
    for (std::size_t k = 0; k < b[pos].size(); ++k) b[pos][k] = sign * tag(pos, k);
  }
  return b;
}

bool inside(std::size_t g, Range part) { return g >= part.offset && g - part.offset < part.count; }

std::string show(Range r) { return "[" + std::to_string(r.offset) + ", +" + std::to_string(r.count) + ")"; }

std::string show(const Layout& l) {
  if (l.is_replicated()) return "replicated " + std::to_string(l.size()) + " x " + std::to_string(l.devices());
  std::string s = "segments";
  for (const Range& r : l.segments()) s += " " + std::to_string(r.count);
  return s;
}

// --- decoding ---------------------------------------------------------------------------------

// 0..2048 elements, mostly few.
std::size_t decode_extent(Bytes& in) {
  static constexpr std::size_t scales[] = {4, 16, 64, 256, 2048};
  return in.in<std::size_t>(0, in.pick(scales));
}

// A part of an extent of n elements: mostly all of it or inside it, sometimes past its end.
Range decode_part(Bytes& in, std::size_t n) {
  static constexpr std::size_t wild[] = {0, 1, huge / 2, huge - 1, huge};
  const int kind = in.in<int>(0, 15);
  if (kind < 6) return Range{0, n};
  if (kind < 14) {
    const std::size_t offset = in.in<std::size_t>(0, n);
    return Range{offset, in.in<std::size_t>(0, n - offset)};
  }
  if (kind == 14) return Range{in.in<std::size_t>(0, n + 2), in.in<std::size_t>(0, n + 2)};
  return Range{in.flag() ? n : in.pick(wild), in.pick(wild)};
}

// A root position of a set of p devices: mostly valid, sometimes just past the set or far off.
std::size_t decode_root(Bytes& in, std::size_t p) {
  if (in.in<int>(0, 7) != 7) return in.in<std::size_t>(0, p - 1);
  return in.flag() ? p : huge;
}

// A CopyRoots entry: mostly none (-1), else anything from -2 to p (p: not in the set).
int decode_copy_root(Bytes& in, std::size_t p) {
  return in.in<int>(0, 3) != 3 ? -1 : in.in<int>(-2, static_cast<int>(p));
}

// A plan's GPUs: p distinct ids of the 8, in a random order.
std::vector<int> decode_ids(Bytes& in, std::size_t p) {
  std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  for (std::size_t i = 0; i < p; ++i) std::swap(all[i], all[in.in<std::size_t>(i, gpus - 1)]);
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(p)};
}

// Any distribution over `devices` (whose memory and bandwidth it may set), with a granularity.
cush::Distribution decode_distribution(Bytes& in, std::size_t n, std::vector<cush::DeviceInfo>& devices) {
  static constexpr std::size_t granularities[] = {1, 1, 1, 2, 3, 4, 8, 16, 100, 512, 4096};
  const std::size_t g = in.pick(granularities);
  const std::size_t p = devices.size();
  switch (in.in<int>(0, 5)) {
    case 0:
      return cush::Distribution::uniform().with_granularity(g);
    case 1:
      for (auto& d : devices) d.total_memory = in.in<std::size_t>(0, 9) << 33;  // 0..72 GiB, some 0
      return cush::Distribution::memory_capacity().with_granularity(g);
    case 2:
      for (auto& d : devices) d.memory_bandwidth = in.real(0.0, 5e12);
      return cush::Distribution::memory_bandwidth().with_granularity(g);
    case 3: {
      std::vector<double> weights(p);
      for (double& w : weights) w = in.flag() ? 0.0 : in.real(0.0, 10.0);  // many 0 (and all 0: rejected)
      return cush::Distribution::weighted(weights).with_granularity(g);
    }
    case 4: {
      // Cuts on granule boundaries (equal cuts give empty segments).
      std::vector<std::size_t> cuts(p - 1);
      for (std::size_t& cut : cuts) cut = std::min(n, in.in<std::size_t>(0, n / g + 1) * g);
      std::sort(cuts.begin(), cuts.end());
      cuts.push_back(n);
      std::vector<std::size_t> counts(p);
      for (std::size_t i = 0; i < p; ++i) counts[i] = cuts[i] - (i == 0 ? 0 : cuts[i - 1]);
      return cush::Distribution::custom([counts](std::size_t, std::span<const cush::DeviceInfo>) { return counts; })
          .with_granularity(g);
    }
    default:
      return cush::Distribution::replicated();
  }
}

// One plan: the layout of its elements and the GPU id of each position.
struct Plan {
  Layout layout;
  std::vector<int> ids;
};

// A plan of n elements, replicated when `replicated` (else by any distribution); none if the
// distribution refuses the devices (fuzz_distribution checks those; here only the exception type).
std::optional<Plan> decode_plan(Bytes& in, std::size_t n, bool replicated) {
  const std::size_t p = in.in<std::size_t>(1, gpus);
  Plan plan{Layout{}, decode_ids(in, p)};
  std::vector<cush::DeviceInfo> devices(p);
  for (std::size_t i = 0; i < p; ++i) devices[i].id = plan.ids[i];
  std::optional<cush::Distribution> d;
  if (replicated) d = cush::Distribution::replicated();
  else if (FUZZ_REJECTS(d = decode_distribution(in, n, devices))) return std::nullopt;
  if (FUZZ_REJECTS(plan.layout = Layout::make(n, *d, devices))) return std::nullopt;
  FUZZ_CHECK(plan.layout.size() == n && plan.layout.devices() == p, "Layout::make built " + show(plan.layout));
  return plan;
}

// --- running a list -----------------------------------------------------------------------------

// Runs `list` in order from `src` to `dst` (the same buffers for a one-plan operation), a combine
// adding the source element to the destination's; checks each transfer's own fields. Returns how
// many times each destination element was written. `context()` describes the case for messages.
std::vector<std::vector<unsigned>> execute(const TransferList& list, const Buffers& src, Buffers& dst,
                                           const auto& context) {
  std::vector<std::vector<unsigned>> writes(dst.size());
  for (std::size_t pos = 0; pos < dst.size(); ++pos) writes[pos].assign(dst[pos].size(), 0);
  std::vector<double> data;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    const auto which = [&] { return "transfer " + std::to_string(i) + " of " + std::to_string(list.size()); };
    FUZZ_CHECK(t.after >= -1 && t.after < static_cast<int>(i),
               which() + " waits for transfer " + std::to_string(t.after) + context());
    FUZZ_CHECK(t.src.pos >= 0 && static_cast<std::size_t>(t.src.pos) < src.size(),
               which() + " reads source position " + std::to_string(t.src.pos) + context());
    FUZZ_CHECK(t.dst.pos >= 0 && static_cast<std::size_t>(t.dst.pos) < dst.size(),
               which() + " writes destination position " + std::to_string(t.dst.pos) + context());
    const std::vector<double>& from = src[static_cast<std::size_t>(t.src.pos)];
    std::vector<double>& to = dst[static_cast<std::size_t>(t.dst.pos)];
    FUZZ_CHECK(t.count <= from.size() && t.src.offset <= from.size() - t.count,
               which() + " reads " + show(Range{t.src.offset, t.count}) + " of a buffer of " +
                   std::to_string(from.size()) + context());
    FUZZ_CHECK(t.count <= to.size() && t.dst.offset <= to.size() - t.count,
               which() + " writes " + show(Range{t.dst.offset, t.count}) + " of a buffer of " +
                   std::to_string(to.size()) + context());
    // Read first, so that a copy within one buffer behaves as one between two.
    data.assign(from.begin() + static_cast<std::ptrdiff_t>(t.src.offset),
                from.begin() + static_cast<std::ptrdiff_t>(t.src.offset + t.count));
    for (std::size_t k = 0; k < t.count; ++k) {
      double& out = to[t.dst.offset + k];
      out = t.combine ? out + data[k] : data[k];
      ++writes[static_cast<std::size_t>(t.dst.pos)][t.dst.offset + k];
    }
  }
  return writes;
}

// True if transfer b starts only once transfer a (< b) is done: a is on b's `after` chain.
bool waits_for(const TransferList& list, std::size_t b, std::size_t a) {
  for (int k = list[b].after; k >= static_cast<int>(a); k = list[static_cast<std::size_t>(k)].after)
    if (static_cast<std::size_t>(k) == a) return true;
  return false;
}

// Every two transfers that touch the same elements of one buffer, one of them writing, are ordered
// (a read of what an earlier transfer writes, a write over what it reads or writes). `one_plan`:
// source and destination positions name the same buffers. Needs execute() first (valid fields).
void check_order(const TransferList& list, bool one_plan, const auto& context) {
  struct Access {
    int buffer;  // position, plus 8 for the destination plan of a two-plan operation
    std::size_t lo, hi;
    bool write;
  };
  const auto accesses = [&](const Transfer& t) {
    const int dst_buffer = t.dst.pos + (one_plan ? 0 : static_cast<int>(gpus));
    return std::array<Access, 2>{Access{t.src.pos, t.src.offset, t.src.offset + t.count, false},
                                 Access{dst_buffer, t.dst.offset, t.dst.offset + t.count, true}};
  };
  for (std::size_t b = 0; b < list.size(); ++b)
    for (std::size_t a = 0; a < b; ++a)
      for (const Access& x : accesses(list[a]))
        for (const Access& y : accesses(list[b])) {
          if (!(x.write || y.write) || x.buffer != y.buffer || x.hi <= y.lo || y.hi <= x.lo) continue;
          FUZZ_CHECK(waits_for(list, b, a), "transfer " + std::to_string(b) + (y.write ? " writes" : " reads") +
                                                " elements that transfer " + std::to_string(a) +
                                                (x.write ? " writes" : " reads") + ", without waiting for it" +
                                                context());
        }
}

// A source and a destination plan, partitioned by any distribution, mostly of one extent; none
// where a distribution refuses its devices.
std::optional<std::pair<Plan, Plan>> decode_two_plans(Bytes& in) {
  const std::size_t n = decode_extent(in);
  std::optional<Plan> src = decode_plan(in, n, false);
  if (!src) return std::nullopt;
  const std::size_t dst_n = in.in<int>(0, 7) == 7 ? decode_extent(in) : n;
  std::optional<Plan> dst = decode_plan(in, dst_n, false);
  if (!dst) return std::nullopt;
  return std::pair<Plan, Plan>{std::move(*src), std::move(*dst)};
}

// --- copy, scatter, gather, all-gather ----------------------------------------------------------

void fuzz_copy(Bytes& in) {
  const std::optional<std::pair<Plan, Plan>> plans = decode_two_plans(in);
  if (!plans) return;
  const Plan* src = &plans->first;
  const Plan* dst = &plans->second;
  const std::size_t n = src->layout.size();
  const Range part = decode_part(in, n);
  const cush::CopyRoots roots{decode_copy_root(in, src->layout.devices()),
                              decode_copy_root(in, dst->layout.devices())};
  std::vector<int> src_ids = src->ids;
  std::vector<int> dst_ids = dst->ids;
  if (in.in<int>(0, 15) == 15) {  // one id too few or too many
    std::vector<int>& ids = in.flag() ? src_ids : dst_ids;
    if (in.flag()) ids.pop_back();
    else ids.push_back(0);
  }
  const Layout& s = src->layout;
  const Layout& d = dst->layout;
  const std::size_t p = s.devices();
  const std::size_t q = d.devices();
  const auto context = [&] {
    return " (copy " + show(s) + " -> " + show(d) + ", part " + show(part) + ", roots " +
           std::to_string(roots.source) + " " + std::to_string(roots.destination) + ")";
  };
  const auto root_ok = [](int root, const Layout& l) {
    return root < 0 || (l.is_replicated() && static_cast<std::size_t>(root) < l.devices());
  };
  const bool valid = n == dst->layout.size() && src_ids.size() == p && dst_ids.size() == q && cush_fuzz::inside(part, n) &&
                     root_ok(roots.source, s) && root_ok(roots.destination, d);

  TransferList list;
  if (FUZZ_REJECTS(list = cush::copy_transfers(s, src_ids, d, dst_ids, part, roots))) {
    FUZZ_CHECK(!valid, "rejected a valid copy" + context());
    return;
  }
  FUZZ_CHECK(valid, "accepted an invalid copy" + context());
  Buffers to = filled(d, -1);
  const auto writes = execute(list, filled(s, +1), to, context);
  check_order(list, false, context);

  // Which source position holds global element g, for a partitioned source.
  std::vector<std::size_t> holder(n);
  if (!s.is_replicated())
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t g = s.segment(i).offset; g < s.segment(i).end(); ++g) holder[g] = i;

  for (std::size_t j = 0; j < q; ++j) {
    const bool receives = roots.destination < 0 || static_cast<std::size_t>(roots.destination) == j;
    // From a replicated source: the replica this destination must read, or -1 for any.
    int replica = roots.source;
    if (replica < 0)
      for (std::size_t i = 0; i < p; ++i)
        if (src_ids[i] == dst_ids[j]) replica = static_cast<int>(i);
    const Range& seg = d.segment(j);
    for (std::size_t k = 0; k < seg.count; ++k) {
      const std::size_t g = seg.offset + k;
      const auto element = [&] { return "destination " + std::to_string(j) + " element " + std::to_string(g); };
      if (!receives || !inside(g, part)) {
        FUZZ_CHECK(writes[j][k] == 0 && to[j][k] == -tag(j, k), element() + " changed" + context());
        continue;
      }
      FUZZ_CHECK(writes[j][k] == 1, element() + " written " + std::to_string(writes[j][k]) + " times" + context());
      if (s.is_replicated()) {
        int from = -1;
        for (std::size_t r = 0; r < p; ++r)
          if (to[j][k] == tag(r, g)) from = static_cast<int>(r);
        FUZZ_CHECK(from >= 0, element() + " is not the source's element" + context());
        FUZZ_CHECK(replica < 0 || from == replica,
                   element() + " read from replica " + std::to_string(from) + ", not " + std::to_string(replica) +
                       context());
      } else {
        const std::size_t i = holder[g];
        FUZZ_CHECK(to[j][k] == tag(i, g - s.segment(i).offset), element() + " is not the source's element" + context());
      }
    }
  }
}

// --- all-to-all -------------------------------------------------------------------------------

// Runs all_to_all_transfers(src, dst, counts) and checks it against the definition.
void check_all_to_all(const Layout& src, const Layout& dst, const std::vector<std::size_t>& counts) {
  const std::size_t p = src.devices();
  const std::size_t q = dst.devices();
  const auto context = [&] {
    std::string c = " (all-to-all " + show(src) + " -> " + show(dst) + ", counts";
    for (std::size_t x : counts) c += " " + std::to_string(x);
    return c + ")";
  };
  // Valid: partitioned plans, p x q counts whose rows add up to the source segments and whose
  // columns add up to the destination segments, exactly (not modulo 2^64).
  const auto adds_up = [&](std::size_t first, std::size_t stride, std::size_t terms, std::size_t total) {
    for (std::size_t t = 0; t < terms; ++t) {
      const std::size_t c = counts[first + t * stride];
      if (c > total) return false;
      total -= c;
    }
    return total == 0;
  };
  bool valid = !src.is_replicated() && !dst.is_replicated() && counts.size() == p * q;
  for (std::size_t i = 0; valid && i < p; ++i) valid = adds_up(i * q, 1, q, src.segment(i).count);
  for (std::size_t j = 0; valid && j < q; ++j) valid = adds_up(j, q, p, dst.segment(j).count);

  TransferList list;
  if (FUZZ_REJECTS(list = cush::all_to_all_transfers(src, dst, counts))) {
    FUZZ_CHECK(!valid, "rejected valid counts" + context());
    return;
  }
  FUZZ_CHECK(valid, "accepted invalid counts" + context());
  Buffers to = filled(dst, -1);
  const auto writes = execute(list, filled(src, +1), to, context);
  check_order(list, false, context);
  for (std::size_t j = 0; j < q; ++j) {
    std::size_t k = 0;  // next element of destination segment j
    for (std::size_t i = 0; i < p; ++i) {
      std::size_t start = 0;  // piece (i, j) in source segment i
      for (std::size_t m = 0; m < j; ++m) start += counts[i * q + m];
      for (std::size_t e = 0; e < counts[i * q + j]; ++e, ++k) {
        const auto element = [&] { return "destination " + std::to_string(j) + " element " + std::to_string(k); };
        FUZZ_CHECK(writes[j][k] == 1, element() + " written " + std::to_string(writes[j][k]) + " times" + context());
        FUZZ_CHECK(to[j][k] == tag(i, start + e), element() + " is not element " + std::to_string(start + e) +
                                                      " of source " + std::to_string(i) + context());
      }
    }
  }
}

// all_to_all_counts of two decoded plans, then the transfers with the counts it derived.
void fuzz_derived_all_to_all(Bytes& in) {
  const std::optional<std::pair<Plan, Plan>> plans = decode_two_plans(in);
  if (!plans) return;
  const Plan* src = &plans->first;
  const Plan* dst = &plans->second;
  const std::size_t n = src->layout.size();
  const Layout& s = src->layout;
  const Layout& d = dst->layout;
  const auto context = [&] { return " (all_to_all_counts " + show(s) + " -> " + show(d) + ")"; };
  // Valid: partitioned plans of one extent whose pieces s_i * d_j / n are whole. With n = 0 every
  // piece is empty: either all counts 0 or a rejection will do.
  bool valid = !s.is_replicated() && !d.is_replicated() && n == dst->layout.size();
  for (const Range& a : s.segments())
    for (const Range& b : d.segments()) valid = valid && (n == 0 || a.count * b.count % n == 0);

  std::vector<std::size_t> counts;
  if (FUZZ_REJECTS(counts = cush::all_to_all_counts(s, d))) {
    FUZZ_CHECK(!valid || n == 0, "rejected a block transpose" + context());
    return;
  }
  FUZZ_CHECK(valid, "derived counts for pieces that are not whole" + context());
  FUZZ_CHECK(counts.size() == s.devices() * d.devices(), std::to_string(counts.size()) + " counts" + context());
  for (std::size_t i = 0; i < s.devices(); ++i)
    for (std::size_t j = 0; j < d.devices(); ++j) {
      const std::size_t want = n == 0 ? 0 : s.segment(i).count * d.segment(j).count / n;
      FUZZ_CHECK(counts[i * d.devices() + j] == want,
                 "piece (" + std::to_string(i) + ", " + std::to_string(j) + ") has " +
                     std::to_string(counts[i * d.devices() + j]) + " elements, not " + std::to_string(want) +
                     context());
    }
  check_all_to_all(s, d, counts);
}

// A random counts matrix and the plans it fits, sometimes spoiled.
void fuzz_all_to_all(Bytes& in) {
  const std::size_t p = in.in<std::size_t>(1, gpus);
  const std::size_t q = in.in<std::size_t>(1, gpus);
  std::vector<std::size_t> counts(p * q);
  for (std::size_t& c : counts) c = in.flag() ? 0 : in.in<std::size_t>(0, 40);
  const auto [rows, cols] = cush_test::count_sums(counts, p, q);
  Layout src = Layout::partitioned(rows);
  Layout dst = Layout::partitioned(cols);
  const std::size_t a = in.in<std::size_t>(0, p * q - 1);  // an entry to spoil
  const std::size_t b = in.in<std::size_t>(0, p * q - 1);  // and another
  switch (in.in<int>(0, 11)) {  // 0, 6..11: as they are
    case 1:  // an entry off by one
      ++counts[a];
      break;
    case 2:  // one element moved to another entry: rows or columns (or neither) no longer add up
      if (counts[a] > 0) {
        --counts[a];
        ++counts[b];
      }
      break;
    case 3: {  // 2^63 more on the corners of a rectangle: rows and columns still add up modulo 2^64
      const std::size_t i1 = a / q, j1 = a % q, i2 = b / q, j2 = b % q;
      for (std::size_t k : {i1 * q + j1, i1 * q + j2, i2 * q + j1, i2 * q + j2}) counts[k] += std::size_t{1} << 63;
      break;
    }
    case 4:  // a count too few or too many
      if (in.flag()) counts.pop_back();
      else counts.push_back(0);
      break;
    case 5:  // a replicated side
      if (in.flag()) src = Layout::replicated(src.size(), p);
      else dst = Layout::replicated(dst.size(), q);
      break;
    default:
      break;
  }
  check_all_to_all(src, dst, counts);
}

// --- broadcast, reduce, all-reduce ---------------------------------------------------------------

// A plan for a one-plan operation: mostly replicated (which they need), sometimes not.
std::optional<Plan> decode_one_plan(Bytes& in) {
  const std::size_t n = decode_extent(in);
  return decode_plan(in, n, in.in<int>(0, 7) != 7);
}

void fuzz_broadcast(Bytes& in) {
  const std::optional<Plan> plan = decode_one_plan(in);
  if (!plan) return;
  const Layout& l = plan->layout;
  const std::size_t p = l.devices();
  const std::size_t root = decode_root(in, p);
  const Range part = decode_part(in, l.size());
  const bool split = in.flag();
  const auto context = [&] {
    return " (broadcast " + show(l) + ", root " + std::to_string(root) + ", part " + show(part) +
           (split ? ", split)" : ")");
  };
  const bool valid = l.is_replicated() && root < p && cush_fuzz::inside(part, l.size());

  TransferList list;
  if (FUZZ_REJECTS(list = cush::device_broadcast_transfers(l, root, part, split))) {
    FUZZ_CHECK(!valid, "rejected a valid broadcast" + context());
    return;
  }
  FUZZ_CHECK(valid, "accepted an invalid broadcast" + context());
  Buffers b = filled(l, +1);
  const auto writes = execute(list, b, b, context);
  check_order(list, true, context);
  for (std::size_t r = 0; r < p; ++r)
    for (std::size_t k = 0; k < l.size(); ++k) {
      const bool receives = r != root && inside(k, part);
      const auto element = [&] { return "replica " + std::to_string(r) + " element " + std::to_string(k); };
      FUZZ_CHECK(writes[r][k] == (receives ? 1U : 0U),
                 element() + " written " + std::to_string(writes[r][k]) + " times" + context());
      FUZZ_CHECK(b[r][k] == tag(receives ? root : r, k), element() + " holds the wrong value" + context());
    }
  if (split && p >= 3) {  // relayed along a chain: each device sends the part at most once and
                          // receives it from one sender
    std::vector<std::size_t> sent(p, 0);
    std::vector<int> sender(p, -1);
    for (const Transfer& t : list) {
      const auto from = static_cast<std::size_t>(t.src.pos);
      const auto to = static_cast<std::size_t>(t.dst.pos);
      sent[from] += t.count;
      FUZZ_CHECK(sender[to] < 0 || sender[to] == t.src.pos,
                 "device " + std::to_string(to) + " receives from two senders" + context());
      sender[to] = t.src.pos;
    }
    for (std::size_t r = 0; r < p; ++r)
      FUZZ_CHECK(sent[r] <= part.count, "device " + std::to_string(r) + " sends " + std::to_string(sent[r]) +
                                            " elements" + context());
  }
}

// reduce_transfers (all = false) or all_reduce_transfers (all = true), the combine being a sum.
void fuzz_reduction(Bytes& in, bool all) {
  static constexpr std::size_t granularities[] = {1, 1, 1, 2, 3, 4, 8, 64, 512, 4096, huge, 0};
  const std::optional<Plan> plan = decode_one_plan(in);
  if (!plan) return;
  const Layout& l = plan->layout;
  const std::size_t p = l.devices();
  const std::size_t root = all ? 0 : decode_root(in, p);
  const std::size_t granularity = all ? in.pick(granularities) : 1;
  const Range part = decode_part(in, l.size());
  const auto context = [&] {
    return std::string(all ? " (all-reduce " : " (reduce ") + show(l) + ", root " + std::to_string(root) +
           ", granularity " + std::to_string(granularity) + ", part " + show(part) + ")";
  };
  const bool valid = l.is_replicated() && root < p && granularity >= 1 && cush_fuzz::inside(part, l.size());

  TransferList list;
  if (FUZZ_REJECTS(list = all ? cush::all_reduce_transfers(l, part, granularity)
                              : cush::reduce_transfers(l, root, part))) {
    FUZZ_CHECK(!valid, "rejected a valid reduction" + context());
    return;
  }
  FUZZ_CHECK(valid, "accepted an invalid reduction" + context());
  Buffers b = filled(l, +1);
  execute(list, b, b, context);
  check_order(list, true, context);
  for (std::size_t r = 0; r < p; ++r)
    for (std::size_t k = 0; k < l.size(); ++k) {
      const bool reduced = (all || r == root) && inside(k, part);
      FUZZ_CHECK(b[r][k] == (reduced ? sum_of_tags(p, k) : tag(r, k)),
                 "replica " + std::to_string(r) + " element " + std::to_string(k) +
                     (reduced ? " is not the sum of every replica once" : " changed") + context());
    }
  if (all)
    for (const Transfer& t : list)
      FUZZ_CHECK((t.dst.offset - part.offset) % granularity == 0,
                 "a share starts at element " + std::to_string(t.dst.offset) + context());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  switch (in.in<int>(0, 5)) {
    case 0: fuzz_copy(in); break;
    case 1: fuzz_derived_all_to_all(in); break;
    case 2: fuzz_all_to_all(in); break;
    case 3: fuzz_broadcast(in); break;
    case 4: fuzz_reduction(in, false); break;
    default: fuzz_reduction(in, true); break;
  }
  return 0;
}
