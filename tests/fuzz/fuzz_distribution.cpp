// Fuzz harness of the distribution planner (include/cush/distribution.hpp, libcush/host/distribution.cpp).
//
// Decodes: a rule (uniform, memory_capacity, memory_bandwidth, weighted, replicated, or a custom
// rule that may lie: counts of the wrong length or sum, a split granule, counts that only add up to
// n modulo 2^64, huge counts, or a throw), weights that may be 0, -0, negative, NaN, inf, subnormal,
// huge or of the wrong length, a granularity (0, 1, small, large, near n, up to SIZE_MAX), n (0 to
// SIZE_MAX, mostly small) and 0..16 devices whose memory and bandwidth may be 0, huge or (bandwidth)
// not finite.
//
// Checks: weighted() and with_granularity() reject exactly what the header excludes; counts() throws
// cush::InvalidArgument exactly when the case is unusable (no devices, unusable weights, a custom
// rule that breaks the contract), and otherwise returns one count per device adding up to n
// (replicated: each count is n) with every segment boundary below n on a multiple of the
// granularity; the built-in weighted rules keep |counts[i] - ideal_i| <= granularity and give a zero
// weight nothing; uniform gives the first (granules mod devices) devices one whole granule more; a
// custom rule is called with n and the devices, its valid counts come back unchanged and its own
// exceptions pass through; name() does not throw and reads "<rule>[/granularity g]".

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "cush/distribution.hpp"
#include "fuzz.hpp"

