// Fuzz harness of the host <-> device transfer lists (libcush/host/transfer.hpp).
//
// Decodes a layout over 1..16 devices (partitioned, replicated, or uniform with a granularity;
// now and then an extent near SIZE_MAX), then one of: a scatter and a gather of a Range part, the
// same for a Slice and granularity, a broadcast (use_peers, chunk) followed by a gather, or
// detail::even_shares. Ranges may be empty, past the extent or overflowing; slices and
// granularities may be invalid.
//
// Checks:
//  - a call throws cush::InvalidArgument exactly when its arguments are invalid (a part outside
//    the extent, a slice that does not exist, granularity 0, a broadcast to a partitioned
//    layout), and never another exception;
//  - every transfer: count > 0, `after` -1 or an earlier index, no combine, host -> device
//    (scatter, broadcast; device -> device only in a broadcast with use_peers) or device -> host
//    (gather), positions in the device set, both ends inside their buffers (the host buffer of
//    the operation; a device's segment, the whole extent if replicated);
//  - each destination buffer gets exactly the elements of the part (slice) it holds, each once;
//  - a transfer that reads device data reads only what transfers it waits for (through `after`)
//    wrote: a peer copy of a broadcast runs after the host copy that landed its data;
//  - a broadcast reads the host part once over all host links with use_peers, else once per device;
//  - executed on host arrays (extents up to 4096): every device receives the right values, and
//    scatter then gather (or broadcast then gather) gives back the host data of the part;
//  - even_shares: p shares tiling the part in order, in whole granules but for one, the first ones
//    one granule more.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cush/layout.hpp"
#include "decode.hpp"
#include "fuzz.hpp"
#include "host/transfer.hpp"

using cush::BroadcastOptions;
using cush::Layout;
using cush::Range;
using cush::Slice;
using cush::Transfer;
using cush::TransferList;
using cush_fuzz::any_count;
using cush_fuzz::any_granularity;
using cush_fuzz::any_slice;
using cush_fuzz::Bytes;
using cush_fuzz::inside;
using cush_fuzz::str;

