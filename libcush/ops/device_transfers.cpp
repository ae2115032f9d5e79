#include "ops/device_transfers.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "cush/error.hpp"

namespace cush {

using detail::check_part;

namespace {

void check_root(const Layout& layout, std::size_t root, const char* where) {
  if (root >= layout.devices())
    throw InvalidArgument(where, "root",
                          "position " + std::to_string(root) + " is not in a set of " +
                              std::to_string(layout.devices()) + " devices");
}

Transfer device_copy(std::size_t from, std::size_t from_offset, std::size_t to, std::size_t to_offset,
                     std::size_t count, int after = -1) {
  return Transfer{Location{static_cast<int>(from), from_offset}, Location{static_cast<int>(to), to_offset}, count,
                  after, false};
}

// The replica of a replicated source that serves destination device `dst_id`: the one on the
// same GPU if any, else one spread by destination position.
std::size_t source_replica(std::span<const int> src_ids, int dst_id, std::size_t dst_pos, int forced) {
  if (forced >= 0) return static_cast<std::size_t>(forced);
  const auto same = std::find(src_ids.begin(), src_ids.end(), dst_id);
  if (same != src_ids.end()) return static_cast<std::size_t>(same - src_ids.begin());
  return dst_pos % src_ids.size();
}

// Pieces of `wanted` (global elements) held by the source, appended as copies into destination
// position `to`, whose buffer starts at global element `to_base`.
void pull(const Layout& src, std::span<const int> src_ids, int forced_source, std::size_t to, int to_id,
          std::size_t to_base, Range wanted, TransferList& list) {
  if (wanted.empty()) return;
  if (src.is_replicated()) {
    const std::size_t from = source_replica(src_ids, to_id, to, forced_source);
    list.push_back(device_copy(from, wanted.offset, to, wanted.offset - to_base, wanted.count));
    return;
  }
  for (std::size_t i = 0; i < src.devices(); ++i) {
    const Range& seg = src.segment(i);
    const Range x = intersect(seg, wanted);
    if (x.empty()) continue;
    list.push_back(device_copy(i, x.offset - seg.offset, to, x.offset - to_base, x.count));
  }
}

// Orders `list` (copies with no `after`) so that every device's copies go to the other devices
// in turn: with the devices in ascending id order, the copy from the a-th to the b-th comes at
// step (b - a) mod (devices), copies within one device first, the list's order kept within a
// step. Each device issues its copies one after the other, so at each step every device then
// receives from one other, as in the all-to-all; listed destination by destination, all would
// first write into the same device and share its incoming links.
void rotate_by_step(TransferList& list, std::span<const int> src_ids, std::span<const int> dst_ids) {
  // `after` names a position in the list: a list that uses it keeps its order.
  if (std::any_of(list.begin(), list.end(), [](const Transfer& t) { return t.after >= 0; })) return;
  std::vector<int> ids(src_ids.begin(), src_ids.end());
  ids.insert(ids.end(), dst_ids.begin(), dst_ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const auto rank = [&](int id) { return static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin()); };
  // Each transfer's step, computed once; the transfers then taken step by step in list order.
  std::vector<std::pair<std::size_t, std::size_t>> keyed;  // (step, index in the list)
  keyed.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::size_t a = rank(src_ids[static_cast<std::size_t>(list[i].src.pos)]);
    const std::size_t b = rank(dst_ids[static_cast<std::size_t>(list[i].dst.pos)]);
    keyed.emplace_back((b + ids.size() - a) % ids.size(), i);
  }
  std::sort(keyed.begin(), keyed.end());  // (step, index): stable by construction
  TransferList ordered;
  ordered.reserve(list.size());
  for (const auto& [step, i] : keyed) ordered.push_back(list[i]);
  list = std::move(ordered);
}

}  // namespace

TransferList copy_transfers(const Layout& src, std::span<const int> src_ids, const Layout& dst,
                            std::span<const int> dst_ids, Range part, CopyRoots roots) {
  constexpr const char* where = "cush::copy_transfers";
  if (src.size() != dst.size())
    throw InvalidArgument(where, "dst",
                          "has " + std::to_string(dst.size()) + " elements, the source " + std::to_string(src.size()));
  if (src_ids.size() != src.devices() || dst_ids.size() != dst.devices())
    throw InvalidArgument(where, "ids", "need one device id per position of each layout");
  check_part(src, part, where);
  if (roots.source >= 0) {
    check_root(src, static_cast<std::size_t>(roots.source), where);
    if (!src.is_replicated()) throw InvalidArgument(where, "roots.source", "needs a replicated source");
  }
  if (roots.destination >= 0) {
    check_root(dst, static_cast<std::size_t>(roots.destination), where);
    if (!dst.is_replicated()) throw InvalidArgument(where, "roots.destination", "needs a replicated destination");
  }
  TransferList list;
  for (std::size_t j = 0; j < dst.devices(); ++j) {
    if (roots.destination >= 0 && j != static_cast<std::size_t>(roots.destination)) continue;
    const Range& seg = dst.segment(j);
    pull(src, src_ids, roots.source, j, dst_ids[j], seg.offset, intersect(seg, part), list);
  }
  rotate_by_step(list, src_ids, dst_ids);
  return list;
}

