#include "mpi/rank_layout.hpp"

#include <bit>
#include <cstdint>
#include <exception>
#include <string>

#include "cush/error.hpp"
#include "mpi/fingerprint.hpp"
#include "mpi/mpi_call.hpp"

namespace cush::detail {

namespace {

constexpr const char* where = "cush: a plan over ranks";
constexpr std::size_t words_per_device = 8;
constexpr char separator = '\x1f';  // between the strings of one rank's devices

std::uint64_t word(int v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)); }
int integer(std::uint64_t w) { return static_cast<int>(static_cast<std::int64_t>(w)); }

// Every rank's devices, rank by rank: the numbers as 64-bit words, the names and bus ids as text.
std::vector<DeviceInfo> gather_devices(const ProcessGroup& group, std::span<const DeviceInfo> mine, std::vector<int>& pos_rank) {
  std::vector<std::uint64_t> words;
  std::string text;
  for (const DeviceInfo& d : mine) {
    words.insert(words.end(), {word(d.id), word(d.physical_id), word(d.shared_by), word(d.compute_major),
                               word(d.compute_minor), word(d.multiprocessors), d.total_memory,
                               std::bit_cast<std::uint64_t>(d.memory_bandwidth)});
    text += d.name + separator + d.pci_bus_id + separator;
  }
  const auto all_words = allgather_words(group.comm(), group.size(), words, where);
  const auto all_text = allgather_strings(group.comm(), group.size(), text, where);
  std::vector<DeviceInfo> devices;
  for (std::size_t r = 0; r < all_words.size(); ++r) {
    const std::vector<std::uint64_t>& w = all_words[r];
    std::size_t at = 0;  // in all_text[r]
    const auto next_string = [&] {
      const std::size_t end = all_text[r].find(separator, at);
      std::string s = all_text[r].substr(at, end - at);
      at = end + 1;
      return s;
    };
    for (std::size_t k = 0; k + words_per_device <= w.size(); k += words_per_device) {
      DeviceInfo d;
      d.id = integer(w[k]);
      d.physical_id = integer(w[k + 1]);
      d.shared_by = integer(w[k + 2]);
      d.compute_major = integer(w[k + 3]);
      d.compute_minor = integer(w[k + 4]);
      d.multiprocessors = integer(w[k + 5]);
      d.total_memory = w[k + 6];
      d.memory_bandwidth = std::bit_cast<double>(w[k + 7]);
      d.name = next_string();
      d.pci_bus_id = next_string();
      devices.push_back(d);
      pos_rank.push_back(static_cast<int>(r));
    }
  }
  return devices;
}

std::uint64_t text_fingerprint(const std::string& s) {
  Fingerprint f;
  f.add(s.size());
  for (char c : s) f.add(static_cast<unsigned char>(c));
  return f.h;
}

std::uint64_t layout_fingerprint(const Layout& layout) {
  Fingerprint f;
  f.add(layout.is_replicated() ? 1 : 0);
  for (const Range& r : layout.segments()) {
    f.add(r.offset);
    f.add(r.count);
  }
  return f.h;
}

}  // namespace

RankLayout rank_layout(const ProcessGroup& group, std::size_t n, const Distribution& distribution,
                       std::span<const DeviceInfo> mine) {
  group.agree(where, "the number of elements", n);
  group.agree(where, "the distribution (its name)", text_fingerprint(distribution.name()));
  RankLayout out;
  const std::vector<DeviceInfo> devices = gather_devices(group, mine, out.pos_rank);
  // The distribution may refuse the devices (or a custom rule throw) on some ranks only: every
  // rank hears every rank's outcome before anyone throws.
  std::string refused;
  try {
    out.layout = Layout::make(n, distribution, devices);
  } catch (const std::exception& e) {
    refused = e.what();
    if (refused.empty()) refused = "refused without a message";
  }
  const std::vector<std::string> outcomes = allgather_strings(group.comm(), group.size(), refused, where);
  for (std::size_t r = 0; r < outcomes.size(); ++r)
    if (!outcomes[r].empty())
      throw InvalidArgument(where, "distribution", "rank " + std::to_string(r) + ": " + outcomes[r]);
  group.agree(where, "the layout the distribution gives (a custom rule that depends on the rank?)",
              layout_fingerprint(out.layout));
  for (std::size_t pos = 0; pos < out.pos_rank.size(); ++pos)
    if (out.pos_rank[pos] == group.rank()) out.local.push_back(pos);
  return out;
}

}  // namespace cush::detail