namespace {

constexpr std::size_t max_devices = 16;
constexpr std::size_t max_simulated = 4096;  // extents up to this are executed on host arrays
constexpr std::uint64_t sentinel = 0;        // an element nothing wrote

/// The value of element e of the extent in every buffer that holds it: distinct, never the sentinel.
std::uint64_t value_of(std::size_t e) { return e + 1; }

/// A layout; `small` tells whether its buffers are small enough to execute lists on.
Layout any_layout(Bytes& in, bool& small) {
  const std::size_t p = in.in<std::size_t>(1, max_devices);
  small = true;
  switch (in.in<int>(0, 7)) {
    case 0: case 1: case 2: {  // any counts, empty segments included
      std::vector<std::size_t> counts(p);
      for (std::size_t& c : counts) c = in.in<int>(0, 3) == 0 ? 0 : in.in<std::size_t>(0, max_simulated / p);
      return Layout::partitioned(counts);
    }
    case 3: case 4: return Layout::replicated(in.in<std::size_t>(0, max_simulated / max_devices * 4), p);
    case 5: case 6: {
      const std::vector<cush::DeviceInfo> devices(p);
      const auto uniform = cush::Distribution::uniform().with_granularity(in.in<std::size_t>(1, 16));
      return Layout::make(in.in<std::size_t>(0, max_simulated), uniform, devices);
    }
    default: {  // an extent that is only planned, never executed
      small = false;
      const std::size_t n = any_count(in, SIZE_MAX);
      if (in.flag()) return Layout::replicated(n, p);
      const std::vector<cush::DeviceInfo> devices(p);
      const std::size_t g = std::max<std::size_t>(any_granularity(in), 1);
      return Layout::make(n, cush::Distribution::uniform().with_granularity(g), devices);
    }
  }
}

/// A part of an extent of n: the whole, inside, empty, or invalid (past the end, overflowing).
Range any_part(Bytes& in, std::size_t n) {
  Range r;
  switch (in.in<int>(0, 7)) {
    case 0: return Range{0, n};
    case 1: case 2: case 3:
      r.offset = in.in<std::size_t>(0, n);
      r.count = in.in<std::size_t>(0, n - r.offset);
      return r;
    case 4: return Range{in.in<std::size_t>(0, n), 0};
    case 5:  // one or a few elements too many, or starting past the end
      r.offset = in.in<std::size_t>(0, n) + in.in<std::size_t>(0, 1);
      r.count = n - std::min(r.offset, n) + in.in<std::size_t>(0, 16);
      return r;
    case 6: return Range{any_count(in, 4096), any_count(in, 4096)};
    default:  // offset + count passes SIZE_MAX
      r.offset = in.in<std::size_t>(1, SIZE_MAX);
      r.count = SIZE_MAX - r.offset + in.in<std::size_t>(1, r.offset);
      return r;
  }
}

/// `ranges` sorted, empty ones dropped, adjacent ones joined; false if two overlap.
bool normalize(std::vector<Range>& ranges) {
  std::erase_if(ranges, [](Range r) { return r.empty(); });
  std::sort(ranges.begin(), ranges.end(), [](Range a, Range b) { return a.offset < b.offset; });
  std::vector<Range> joined;
  for (Range r : ranges) {
    if (!joined.empty() && r.offset < joined.back().end()) return false;
    if (!joined.empty() && r.offset == joined.back().end()) joined.back().count += r.count;
    else joined.push_back(r);
  }
  ranges = std::move(joined);
  return true;
}

/// True if `pieces` hold exactly the elements of `expected`, each once.
bool tiles(std::vector<Range> pieces, std::vector<Range> expected) {
  return normalize(pieces) && normalize(expected) && pieces == expected;
}

/// An operation's list and what it must do. Buffers: 0 is the host buffer, d + 1 device d's.
struct Op {
  std::string name;
  TransferList list;
  bool to_devices = true;      // scatter, broadcast: host -> devices; gather: devices -> host
  bool peers = false;          // device -> device copies allowed (a broadcast with use_peers)
  std::size_t host_first = 0;  // the extent index of host element 0
  std::size_t host_size = 0;
  std::vector<std::vector<Range>> writes;  // per buffer: the local elements to write, each once
};

std::size_t buffer_size(const Op& op, const Layout& l, int pos) {
  return pos == cush::Location::host ? op.host_size : l.capacity(static_cast<std::size_t>(pos));
}

/// The extent index of element i of buffer `pos`.
std::size_t global(const Op& op, const Layout& l, int pos, std::size_t i) {
  return (pos == cush::Location::host ? op.host_first : l.segment(static_cast<std::size_t>(pos)).offset) + i;
}

/// Checks the list against what the operation must do, without executing it.
void check_list(const Op& op, const Layout& l) {
  const TransferList& list = op.list;
  const int p = static_cast<int>(l.devices());
  std::vector<std::vector<Range>> written(l.devices() + 1);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    const auto what = [&] {  // built only when a check fails
      return op.name + ": transfer " + str(i) + " (" + str(t.count) + " from " + std::to_string(t.src.pos) + "+" +
             str(t.src.offset) + " to " + std::to_string(t.dst.pos) + "+" + str(t.dst.offset) + ", after " +
             std::to_string(t.after) + ")";
    };
    FUZZ_CHECK(t.count > 0 && !t.combine, what());
    FUZZ_CHECK(t.after >= -1 && t.after < static_cast<int>(i), what() + " waits for a transfer not before it");
    FUZZ_CHECK(t.src.pos >= -1 && t.src.pos < p && t.dst.pos >= -1 && t.dst.pos < p, what() + ": no such device");
    if (op.to_devices)
      FUZZ_CHECK(!t.dst.is_host() && (t.src.is_host() || (op.peers && t.src.pos != t.dst.pos)),
                 what() + ": wrong direction");
    else
      FUZZ_CHECK(!t.src.is_host() && t.dst.is_host(), what() + ": wrong direction");
    const Range src{t.src.offset, t.count}, dst{t.dst.offset, t.count};
    FUZZ_CHECK(inside(src, buffer_size(op, l, t.src.pos)), what() + " reads outside its buffer");
    FUZZ_CHECK(inside(dst, buffer_size(op, l, t.dst.pos)), what() + " writes outside its buffer");
    written[static_cast<std::size_t>(t.dst.pos + 1)].push_back(dst);
  }
  for (std::size_t b = 0; b < written.size(); ++b)
    FUZZ_CHECK(tiles(written[b], op.writes[b]),
               op.name + ": buffer " + std::to_string(static_cast<int>(b) - 1) + " does not get each element once");

  // Device data a transfer reads must have been written by the transfers it waits for (through
  // `after`, transitively). A gather reads what the devices held before; nothing in it writes them.
  if (!op.to_devices) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    if (t.src.is_host()) continue;
    std::vector<Range> landed;
    for (int a = t.after; a >= 0; a = list[static_cast<std::size_t>(a)].after) {
      const Transfer& w = list[static_cast<std::size_t>(a)];
      if (w.dst.pos == t.src.pos) landed.push_back(Range{w.dst.offset, w.count});
    }
    const Range read{t.src.offset, t.count};
    normalize(landed);  // never overlapping: each element is written once
    FUZZ_CHECK(std::any_of(landed.begin(), landed.end(), [&](Range r) { return cush::intersect(r, read) == read; }),
               op.name + ": transfer " + str(i) + " reads " + str(read) + " of device " + std::to_string(t.src.pos) +
                   " before a transfer it waits for wrote it");
  }
}