std::vector<std::size_t> all_to_all_counts(const Layout& src, const Layout& dst) {
  constexpr const char* where = "cush::all_to_all_counts";
  if (src.is_replicated() || dst.is_replicated())
    throw InvalidArgument(where, "layout", "an all-to-all needs partitioned plans");
  if (src.size() != dst.size())
    throw InvalidArgument(where, "dst",
                          "has " + std::to_string(dst.size()) + " elements, the source " + std::to_string(src.size()));
  const std::size_t n = src.size();
  std::vector<std::size_t> counts;
  if (n == 0) return std::vector<std::size_t>(src.devices() * dst.devices(), 0);  // nothing moves (and gcd(0, 0) = 0)
  counts.reserve(src.devices() * dst.devices());
  for (std::size_t i = 0; i < src.devices(); ++i) {
    for (std::size_t j = 0; j < dst.devices(); ++j) {
      // s * d / n without overflow: with g = gcd(s, n), it is whole iff (n / g) divides d.
      const std::size_t s = src.segment(i).count;
      const std::size_t d = dst.segment(j).count;
      const std::size_t g = std::gcd(s, n);
      if (d % (n / g) != 0)
        throw InvalidArgument(where, "layout",
                              "source segment " + std::to_string(i) + " (" + std::to_string(src.segment(i).count) +
                                  " elements) and destination segment " + std::to_string(j) + " (" +
                                  std::to_string(dst.segment(j).count) +
                                  ") do not make a block transpose of " + std::to_string(n) +
                                  " elements; pass the counts explicitly");
      counts.push_back(s / g * (d / (n / g)));
    }
  }
  return counts;
}

TransferList all_to_all_transfers(const Layout& src, const Layout& dst, std::span<const std::size_t> counts) {
  constexpr const char* where = "cush::all_to_all_transfers";
  const std::size_t p = src.devices();
  const std::size_t q = dst.devices();
  if (src.is_replicated() || dst.is_replicated())
    throw InvalidArgument(where, "layout", "an all-to-all needs partitioned plans");
  if (counts.size() != p * q)
    throw InvalidArgument(where, "counts",
                          "has " + std::to_string(counts.size()) + " entries, needs " + std::to_string(p) + " x " +
                              std::to_string(q));
  // Offsets of each piece in its source and destination segment; rows and columns must add up. A
  // sum never passes its segment's size (checked before each addition), so none wraps around 2^64.
  std::vector<std::size_t> src_offset(p * q);
  std::vector<std::size_t> dst_offset(p * q);
  for (std::size_t i = 0; i < p; ++i) {
    std::size_t sum = 0;
    for (std::size_t j = 0; j < q; ++j) {
      src_offset[i * q + j] = sum;
      if (counts[i * q + j] > src.segment(i).count - sum)
        throw InvalidArgument(where, "counts",
                              "row " + std::to_string(i) + " adds up to more than source segment " +
                                  std::to_string(i) + "'s " + std::to_string(src.segment(i).count) + " elements");
      sum += counts[i * q + j];
    }
    if (sum != src.segment(i).count)
      throw InvalidArgument(where, "counts",
                            "row " + std::to_string(i) + " sums to " + std::to_string(sum) +
                                " elements, source segment " + std::to_string(i) + " has " +
                                std::to_string(src.segment(i).count));
  }
  for (std::size_t j = 0; j < q; ++j) {
    std::size_t sum = 0;
    for (std::size_t i = 0; i < p; ++i) {
      dst_offset[i * q + j] = sum;
      if (counts[i * q + j] > dst.segment(j).count - sum)
        throw InvalidArgument(where, "counts",
                              "column " + std::to_string(j) + " adds up to more than destination segment " +
                                  std::to_string(j) + "'s " + std::to_string(dst.segment(j).count) + " elements");
      sum += counts[i * q + j];
    }
    if (sum != dst.segment(j).count)
      throw InvalidArgument(where, "counts",
                            "column " + std::to_string(j) + " sums to " + std::to_string(sum) +
                                " elements, destination segment " + std::to_string(j) + " has " +
                                std::to_string(dst.segment(j).count));
  }
  // Step s pairs source i with destination (i + s) mod q, so each step spreads over the links.
  TransferList list;
  for (std::size_t s = 0; s < q; ++s) {
    for (std::size_t i = 0; i < p; ++i) {
      const std::size_t j = (i + s) % q;
      const std::size_t k = i * q + j;
      if (counts[k] == 0) continue;
      list.push_back(device_copy(i, src_offset[k], j, dst_offset[k], counts[k]));
    }
  }
  return list;
}

