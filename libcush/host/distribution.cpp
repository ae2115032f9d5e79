#include "cush/distribution.hpp"
#include "host/counts.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <utility>

#include "cush/error.hpp"

namespace cush {

Distribution::Distribution(Kind kind, std::vector<double> weights, std::shared_ptr<const Rule> rule,
                           std::string name)
    : kind_(kind), weights_(std::move(weights)), rule_(std::move(rule)), custom_name_(std::move(name)) {}

Distribution Distribution::uniform() { return {Kind::uniform, {}, nullptr, {}}; }
Distribution Distribution::memory_capacity() { return {Kind::memory_capacity, {}, nullptr, {}}; }
Distribution Distribution::memory_bandwidth() { return {Kind::memory_bandwidth, {}, nullptr, {}}; }
Distribution Distribution::replicated() { return {Kind::replicated, {}, nullptr, {}}; }

Distribution Distribution::weighted(std::vector<double> weights) {
  constexpr const char* where = "cush::Distribution::weighted";
  if (weights.empty()) throw InvalidArgument(where, "weights", "no weights given");
  double sum = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0.0)
      throw InvalidArgument(where, "weights",
                            "weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
                                "; weights must be finite and >= 0");
    sum += weights[i];
  }
  if (sum <= 0.0) throw InvalidArgument(where, "weights", "all weights are 0");
  return {Kind::weighted, std::move(weights), nullptr, {}};
}

Distribution Distribution::custom(Rule rule, std::string name) {
  if (!rule) throw InvalidArgument("cush::Distribution::custom", "rule", "the rule is empty");
  return {Kind::custom, {}, std::make_shared<const Rule>(std::move(rule)), std::move(name)};
}

Distribution Distribution::with_granularity(std::size_t elements) const {
  if (elements == 0)
    throw InvalidArgument("cush::Distribution::with_granularity", "elements", "granularity must be >= 1");
  Distribution d = *this;
  d.granularity_ = elements;
  return d;
}

std::string Distribution::name() const {
  std::string n;
  switch (kind_) {
    case Kind::uniform: n = "uniform"; break;
    case Kind::memory_capacity: n = "memory_capacity"; break;
    case Kind::memory_bandwidth: n = "memory_bandwidth"; break;
    case Kind::replicated: n = "replicated"; break;
    case Kind::custom: n = custom_name_; break;
    case Kind::weighted: {
      n = "weighted(";
      for (std::size_t i = 0; i < weights_.size(); ++i) {
        if (i > 0) n += ", ";
        // The shortest text that reads back as the same double: "2.5", "3", "1e-07".
        char text[32];
        const auto written = std::to_chars(text, text + sizeof text, weights_[i]);
        n.append(text, written.ptr);
      }
      n += ")";
      break;
    }
  }
  if (granularity_ > 1) n += "/granularity " + std::to_string(granularity_);
  return n;
}