/// Buffers of host arrays: [0] the host buffer, [d + 1] device d's.
using Memory = std::vector<std::vector<std::uint64_t>>;

/// Runs the list on `m` in list order (`after` points backwards, so that order keeps it) and checks
/// that every buffer is unchanged but for the elements op.writes names, which hold their values.
void execute(const Op& op, const Layout& l, Memory& m) {
  Memory expected = m;
  for (std::size_t b = 0; b < m.size(); ++b)
    for (Range r : op.writes[b])
      for (std::size_t i = r.offset; i < r.end(); ++i)
        expected[b][i] = value_of(global(op, l, static_cast<int>(b) - 1, i));
  for (const Transfer& t : op.list) {
    const std::vector<std::uint64_t>& src = m[static_cast<std::size_t>(t.src.pos + 1)];
    std::vector<std::uint64_t>& dst = m[static_cast<std::size_t>(t.dst.pos + 1)];
    std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(t.src.offset), t.count,
                dst.begin() + static_cast<std::ptrdiff_t>(t.dst.offset));
  }
  for (std::size_t b = 0; b < m.size(); ++b)
    FUZZ_CHECK(m[b] == expected[b],
               op.name + ": buffer " + std::to_string(static_cast<int>(b) - 1) + " holds wrong values");
}

/// Fresh buffers for `op`: the host buffer holds its part of the extent (or nothing, for a
/// gather), the devices nothing.
Memory fresh_memory(const Op& op, const Layout& l) {
  Memory m(l.devices() + 1);
  m[0].assign(op.host_size, sentinel);
  if (op.to_devices)
    for (std::size_t j = 0; j < op.host_size; ++j) m[0][j] = value_of(op.host_first + j);
  for (std::size_t d = 0; d < l.devices(); ++d) m[d + 1].assign(l.capacity(d), sentinel);
  return m;
}

/// Checks `there` and, when the layout is small, executes it on fresh buffers, then checks and
/// executes `back` (a gather) on the devices it filled: the host buffer must come back whole.
void round_trip(const Op& there, const Op& back, const Layout& l, bool small) {
  check_list(there, l);
  check_list(back, l);
  if (!small) return;
  Memory m = fresh_memory(there, l);
  execute(there, l, m);
  m[0] = fresh_memory(back, l)[0];
  execute(back, l, m);
}

/// The writes of an operation, empty: one list of ranges per buffer.
std::vector<std::vector<Range>> no_writes(const Layout& l) { return std::vector<std::vector<Range>>(l.devices() + 1); }

/// Range in extent indices -> local indices of device `pos`.
Range local(const Layout& l, std::size_t pos, Range r) { return Range{r.offset - l.segment(pos).offset, r.count}; }

void fuzz_range(Bytes& in, const Layout& l, bool small) {
  const Range part = any_part(in, l.size());
  const bool valid = inside(part, l.size());
  Op scatter{"scatter " + str(part), {}, true, false, part.offset, part.count, no_writes(l)};
  Op gather{"gather " + str(part), {}, false, false, part.offset, part.count, no_writes(l)};
  FUZZ_CHECK(FUZZ_REJECTS(scatter.list = cush::scatter_transfers(l, part)) == !valid, scatter.name);
  FUZZ_CHECK(FUZZ_REJECTS(gather.list = cush::gather_transfers(l, part)) == !valid, gather.name);
  if (!valid) return;
  for (std::size_t d = 0; d < l.devices(); ++d)
    scatter.writes[d + 1].push_back(local(l, d, cush::intersect(l.segment(d), part)));
  gather.writes[0].push_back(Range{0, part.count});
  round_trip(scatter, gather, l, small);
}

void fuzz_slice(Bytes& in, const Layout& l, bool small) {
  const Slice s = any_slice(in);
  const std::size_t g = any_granularity(in);
  const bool valid = s.count >= 1 && s.index < s.count && g >= 1;
  const std::string name = "slice " + str(s.index) + " of " + str(s.count) + " (granularity " + str(g) + ")";
  Op scatter{"scatter " + name, {}, true, false, 0, l.size(), no_writes(l)};
  Op gather{"gather " + name, {}, false, false, 0, l.size(), no_writes(l)};
  FUZZ_CHECK(FUZZ_REJECTS(scatter.list = cush::scatter_transfers(l, s, g)) == !valid, scatter.name);
  FUZZ_CHECK(FUZZ_REJECTS(gather.list = cush::gather_transfers(l, s, g)) == !valid, gather.name);
  if (!valid) return;
  // Partitioned: slice s of each segment on its device. Replicated: slice s of the extent on every one.
  for (std::size_t d = 0; d < l.devices(); ++d) {
    const Range r = l.slice(l.is_replicated() ? 0 : d, s, g);
    scatter.writes[d + 1].push_back(local(l, d, r));
    if (d == 0 || !l.is_replicated()) gather.writes[0].push_back(r);
  }
  round_trip(scatter, gather, l, small);
}