TransferList device_broadcast_transfers(const Layout& layout, std::size_t root, Range part, bool split,
                                        std::size_t chunk) {
  constexpr const char* where = "cush::device_broadcast_transfers";
  if (!layout.is_replicated())
    throw InvalidArgument(where, "layout", "a broadcast needs a replicated plan (Distribution::replicated())");
  check_root(layout, root, where);
  check_part(layout, part, where);
  const std::size_t p = layout.devices();
  TransferList list;
  if (part.empty()) return list;
  if (!split || p < 3) {
    for (std::size_t s = 1; s < p; ++s) {
      const std::size_t k = (root + s) % p;
      list.push_back(device_copy(root, part.offset, k, part.offset, part.count));
    }
    return list;
  }
  // Relay along a chain: the root sends the part to the next device in rounds of at most `chunk`
  // elements, and each device forwards every round to the device after it as soon as the round
  // has landed (`after`). Each device receives the part once, from one sender, and all links of
  // the chain carry a round at the same time. (The earlier relay gave each device a share to
  // forward to all others; a trace on 4 x H200 showed three senders writing into one device at a
  // time while the others waited, 2.8 x one link's time: docs/results/records/profiles_2026-11-27.md.)
  const std::size_t step = chunk == 0 ? part.count : chunk;
  for (std::size_t offset = part.offset; offset < part.end(); offset += step) {
    const std::size_t count = std::min(step, part.end() - offset);
    int landed = -1;
    for (std::size_t h = 0; h + 1 < p; ++h) {
      const std::size_t from = (root + h) % p;
      const std::size_t to = (root + h + 1) % p;
      const int here = static_cast<int>(list.size());
      list.push_back(device_copy(from, offset, to, offset, count, landed));
      landed = here;
    }
  }
  return list;
}

TransferList reduce_transfers(const Layout& layout, std::size_t root, Range part) {
  constexpr const char* where = "cush::reduce_transfers";
  if (!layout.is_replicated())
    throw InvalidArgument(where, "layout", "a reduction needs a replicated plan (Distribution::replicated())");
  check_root(layout, root, where);
  check_part(layout, part, where);
  TransferList list;
  if (part.empty()) return list;
  // Each combine rewrites the root's elements: they form a chain.
  for (std::size_t s = 1; s < layout.devices(); ++s) {
    const std::size_t k = (root + s) % layout.devices();
    Transfer t = device_copy(k, part.offset, root, part.offset, part.count, static_cast<int>(list.size()) - 1);
    t.combine = true;
    list.push_back(t);
  }
  return list;
}

TransferList all_reduce_transfers(const Layout& layout, Range part, std::size_t granularity) {
  constexpr const char* where = "cush::all_reduce_transfers";
  if (!layout.is_replicated())
    throw InvalidArgument(where, "layout", "a reduction needs a replicated plan (Distribution::replicated())");
  if (granularity == 0) throw InvalidArgument(where, "granularity", "must be at least 1");
  check_part(layout, part, where);
  const std::size_t p = layout.devices();
  TransferList list;
  if (part.empty() || p == 1) return list;
  const std::vector<Range> shares = detail::even_shares(part, p, granularity);
  // Reduce-scatter: device j combines share j from every other device, in a chain on device j.
  std::vector<int> reduced(p, -1);
  for (std::size_t j = 0; j < p; ++j) {
    if (shares[j].empty()) continue;
    for (std::size_t s = 1; s < p; ++s) {
      const std::size_t k = (j + s) % p;
      Transfer t = device_copy(k, shares[j].offset, j, shares[j].offset, shares[j].count, reduced[j]);
      t.combine = true;
      reduced[j] = static_cast<int>(list.size());
      list.push_back(t);
    }
  }
  // All-gather: each reduced share to every other device.
  for (std::size_t j = 0; j < p; ++j) {
    if (shares[j].empty()) continue;
    for (std::size_t s = 1; s < p; ++s) {
      const std::size_t k = (j + s) % p;
      list.push_back(device_copy(j, shares[j].offset, k, shares[j].offset, shares[j].count, reduced[j]));
    }
  }
  return list;
}

}  // namespace cush