namespace {

using cush::DeviceInfo;
using cush::Distribution;
using Counts = std::vector<std::size_t>;
using Kind = Distribution::Kind;
constexpr std::size_t kMaxSize = std::numeric_limits<std::size_t>::max();

std::string show(const Counts& c) {
  std::string s = "[";
  for (std::size_t i = 0; i < c.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(c[i]);
  return s + "]";
}

// --- decoding ------------------------------------------------------------------------------------

std::size_t decode_n(cush_fuzz::Bytes& in) {
  switch (in.in<int>(0, 4)) {
    case 0: return in.in<std::size_t>(0, 100);
    case 1: return in.in<std::size_t>(0, 1'000'000);
    case 2: return in.in<std::size_t>(0, std::size_t{1} << 44);
    case 3: return kMaxSize - in.in<std::size_t>(0, 100);
    default: return in.in<std::size_t>(0, kMaxSize);
  }
}

// 0 stands for with_granularity(0), which must be rejected.
std::size_t decode_granularity(cush_fuzz::Bytes& in, std::size_t n) {
  switch (in.in<int>(0, 6)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return in.in<std::size_t>(2, 64);
    case 3: return in.in<std::size_t>(65, 100'000);
    case 4: {  // about n / parts
      const std::size_t parts = in.in<std::size_t>(1, 17);
      return std::max<std::size_t>(1, n / parts + in.in<std::size_t>(0, 2));
    }
    case 5: return kMaxSize - in.in<std::size_t>(0, 2);
    default: return in.in<std::size_t>(1, kMaxSize);
  }
}

// A weight or a bandwidth. Sane values are finite and >= 0; wild ones may be anything.
double decode_real(cush_fuzz::Bytes& in, bool wild) {
  static const double edges[] = {0.0, -0.0, 1.0, 4.8e12, DBL_MAX, DBL_MIN, std::numeric_limits<double>::denorm_min(),
                                 1e-300, 1e300};
  static const double bad[] = {NAN, INFINITY, -INFINITY, -1.0, -DBL_MIN, -DBL_MAX};
  switch (in.in<int>(0, wild ? 4 : 3)) {
    case 0: return in.pick(edges);
    case 1: return in.real(0.0, 10.0);
    case 2: return in.real(0.5e12, 5e12);
    case 3: {
      const double x = std::bit_cast<double>(in.in<std::uint64_t>(0, UINT64_MAX));
      return wild ? x : std::isfinite(x) ? std::fabs(x) : 1.0;
    }
    default: return in.pick(bad);
  }
}

std::size_t decode_memory(cush_fuzz::Bytes& in) {
  switch (in.in<int>(0, 3)) {
    case 0: return 0;
    case 1: return in.in<std::size_t>(1, 192) << 30;
    case 2: return in.in<std::size_t>(0, 1000);
    default: return in.in<std::size_t>(0, kMaxSize);
  }
}

std::vector<DeviceInfo> decode_devices(cush_fuzz::Bytes& in, bool wild) {
  std::vector<DeviceInfo> devices(in.in<std::size_t>(0, 16));
  for (std::size_t i = 0; i < devices.size(); ++i) {
    devices[i].id = static_cast<int>(i);
    devices[i].total_memory = decode_memory(in);
    devices[i].memory_bandwidth = decode_real(in, wild);
  }
  return devices;
}

// Counts that keep the contract: sorted boundaries on multiples of g (or at n), the last at n.
Counts valid_split(cush_fuzz::Bytes& in, std::size_t n, std::size_t p, std::size_t g) {
  Counts bounds(p, n);
  for (std::size_t i = 0; i + 1 < p; ++i)
    if (in.flag()) bounds[i] = in.in<std::size_t>(0, n / g) * g;
  std::sort(bounds.begin(), bounds.end());
  Counts counts(p);
  for (std::size_t i = 0; i < p; ++i) counts[i] = bounds[i] - (i > 0 ? bounds[i - 1] : 0);
  return counts;
}

// How a custom rule misbehaves. Its counts are judged by keeps_contract, not by the lie's name.
enum class Lie { none, length, sum, split, wrap, huge, arbitrary, throw_invalid, throw_own };

// What the custom rule returns: a valid split, then the lie applied to it (arithmetic wraps).
Counts told_counts(cush_fuzz::Bytes& in, Lie lie, std::size_t n, std::size_t p, std::size_t g) {
  Counts c = valid_split(in, n, p, g);
  if (p == 0) return c;
  const std::size_t k = in.in<std::size_t>(0, p - 1), next = (k + 1) % p;
  switch (lie) {
    case Lie::length: {
      const std::size_t length = in.flag() ? p + 1 : p - 1;
      c.resize(length, in.in<std::size_t>(0, 3));
      break;
    }
    case Lie::sum: c[k] += in.flag() ? 1 : g; break;
    case Lie::split: {  // moves boundary k by less than a granule
      const std::size_t d = in.in<std::size_t>(1, std::max<std::size_t>(1, std::min<std::size_t>(g - 1, 1000)));
      c[k] += d;
      c[next] -= d;
      break;
    }
    case Lie::wrap: {  // still adds up to n, modulo 2^64
      const std::size_t d = in.flag() ? kMaxSize - in.in<std::size_t>(0, 2) : n + in.in<std::size_t>(1, 2);
      c[k] += d;
      c[next] -= d;
      break;
    }
    case Lie::huge: c[k] = kMaxSize - in.in<std::size_t>(0, 1); break;
    case Lie::arbitrary:
      for (std::size_t& x : c) x = in.flag() ? in.in<std::size_t>(0, 16) : in.in<std::size_t>(0, n);
      break;
    default: break;
  }
  return c;
}

// --- the contract --------------------------------------------------------------------------------

// True if `c` has p counts that add up to n with every boundary below n on a multiple of g.
bool keeps_contract(const Counts& c, std::size_t n, std::size_t p, std::size_t g) {
  if (c.size() != p) return false;
  std::size_t offset = 0;
  for (const std::size_t x : c) {
    if (x > n - offset) return false;  // would pass n (or wrap around)
    offset += x;
    if (offset < n && offset % g != 0) return false;
  }
  return offset == n;
}

// The weights a built-in rule divides by, exactly (capacities as integers, not as doubles); for
// weighted, the user's weights, which must then be one per device.
std::vector<long double> rule_weights(Kind kind, std::span<const DeviceInfo> devices, const std::vector<double>& w) {
  if (kind == Kind::weighted) return {w.begin(), w.end()};
  std::vector<long double> out(devices.size(), 1.0L);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (kind == Kind::memory_capacity) out[i] = static_cast<long double>(devices[i].total_memory);
    if (kind == Kind::memory_bandwidth) out[i] = devices[i].memory_bandwidth;
  }
  return out;
}

// True if these weights can divide anything: all finite and >= 0, not all 0.
bool usable(const std::vector<long double>& w) {
  bool positive = false;
  for (const long double x : w) {
    if (!std::isfinite(x) || !(x >= 0)) return false;
    positive = positive || x > 0;
  }
  return positive;
}

// Every count within one granule of its ideal share n * w_i / sum(w); a zero weight gets nothing.
// The planner rounds in floating point, so the shares are known to about 1e-15 of n.
void check_shares(const Counts& c, const std::vector<long double>& w, std::size_t n, std::size_t g,
                  const std::string& what) {
  long double total = 0;
  for (const long double x : w) total += x;
  const long double slack = static_cast<long double>(g) + static_cast<long double>(n) * 0x1p-50L;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const long double ideal = static_cast<long double>(n) * w[i] / total;
    FUZZ_CHECK(std::fabs(static_cast<long double>(c[i]) - ideal) <= slack,
               what + ": device " + std::to_string(i) + " is more than a granule from its ideal share " +
                   std::to_string(static_cast<double>(ideal)));
    if (w[i] == 0) FUZZ_CHECK(c[i] == 0, what + ": device " + std::to_string(i) + " has weight 0");
  }
}

// What name() starts with (weighted goes on with its weights).
std::string rule_name(Kind kind, const std::string& custom_name) {
  switch (kind) {
    case Kind::uniform: return "uniform";
    case Kind::memory_capacity: return "memory_capacity";
    case Kind::memory_bandwidth: return "memory_bandwidth";
    case Kind::weighted: return "weighted(";
    case Kind::custom: return custom_name;
    case Kind::replicated: return "replicated";
  }
  return {};
}

struct RuleFailure {};  // what a custom rule throws of its own: counts() must let it through

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cush_fuzz::Bytes in(data, size);
  static const Kind kinds[] = {Kind::uniform,  Kind::memory_capacity, Kind::memory_bandwidth,
                               Kind::weighted, Kind::replicated,      Kind::custom};
  const Kind kind = in.pick(kinds);
  const bool wild = in.in<int>(0, 3) == 0;  // a quarter of the cases may hold unusable numbers
  const std::size_t n = decode_n(in);
  std::size_t g = decode_granularity(in, n);
  const std::vector<DeviceInfo> devices = decode_devices(in, wild);
  const std::size_t p = devices.size();