void fuzz_broadcast(Bytes& in, const Layout& l, bool small) {
  const Range part = any_part(in, l.size());
  BroadcastOptions options;
  options.use_peers = in.flag();
  options.chunk = in.flag() ? 0 : in.flag() ? in.in<std::size_t>(1, 64) : any_count(in, 4096);
  if (options.chunk != 0 && part.count / options.chunk > 256) options.chunk = part.count / 256;  // a short list
  const bool valid = l.is_replicated() && inside(part, l.size());
  const std::string name = "broadcast " + str(part) + (options.use_peers ? " with peers" : "") + ", chunk " +
                           str(options.chunk) + " to " + str(l.devices()) + " devices";
  Op broadcast{name, {}, true, options.use_peers, part.offset, part.count, no_writes(l)};
  Op gather{"gather after " + name, {}, false, false, part.offset, part.count, no_writes(l)};
  FUZZ_CHECK(FUZZ_REJECTS(broadcast.list = cush::broadcast_transfers(l, part, options)) == !valid, name);
  if (!valid) return;
  FUZZ_CHECK(!FUZZ_REJECTS(gather.list = cush::gather_transfers(l, part)), gather.name);
  for (std::size_t d = 0; d < l.devices(); ++d) broadcast.writes[d + 1].push_back(part);
  gather.writes[0].push_back(Range{0, part.count});

  // Host links: split over the devices with peers, the whole part to each device without.
  std::vector<std::vector<Range>> host_reads(l.devices());
  for (const Transfer& t : broadcast.list)
    if (t.src.is_host() && t.dst.pos >= 0 && t.dst.pos < static_cast<int>(l.devices()))
      host_reads[static_cast<std::size_t>(t.dst.pos)].push_back(Range{t.src.offset, t.count});
  if (options.use_peers && l.devices() > 1) {
    std::vector<Range> all;
    for (const auto& reads : host_reads) all.insert(all.end(), reads.begin(), reads.end());
    FUZZ_CHECK(tiles(all, {Range{0, part.count}}), name + ": the devices do not read each host element once");
  } else {
    for (const auto& reads : host_reads)
      FUZZ_CHECK(tiles(reads, {Range{0, part.count}}), name + ": a device does not read the host part once");
  }
  round_trip(broadcast, gather, l, small);
}

/// even_shares(part, p, g): p shares tiling the part in order, whole granules in all but one (the
/// one with the part's partial granule), the first ones one granule more.
void fuzz_even_shares(Bytes& in) {
  const std::size_t offset = any_count(in, 4096);
  const Range part{offset, std::min(any_count(in, 4096), SIZE_MAX - offset)};
  const std::size_t p = in.in<std::size_t>(1, 64);
  const std::size_t g = std::max<std::size_t>(any_granularity(in), 1);
  const std::string what = "even_shares(" + str(part) + ", " + str(p) + ", " + str(g) + ")";
  std::vector<Range> shares;
  FUZZ_CHECK(!FUZZ_REJECTS(shares = cush::detail::even_shares(part, p, g)), what);
  FUZZ_CHECK(shares.size() == p, what + ": " + str(shares.size()) + " shares");
  std::size_t next = part.offset, partial = 0;
  for (std::size_t i = 0; i < p; ++i) {
    FUZZ_CHECK(shares[i].offset == next && shares[i].count <= part.end() - next,
               what + ": share " + str(i) + " is " + str(shares[i]));
    next = shares[i].end();
    partial += shares[i].count % g != 0 ? 1 : 0;
    const std::size_t granules = shares[i].count / g, first = shares[0].count / g;
    FUZZ_CHECK(granules <= first && first - granules <= 1, what + ": share " + str(i) + " is not even");
    if (i > 0)
      FUZZ_CHECK(granules <= shares[i - 1].count / g, what + ": share " + str(i) + " has more granules than the last");
  }
  FUZZ_CHECK(next == part.end(), what + ": the shares end at " + str(next));
  FUZZ_CHECK(partial == (part.count % g != 0 ? 1U : 0U), what + ": " + str(partial) + " shares hold a partial granule");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  bool small = true;
  const Layout layout = any_layout(in, small);
  switch (in.in<int>(0, 6)) {
    case 0: case 1: fuzz_range(in, layout, small); break;
    case 2: case 3: fuzz_slice(in, layout, small); break;
    case 4: case 5: fuzz_broadcast(in, layout, small); break;
    default: fuzz_even_shares(in);
  }
  return 0;
}