namespace detail {

std::pair<std::size_t, std::size_t> uniform_share(std::size_t n, std::size_t p, std::size_t granularity,
                                                  std::size_t i) {
  // Whole granules: device k holds base of them, one more for k < extra (granules mod p). The
  // partial granule (if any) goes to `owner`: it joins the segment holding the last whole granule,
  // or follows it on the next device.
  const std::size_t granules = n / granularity;
  const std::size_t rest = n % granularity;
  const std::size_t base = granules / p;
  const std::size_t extra = granules % p;
  const std::size_t owner = base > 0 ? p - 1 : extra;
  const std::size_t offset = (i * base + std::min(i, extra)) * granularity + (owner < i ? rest : 0);
  const std::size_t count = (base + (i < extra ? 1 : 0)) * granularity + (owner == i ? rest : 0);
  return {offset, count};
}

std::vector<std::size_t> uniform_counts(std::size_t n, std::size_t p, std::size_t granularity) {
  std::vector<std::size_t> counts(p);
  for (std::size_t i = 0; i < p; ++i) counts[i] = uniform_share(n, p, granularity, i).second;
  return counts;
}

std::vector<std::size_t> proportional_counts(std::size_t n, std::span<const double> weights,
                                             std::size_t granularity, const char* where) {
  long double total = 0.0L;
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0.0)
      throw InvalidArgument(where, "weights", "weights must be finite and >= 0, got " + std::to_string(w));
    total += w;
  }
  if (total <= 0.0L) throw InvalidArgument(where, "weights", "all weights are 0");

  // Round each ideal prefix sum n * (w_0 + ... + w_k) / total to the nearest multiple of the
  // granularity (clamped to n, kept monotone). Each boundary moves by at most granularity / 2,
  // so each count is within one granularity of its ideal share.
  const std::size_t p = weights.size();
  // Devices after the last positive weight get nothing, not the partial granule.
  std::size_t last = p - 1;
  while (weights[last] <= 0.0) --last;
  std::vector<std::size_t> counts(p);
  long double prefix = 0.0L;
  std::size_t previous = 0;
  const auto g = static_cast<long double>(granularity);
  for (std::size_t k = 0; k < p; ++k) {
    prefix += weights[k];
    std::size_t boundary = n;
    if (k < last) {
      const long double ideal = static_cast<long double>(n) * prefix / total;
      const long double rounded = std::floor(ideal / g + 0.5L) * g;
      boundary = rounded >= static_cast<long double>(n) ? n : static_cast<std::size_t>(rounded);
      boundary = std::max(boundary, previous);
    }
    counts[k] = boundary - previous;
    previous = boundary;
  }
  return counts;
}

}  // namespace detail

namespace {
void check_custom_counts(const std::vector<std::size_t>& counts, std::size_t n, std::size_t p,
                         std::size_t granularity, const std::string& name) {
  constexpr const char* where = "cush::Distribution::counts";
  if (counts.size() != p)
    throw InvalidArgument(where, name,
                          "the rule returned " + std::to_string(counts.size()) + " counts for " +
                              std::to_string(p) + " devices");
  std::size_t offset = 0;
  for (std::size_t i = 0; i < p; ++i) {
    if (counts[i] > n - offset)
      throw InvalidArgument(where, name, "the counts add up to more than n = " + std::to_string(n));
    offset += counts[i];
    if (offset < n && offset % granularity != 0)
      throw InvalidArgument(where, name,
                            "segment " + std::to_string(i) + " ends at element " + std::to_string(offset) +
                                ", which splits a granule of " + std::to_string(granularity));
  }
  if (offset != n)
    throw InvalidArgument(where, name,
                          "the counts add up to " + std::to_string(offset) + ", not n = " + std::to_string(n));
}
}  // namespace

std::vector<std::size_t> Distribution::counts(std::size_t n, std::span<const DeviceInfo> devices) const {
  constexpr const char* where = "cush::Distribution::counts";
  const std::size_t p = devices.size();
  if (p == 0) throw InvalidArgument(where, "devices", "no devices");
  switch (kind_) {
    case Kind::replicated:
      return std::vector<std::size_t>(p, n);
    case Kind::uniform:
      return detail::uniform_counts(n, p, granularity_);
    case Kind::memory_capacity:
    case Kind::memory_bandwidth: {
      std::vector<double> w(p);
      for (std::size_t i = 0; i < p; ++i)
        w[i] = kind_ == Kind::memory_capacity ? static_cast<double>(devices[i].total_memory)
                                              : devices[i].memory_bandwidth;
      return detail::proportional_counts(n, w, granularity_, where);
    }
    case Kind::weighted:
      if (weights_.size() != p)
        throw InvalidArgument(where, "weights",
                              std::to_string(weights_.size()) + " weights for " + std::to_string(p) + " devices");
      return detail::proportional_counts(n, weights_, granularity_, where);
    case Kind::custom: {
      std::vector<std::size_t> c = (*rule_)(n, devices);
      check_custom_counts(c, n, p, granularity_, custom_name_);
      return c;
    }
  }
  throw InvalidArgument(where, "distribution", "unknown kind");
}

}  // namespace cush
