#include "host/transfer.hpp"
#include "host/counts.hpp"

#include <algorithm>

#include "cush/error.hpp"

namespace cush {

namespace detail {
void check_part(const Layout& layout, Range part, const char* where) {
  if (part.end() > layout.size() || part.end() < part.offset)
    throw InvalidArgument(where, "part",
                          "elements [" + std::to_string(part.offset) + ", " + std::to_string(part.end()) +
                              ") are outside the extent of " + std::to_string(layout.size()));
}

std::vector<Range> even_shares(Range part, std::size_t p, std::size_t granularity) {
  const std::vector<std::size_t> counts = uniform_counts(part.count, p, granularity);
  std::vector<Range> shares(p);
  std::size_t offset = part.offset;
  for (std::size_t i = 0; i < p; ++i) {
    shares[i] = Range{offset, counts[i]};
    offset += counts[i];
  }
  return shares;
}
}  // namespace detail

using detail::check_part;

TransferList scatter_transfers(const Layout& layout, Range part) {
  check_part(layout, part, "cush::scatter_transfers");
  if (layout.is_replicated()) return broadcast_transfers(layout, part, BroadcastOptions{});
  TransferList list;
  for (std::size_t pos = 0; pos < layout.devices(); ++pos) {
    const Range& seg = layout.segment(pos);
    const Range r = intersect(seg, part);
    if (r.empty()) continue;
    list.push_back(Transfer{Location{Location::host, r.offset - part.offset},
                            Location{static_cast<int>(pos), r.offset - seg.offset}, r.count, -1});
  }
  return list;
}

TransferList gather_transfers(const Layout& layout, Range part) {
  check_part(layout, part, "cush::gather_transfers");
  TransferList list;
  if (layout.is_replicated()) {
    // Every replica holds the data: read an even share from each device, over all host links.
    const std::vector<Range> shares = detail::even_shares(part, layout.devices(), 1);
    for (std::size_t pos = 0; pos < shares.size(); ++pos) {
      if (shares[pos].empty()) continue;
      list.push_back(Transfer{Location{static_cast<int>(pos), shares[pos].offset},
                              Location{Location::host, shares[pos].offset - part.offset}, shares[pos].count, -1});
    }
    return list;
  }
  for (std::size_t pos = 0; pos < layout.devices(); ++pos) {
    const Range& seg = layout.segment(pos);
    const Range r = intersect(seg, part);
    if (r.empty()) continue;
    list.push_back(Transfer{Location{static_cast<int>(pos), r.offset - seg.offset},
                            Location{Location::host, r.offset - part.offset}, r.count, -1});
  }
  return list;
}

TransferList broadcast_transfers(const Layout& layout, Range part, const BroadcastOptions& options) {
  constexpr const char* where = "cush::broadcast_transfers";
  if (!layout.is_replicated())
    throw InvalidArgument(where, "layout",
                          "a broadcast needs a plan whose every device holds the whole extent "
                          "(Distribution::replicated())");
  check_part(layout, part, where);
  const std::size_t p = layout.devices();
  TransferList list;
  if (part.empty()) return list;
  if (!options.use_peers || p == 1) {
    for (std::size_t pos = 0; pos < p; ++pos)
      list.push_back(Transfer{Location{Location::host, 0}, Location{static_cast<int>(pos), part.offset},
                              part.count, -1});
    return list;
  }
  // Each device fetches its share from the host; the other devices copy it from there as soon
  // as each chunk has landed, so host links and peer links work at the same time.
  const std::vector<Range> shares = detail::even_shares(part, p, 1);
  const std::size_t chunk = options.chunk == 0 ? part.count : options.chunk;
  for (std::size_t c = 0;; ++c) {
    bool any = false;
    for (std::size_t src = 0; src < p; ++src) {
      const std::size_t begin = c * chunk;
      if (begin >= shares[src].count) continue;
      any = true;
      const Range piece{shares[src].offset + begin, std::min(chunk, shares[src].count - begin)};
      const int landed = static_cast<int>(list.size());
      list.push_back(Transfer{Location{Location::host, piece.offset - part.offset},
                              Location{static_cast<int>(src), piece.offset}, piece.count, -1});
      for (std::size_t k = 1; k < p; ++k) {
        const std::size_t dst = (src + k) % p;  // spread the first copies over different targets
        list.push_back(Transfer{Location{static_cast<int>(src), piece.offset},
                                Location{static_cast<int>(dst), piece.offset}, piece.count, landed});
      }
    }
    if (!any) break;
  }
  return list;
}

namespace {
// The lists of several parts joined into one whose host offsets count from element 0.
template <class Make>
TransferList joined(const Layout& layout, Slice s, std::size_t granularity, bool host_is_src, Make make) {
  TransferList list;
  const std::size_t parts = layout.is_replicated() ? 1 : layout.devices();
  for (std::size_t pos = 0; pos < parts; ++pos) {
    const Range r = layout.slice(pos, s, granularity);
    if (r.empty()) continue;
    const int base = static_cast<int>(list.size());
    for (Transfer t : make(r)) {
      (host_is_src ? t.src : t.dst).offset += r.offset;
      if (t.after >= 0) t.after += base;
      list.push_back(t);
    }
  }
  return list;
}
}  // namespace

TransferList scatter_transfers(const Layout& layout, Slice s, std::size_t granularity) {
  return joined(layout, s, granularity, true, [&](Range r) { return scatter_transfers(layout, r); });
}

TransferList gather_transfers(const Layout& layout, Slice s, std::size_t granularity) {
  return joined(layout, s, granularity, false, [&](Range r) { return gather_transfers(layout, r); });
}

}  // namespace cush
