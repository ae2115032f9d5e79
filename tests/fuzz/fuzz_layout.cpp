// Fuzz harness of layouts and slices (include/cush/layout.hpp).
//
// Decodes a Layout, made one of three ways: Layout::make from a Distribution (each kind, any extent
// and granularity, unusable weights, devices and custom counts included) over 0..16 devices;
// Layout::partitioned from arbitrary counts; Layout::replicated. Then Slice arguments (any index,
// count and granularity, invalid ones included) and Range arguments for intersect().
//
// Checks:
//  - a call throws cush::InvalidArgument exactly when its arguments break the documented contract,
//    and never another exception;
//  - Layout::make gives the counts of Distribution::counts; every segment boundary inside the
//    extent lies on a multiple of the distribution's granularity;
//  - segments: one per device, contiguous, in order, covering [0, size()) exactly once
//    (replicated: every device the whole extent); capacity() is the segment's size;
//  - lookups: an element of the extent lies in exactly one segment (replicated: in all), at a local
//    offset below the capacity; an element past the end lies in none;
//  - slices: the parts of a segment tile it in order, start and end on multiples of the
//    granularity from the segment's start (or at its end), hold at most one partial granule (only
//    if the segment has one) and differ in size by at most one granule;
//  - intersect(): the common elements, exactly; the pieces of a part on the segments tile it.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cush/distribution.hpp"
#include "cush/layout.hpp"
#include "decode.hpp"
#include "fuzz.hpp"

using cush::DeviceInfo;
using cush::Distribution;
using cush::Layout;
using cush::Range;
using cush::Slice;
using cush_fuzz::any_count;
using cush_fuzz::any_granularity;
using cush_fuzz::any_slice;
using cush_fuzz::Bytes;
using cush_fuzz::str;