  // Kind-specific parts: the weights, or what the custom rule does and says.
  std::vector<double> weights;
  Lie lie = Lie::none;
  Counts told;
  struct Call {
    bool made = false;
    std::size_t n = 0;
    std::vector<int> ids;
  } call;
  static const std::string custom_names[] = {"custom", "front", "", "weighted(1)/granularity 2"};
  const std::string& custom_name = in.pick(custom_names);
  if (kind == Kind::weighted) {
    const std::size_t count = in.in<int>(0, 7) == 0 ? in.in<std::size_t>(0, 17) : p;
    for (std::size_t i = 0; i < count; ++i) weights.push_back(decode_real(in, wild));
  }
  if (kind == Kind::custom) {
    static const Lie lies[] = {Lie::none,  Lie::none,  Lie::none,      Lie::length,        Lie::sum,      Lie::split,
                               Lie::wrap,  Lie::huge,  Lie::arbitrary, Lie::throw_invalid, Lie::throw_own};
    lie = in.pick(lies);
    told = told_counts(in, lie, n, p, std::max<std::size_t>(g, 1));
  }
  const auto rule = [&](std::size_t rule_n, std::span<const DeviceInfo> rule_devices) {
    call.made = true;
    call.n = rule_n;
    for (const DeviceInfo& d : rule_devices) call.ids.push_back(d.id);
    if (lie == Lie::throw_invalid) throw cush::InvalidArgument("fuzz rule", "n", "refuses");
    if (lie == Lie::throw_own) throw RuleFailure{};
    return told;
  };

  // Build the rule; weighted() rejects exactly the weights the header excludes.
  Distribution d = Distribution::uniform();
  const auto make = [&] {
    switch (kind) {
      case Kind::uniform: d = Distribution::uniform(); break;
      case Kind::memory_capacity: d = Distribution::memory_capacity(); break;
      case Kind::memory_bandwidth: d = Distribution::memory_bandwidth(); break;
      case Kind::weighted: d = Distribution::weighted(weights); break;
      case Kind::replicated: d = Distribution::replicated(); break;
      case Kind::custom:  // "custom" is the default name
        d = custom_name == "custom" ? Distribution::custom(rule) : Distribution::custom(rule, custom_name);
        break;
    }
  };
  const std::vector<long double> w = rule_weights(kind, devices, weights);
  const bool bad_weights = kind == Kind::weighted && !usable(w);
  FUZZ_CHECK(FUZZ_REJECTS(make()) == bad_weights, "weighted(" + std::to_string(weights.size()) + " weights)");
  if (bad_weights) return 0;
  FUZZ_CHECK(d.kind() == kind && d.granularity() == 1 && d.is_replicated() == (kind == Kind::replicated), "fresh rule");