namespace {

constexpr std::size_t max_devices = 16;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

/// What Distribution::custom promises to accept: p counts that add up to n, every boundary before
/// the end on a multiple of the granularity.
bool usable_counts(const std::vector<std::size_t>& counts, std::size_t n, std::size_t p, std::size_t granularity) {
  if (counts.size() != p) return false;
  std::size_t sum = 0;
  for (std::size_t c : counts) {
    if (c > n - sum) return false;
    sum += c;
    if (sum < n && sum % granularity != 0) return false;
  }
  return sum == n;
}

/// Counts for a custom rule: a valid split of n (boundaries on granules), at times spoiled.
std::vector<std::size_t> custom_counts(Bytes& in, std::size_t n, std::size_t p, std::size_t granularity) {
  std::vector<std::size_t> counts;
  std::size_t left = n;
  for (std::size_t i = 0; i + 1 < p; ++i) {
    const std::size_t c = granularity * in.in<std::size_t>(0, left / granularity);
    counts.push_back(c);
    left -= c;
  }
  if (p > 0) counts.push_back(left);
  switch (in.in<int>(0, 7)) {
    case 0: if (!counts.empty()) counts[in.in<std::size_t>(0, p - 1)] += any_count(in, 16); break;
    case 1: if (!counts.empty()) counts[in.in<std::size_t>(0, p - 1)] -= in.in<std::size_t>(1, 16); break;
    case 2: counts.push_back(in.in<std::size_t>(0, 16)); break;
    case 3: if (!counts.empty()) counts.pop_back(); break;
    default: break;
  }
  return counts;
}

/// A layout from a Distribution; nullopt when the arguments are rejected (as they must be).
std::optional<Layout> from_distribution(Bytes& in, std::size_t p, std::size_t& granularity) {
  static constexpr std::size_t memories[] = {0, std::size_t{1} << 30, std::size_t{16} << 30, std::size_t{80} << 30,
                                             std::size_t{141} << 30, 1};
  static constexpr double bandwidths[] = {1e12, 2e12, 3.35e12, 4.8e12, 1e-300, 1e300, 0.0};
  static constexpr double bad_numbers[] = {nan, inf, -1.0, -inf};
  static constexpr double weights[] = {0.0, 1.0, 2.0, 3.0, 0.5, 1e-300, 1e300};
  const auto number = [&](const auto& good) {
    return in.in<int>(0, 15) == 0 ? in.pick(bad_numbers) : in.flag() ? in.pick(good) : in.real(0.0, 10.0);
  };
  const auto usable = [](std::span<const double> w) {  // finite, >= 0, not all 0
    return std::all_of(w.begin(), w.end(), [](double x) { return std::isfinite(x) && x >= 0.0; }) &&
           std::any_of(w.begin(), w.end(), [](double x) { return x > 0.0; });
  };

  std::vector<DeviceInfo> devices(p);
  std::vector<double> bandwidth(p);
  for (std::size_t i = 0; i < p; ++i) {
    devices[i].id = static_cast<int>(i);
    devices[i].total_memory = in.flag() ? in.pick(memories) : any_count(in, std::size_t{1} << 40);
    devices[i].memory_bandwidth = bandwidth[i] = number(bandwidths);
  }
  const std::size_t n = any_count(in, 4096);
  granularity = any_granularity(in);

  bool valid = p > 0;  // every rule needs a device
  Distribution d = Distribution::uniform();
  switch (in.in<int>(0, 5)) {
    case 0: break;
    case 1:
      d = Distribution::memory_capacity();
      valid = valid && std::any_of(devices.begin(), devices.end(), [](const DeviceInfo& x) {
                return x.total_memory > 0;
              });
      break;
    case 2:
      d = Distribution::memory_bandwidth();
      valid = valid && usable(bandwidth);
      break;
    case 3: {
      std::vector<double> w(in.in<int>(0, 7) == 0 ? in.in<std::size_t>(0, max_devices) : p);
      for (double& x : w) x = number(weights);
      const bool rejected = FUZZ_REJECTS(d = Distribution::weighted(w));
      FUZZ_CHECK(rejected == !usable(w), "Distribution::weighted with " + str(w.size()) + " weights");
      if (rejected) return std::nullopt;
      valid = valid && w.size() == p;
      break;
    }
    case 4: {
      const std::size_t g = std::max<std::size_t>(granularity, 1);
      const std::vector<std::size_t> counts = custom_counts(in, n, p, g);
      d = Distribution::custom([counts](std::size_t, std::span<const DeviceInfo>) { return counts; });
      valid = valid && usable_counts(counts, n, p, g);
      break;
    }
    default: d = Distribution::replicated();
  }
  const bool rejected_granularity = FUZZ_REJECTS(d = d.with_granularity(granularity));
  FUZZ_CHECK(rejected_granularity == (granularity == 0), "with_granularity(" + str(granularity) + ")");
  if (rejected_granularity) return std::nullopt;

  Layout l;
  const bool rejected = FUZZ_REJECTS(l = Layout::make(n, d, devices));
  FUZZ_CHECK(rejected == !valid, "Layout::make(" + str(n) + ", " + d.name() + ") over " + str(p) + " devices");
  if (rejected) return std::nullopt;

  // The layout follows the distribution, whose boundaries lie on its granularity.
  std::vector<std::size_t> counts;
  FUZZ_CHECK(!FUZZ_REJECTS(counts = d.counts(n, devices)), "counts() rejects what Layout::make took");
  FUZZ_CHECK(l.size() == n && l.devices() == p && l.is_replicated() == d.is_replicated(), d.name());
  if (d.is_replicated()) return l;
  std::size_t end = 0;
  for (std::size_t i = 0; i < p; ++i) {
    FUZZ_CHECK(l.segment(i).count == counts[i], "segment " + str(i) + " is not the distribution's count");
    end += counts[i];
    FUZZ_CHECK(end == n || end % granularity == 0,
               "segment " + str(i) + " ends at " + str(end) + ", inside a granule of " + str(granularity));
  }
  return l;
}

/// A layout made by one of Layout's three factories; nullopt when rejected (as it must be).
/// `granularity` is what the segment boundaries promise to lie on (1 unless from a distribution).
std::optional<Layout> any_layout(Bytes& in, std::size_t& granularity) {
  const std::size_t p = in.in<std::size_t>(0, max_devices);  // 0 devices is invalid
  granularity = 1;
  switch (in.in<int>(0, 3)) {
    case 0: case 1: return from_distribution(in, p, granularity);
    case 2: {
      std::vector<std::size_t> counts(p);
      bool overflows = false;
      std::size_t n = 0;
      for (std::size_t& c : counts) {
        c = in.in<int>(0, 3) == 0 ? 0 : any_count(in, 1024);
        overflows = overflows || c > SIZE_MAX - n;
        n += c;
      }
      Layout l;
      const bool rejected = FUZZ_REJECTS(l = Layout::partitioned(counts));
      FUZZ_CHECK(rejected == (p == 0 || overflows),
                 "Layout::partitioned of " + str(p) + " counts" + (overflows ? " whose sum passes SIZE_MAX" : ""));
      if (rejected) return std::nullopt;
      FUZZ_CHECK(l.size() == n && !l.is_replicated(), "Layout::partitioned: size " + str(l.size()) + ", not " + str(n));
      return l;
    }
    default: {
      const std::size_t n = any_count(in, 4096);
      Layout l;
      const bool rejected = FUZZ_REJECTS(l = Layout::replicated(n, p));
      FUZZ_CHECK(rejected == (p == 0), "Layout::replicated(" + str(n) + ", " + str(p) + ")");
      if (rejected) return std::nullopt;
      FUZZ_CHECK(l.size() == n && l.is_replicated(), "Layout::replicated");
      return l;
    }
  }
}

/// One segment per device, contiguous, in order, covering the extent exactly once (replicated:
/// each the whole extent).
void check_segments(const Layout& l) {
  const std::size_t n = l.size();
  FUZZ_CHECK(l.devices() >= 1 && l.segments().size() == l.devices(), "devices: " + str(l.devices()));
  std::size_t next = 0;
  for (std::size_t pos = 0; pos < l.devices(); ++pos) {
    const Range seg = l.segment(pos);
    FUZZ_CHECK(l.capacity(pos) == seg.count && l.segments()[pos] == seg, "segment " + str(pos));
    if (l.is_replicated()) {
      FUZZ_CHECK(seg == (Range{0, n}), "replica " + str(pos) + " is " + str(seg) + ", not the whole extent");
      continue;
    }
    FUZZ_CHECK(seg.offset == next,
               "segment " + str(pos) + " is " + str(seg) + "; the previous one ended at " + str(next));
    FUZZ_CHECK(seg.count <= n - next, "segment " + str(pos) + " is " + str(seg) + ", past the extent of " + str(n));
    next += seg.count;
  }
  FUZZ_CHECK(l.is_replicated() || next == n, "the segments end at " + str(next) + ", not at " + str(n));
}

/// Element e lies in exactly one segment (replicated: in every one) at an offset below its
/// capacity, if e is in the extent; in none otherwise.
void check_lookups(Bytes& in, const Layout& l) {
  std::vector<std::size_t> elements{0, l.size(), l.size() - 1, in.in<std::size_t>(0, SIZE_MAX)};
  for (const Range& seg : l.segments()) elements.insert(elements.end(), {seg.offset, seg.end() - 1, seg.end()});
  if (l.size() > 0)
    for (int k = 0; k < 4; ++k) elements.push_back(in.in<std::size_t>(0, l.size() - 1));
  for (std::size_t e : elements) {
    std::size_t holders = 0;
    for (std::size_t pos = 0; pos < l.devices(); ++pos) {
      const Range& seg = l.segment(pos);
      if (e < seg.offset || e - seg.offset >= seg.count) continue;
      ++holders;
      FUZZ_CHECK(e - seg.offset < l.capacity(pos), "element " + str(e) + " past the capacity of device " + str(pos));
    }
    const std::size_t expected = e >= l.size() ? 0 : l.is_replicated() ? l.devices() : 1;
    FUZZ_CHECK(holders == expected,
               "element " + str(e) + " of " + str(l.size()) + " is in " + str(holders) + " segments");
  }
}

Range slice_of(const Layout& l, std::size_t pos, Slice s, std::size_t g) {
  Range r;
  FUZZ_CHECK(!FUZZ_REJECTS(r = l.slice(pos, s, g)),
             "slice " + str(s.index) + " of " + str(s.count) + " (granularity " + str(g) + ") rejected");
  return r;
}

/// Parts first..last of segment `pos` cut into `count` parts: they adjoin in order inside the
/// segment (part 0 at its start, the last part at its end), their boundaries lie on granules from
/// the segment's start (or at its end), at most one holds a partial granule, and their sizes differ
/// by at most one granule.
void check_parts(const Layout& l, std::size_t pos, std::size_t count, std::size_t g, std::size_t first,
                 std::size_t last) {
  const Range seg = l.segment(pos);
  const auto where = [&] {  // built only when a check fails
    return " of segment " + str(pos) + " " + str(seg) + " in " + str(count) + " parts (granularity " + str(g) + ")";
  };
  const auto on_granule = [&](std::size_t b) { return (b - seg.offset) % g == 0 || b == seg.end(); };
  std::size_t next = first == 0 ? seg.offset : slice_of(l, pos, Slice{first, count}, g).offset;
  std::size_t smallest = SIZE_MAX, largest = 0, partial = 0;
  for (std::size_t i = first; i <= last; ++i) {
    const Range r = slice_of(l, pos, Slice{i, count}, g);
    FUZZ_CHECK(r.offset == next, "part " + str(i) + " " + str(r) + where() + " does not start at " + str(next));
    FUZZ_CHECK(r.offset >= seg.offset && r.offset <= seg.end() && r.count <= seg.end() - r.offset,
               "part " + str(i) + " " + str(r) + where() + " leaves the segment");
    FUZZ_CHECK(on_granule(r.offset) && on_granule(r.end()),
               "part " + str(i) + " " + str(r) + where() + " cuts a granule");
    smallest = std::min(smallest, r.count);
    largest = std::max(largest, r.count);
    partial += r.count % g != 0 ? 1 : 0;
    next = r.end();
  }
  FUZZ_CHECK(last + 1 < count || next == seg.end(), "the last part" + where() + " ends at " + str(next));
  FUZZ_CHECK(largest - smallest <= g,
             "parts " + str(first) + ".." + str(last) + where() + " differ by more than a granule");
  FUZZ_CHECK(partial <= 1, str(partial) + " parts" + where() + " hold a partial granule");
  if (first == 0 && last + 1 == count)
    FUZZ_CHECK(partial == (seg.count % g != 0 ? 1U : 0U), "the partial granule" + where() + " is not in one part");
}

/// Every segment cut into a few parts at the layout's granularity; then one arbitrary slice request,
/// rejected exactly when invalid, else checked against the parts next to it.
void check_slices(Bytes& in, const Layout& l, std::size_t granularity) {
  const std::size_t parts = in.in<std::size_t>(1, 8);
  for (std::size_t pos = 0; pos < l.devices(); ++pos) check_parts(l, pos, parts, granularity, 0, parts - 1);

  const std::size_t pos = in.in<std::size_t>(0, l.devices() - 1);
  const Slice s = any_slice(in);
  const std::size_t g = in.flag() ? granularity : any_granularity(in);
  const bool valid = s.count >= 1 && s.index < s.count && g >= 1;
  Range r;
  const bool rejected = FUZZ_REJECTS(r = l.slice(pos, s, g));
  FUZZ_CHECK(rejected == !valid, "slice " + str(s.index) + " of " + str(s.count) + ", granularity " + str(g));
  if (!valid) return;
  if (s.count <= 16) {
    check_parts(l, pos, s.count, g, 0, s.count - 1);
  } else {  // the first two parts, those around s, the last two
    check_parts(l, pos, s.count, g, 0, 1);
    check_parts(l, pos, s.count, g, s.index == 0 ? 0 : s.index - 1, std::min(s.index + 1, s.count - 1));
    check_parts(l, pos, s.count, g, s.count - 2, s.count - 1);
  }
}

/// intersect(a, b) holds the elements common to a and b, exactly; the pieces of a part of the
/// extent on the segments tile it in order (replicated: each is the whole part).
void check_intersections(Bytes& in, const Layout& l) {
  const auto any_range = [&] {
    Range r;
    r.offset = any_count(in, 4096);
    r.count = in.in<std::size_t>(0, std::min<std::size_t>(SIZE_MAX - r.offset, in.flag() ? 64 : SIZE_MAX));
    return r;
  };
  const Range a = any_range(), b = any_range();
  const Range c = cush::intersect(a, b);
  const auto holds = [](Range r, std::size_t e) { return e >= r.offset && e - r.offset < r.count; };
  const auto both = [&](std::size_t e) { return holds(a, e) && holds(b, e); };
  const std::string what = "intersect(" + str(a) + ", " + str(b) + ") = " + str(c);
  if (c.empty()) {
    FUZZ_CHECK(c.offset == a.offset, what + ": an empty overlap lies at a.offset");
    FUZZ_CHECK(!both(std::max(a.offset, b.offset)), what + ": misses common elements");
  } else {
    FUZZ_CHECK(c.count <= SIZE_MAX - c.offset && both(c.offset) && both(c.end() - 1), what + ": not inside both");
    FUZZ_CHECK((c.offset == 0 || !both(c.offset - 1)) && !both(c.end()), what + ": misses common elements");
  }

  const std::size_t n = l.size();
  const std::size_t offset = in.in<std::size_t>(0, n);
  const Range part{offset, in.in<std::size_t>(0, n - offset)};
  std::size_t next = part.offset;
  for (const Range& seg : l.segments()) {
    const Range piece = cush::intersect(seg, part);
    if (l.is_replicated()) {
      FUZZ_CHECK(piece.count == part.count && (part.empty() || piece == part), "part " + str(part) + " of a replica");
      continue;
    }
    if (piece.empty()) continue;
    const auto piece_name = [&] { return "the piece " + str(piece) + " of part " + str(part) + " on " + str(seg); };
    FUZZ_CHECK(piece.offset == next, piece_name() + " does not start at " + str(next));
    FUZZ_CHECK(piece.offset >= seg.offset && piece.end() <= seg.end(), piece_name() + " leaves the segment");
    next = piece.end();
  }
  FUZZ_CHECK(l.is_replicated() || next == part.end(), "the pieces of part " + str(part) + " end at " + str(next));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  std::size_t granularity = 1;
  const std::optional<Layout> layout = any_layout(in, granularity);
  if (!layout) return 0;
  check_segments(*layout);
  check_lookups(in, *layout);
  check_slices(in, *layout, granularity);
  check_intersections(in, *layout);
  return 0;
}