  // with_granularity: 0 is rejected, anything else is taken as is and leaves the original alone.
  if (g == 0) {
    FUZZ_CHECK(FUZZ_REJECTS(d.with_granularity(0)), "with_granularity(0) must be rejected");
    g = 1;
  } else {
    Distribution coarse = d;
    FUZZ_CHECK(!FUZZ_REJECTS(coarse = d.with_granularity(g)), "with_granularity(" + std::to_string(g) + ")");
    FUZZ_CHECK(coarse.granularity() == g && coarse.kind() == kind && d.granularity() == 1,
               "with_granularity(" + std::to_string(g) + ")");
    d = coarse;
  }

  std::string name;
  FUZZ_CHECK(!FUZZ_REJECTS(name = d.name()), "name() threw");
  const std::string suffix = g > 1 ? "/granularity " + std::to_string(g) : "";
  const bool name_ok = kind == Kind::weighted ? name.starts_with("weighted(") && name.ends_with(")" + suffix)
                                              : name == rule_name(kind, custom_name) + suffix;
  FUZZ_CHECK(name_ok, "name() is '" + name + "'");

  const std::string what = name + ", n " + std::to_string(n) + ", " + std::to_string(p) + " devices";

  // A custom rule's own exception passes through counts() unchanged.
  if (lie == Lie::throw_own && p > 0) {
    bool passed_through = false;
    try {
      (void)d.counts(n, devices);
    } catch (const RuleFailure&) {
      passed_through = true;
    } catch (...) {
    }
    FUZZ_CHECK(passed_through, what + ": the rule's own exception did not come through");
    return 0;
  }

  // counts(): rejected exactly when the case is unusable.
  bool unusable = p == 0;
  if (kind == Kind::memory_capacity || kind == Kind::memory_bandwidth) unusable = unusable || !usable(w);
  if (kind == Kind::weighted) unusable = unusable || weights.size() != p;
  if (kind == Kind::custom) unusable = unusable || lie == Lie::throw_invalid || !keeps_contract(told, n, p, g);
  Counts counts;
  const bool rejected = FUZZ_REJECTS(counts = d.counts(n, devices));
  FUZZ_CHECK(rejected == unusable, what + (rejected ? ": rejected a usable case" : ": accepted " + show(counts)));
  if (kind == Kind::custom && p > 0) {
    FUZZ_CHECK(call.made && call.n == n && call.ids.size() == p, what + ": the rule was not asked about this case");
    for (std::size_t i = 0; i < p; ++i) FUZZ_CHECK(call.ids[i] == devices[i].id, what + ": the rule saw other devices");
  }
  if (rejected) return 0;

  // The layout every rule keeps.
  const std::string got = what + ", granularity " + std::to_string(g) + ": counts " + show(counts);
  FUZZ_CHECK(counts.size() == p, got + ": not one count per device");
  if (kind == Kind::replicated) {
    for (const std::size_t c : counts) FUZZ_CHECK(c == n, got + ": a replica is not whole");
    return 0;
  }
  std::size_t offset = 0;
  for (std::size_t i = 0; i < p; ++i) {
    FUZZ_CHECK(counts[i] <= n - offset, got + ": the counts pass n");
    offset += counts[i];
    FUZZ_CHECK(offset == n || offset % g == 0, got + ": boundary " + std::to_string(i) + " splits a granule");
  }
  FUZZ_CHECK(offset == n, got + ": the counts do not add up to n");

  // Each rule's own promise.
  if (kind == Kind::custom) FUZZ_CHECK(counts == told, got + ": the rule said " + show(told));
  if (kind == Kind::uniform) {
    const std::size_t granules = n / g, base = granules / p, extra = granules % p;
    for (std::size_t i = 0; i < p; ++i)
      FUZZ_CHECK(counts[i] / g == base + (i < extra ? 1 : 0),
                 got + ": device " + std::to_string(i) + " should hold " + std::to_string(base + (i < extra)) +
                     " whole granules");
  }
  if (kind != Kind::custom) check_shares(counts, w, n, g, got);
  return 0;
}
