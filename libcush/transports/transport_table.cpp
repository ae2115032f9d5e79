#include "cush/transport.hpp"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/env.hpp"
#include "cush/error.hpp"

namespace cush {

namespace {
constexpr std::array<const char*, 5> transport_names{"automatic", "peer", "nccl", "host_staging", "peer_kernel"};
constexpr std::array<const char*, collective_count> collective_names{
    "copy", "broadcast", "scatter", "gather", "all_gather", "all_to_all", "reduce", "all_reduce"};
}  // namespace

const char* to_string(Transport t) noexcept { return transport_names.at(static_cast<std::size_t>(t)); }
const char* to_string(Collective c) noexcept { return collective_names.at(static_cast<std::size_t>(c)); }

Transport parse_transport(std::string_view name) {
  for (std::size_t i = 0; i < transport_names.size(); ++i)
    if (name == transport_names[i]) return static_cast<Transport>(i);
  throw InvalidArgument("cush::parse_transport", "name",
                        "'" + std::string(name) + "' is not one of automatic, peer, nccl, host_staging, peer_kernel");
}

Collective parse_collective(std::string_view name) {
  for (std::size_t i = 0; i < collective_names.size(); ++i)
    if (name == collective_names[i]) return static_cast<Collective>(i);
  throw InvalidArgument("cush::parse_collective", "name", "'" + std::string(name) + "' is not an operation");
}

TransportTable TransportTable::defaults() {
  // Measured on 2 x H200 (NVLink), docs/results/device_ops.md and docs/device_ops.md: copy
  // engines beat NCCL for the data movements from 16 MiB up and are within a few µs below. Where
  // every device sends (all-to-all, all-gather) and for scatter, the peer_kernel's in-kernel
  // handshake beats the cross-device events of the copy engines (about 11-17 µs against 20-33 µs)
  // and NCCL as well, measured up to 512 KiB received per device (the table's byte counts). On
  // 4 x H200 the kernel also ran the 16 MiB all-to-all and all-gather (12 MiB received per device)
  // in 49 µs where the copy engines took 84-91 µs (NCCL 66-68 µs): there the copy engines wait on
  // the host, which enqueues 16 copies and their events more slowly than the links move them
  // (docs/results/records/profiles_2026-11-27.md); from 64 MiB received the copy engines were
  // faster again on 2 and 4 GPUs. So the kernel is used below 16 MiB. For one-way copies,
  // broadcast and gather the two are within the run-to-run noise, and the copy engines, which
  // leave the SMs to the application, keep them.
  // Reductions: the peer kernel's one-shot and two-shot all-reduces beat NCCL (default and on
  // symmetric windows) by 1.2-1.3 x from 4 KiB to 256 KiB, and are level with it or faster up to
  // 128 MiB but at 1-4 MiB (0.89-0.94 x NCCL on windows); the copy engines with the combine
  // kernel are faster from 128 MiB. A reduce is fastest on the copy engines up to 64 KiB (8-11
  // µs, NCCL 13-19) and on the kernel from 256 KiB; from 64 MiB the two were level on 2 GPUs,
  // and on 4 x H200 the kernel's spread reduce (no NVLink port carries more than one replica)
  // reached 0.90-0.97 x NCCL there, where the copy engines (the root reads every replica)
  // reached 0.35-0.41 x (docs/device_ops.md).
  TransportTable t;
  for (std::size_t c = 0; c < collective_count; ++c) t.set(static_cast<Collective>(c), 0, Transport::peer);
  for (Collective c : {Collective::all_to_all, Collective::all_gather, Collective::scatter}) {
    t.set(c, 0, Transport::peer_kernel);
    t.set(c, std::size_t{16} << 20, Transport::peer);
  }
  t.set(Collective::reduce, 0, Transport::peer);
  t.set(Collective::reduce, std::size_t{256} << 10, Transport::peer_kernel);
  t.set(Collective::all_reduce, 0, Transport::peer_kernel);
  t.set(Collective::all_reduce, std::size_t{128} << 20, Transport::peer);
  return t;
}

void TransportTable::set(Collective c, std::size_t from_bytes, Transport t) {
  if (t == Transport::automatic)
    throw InvalidArgument("cush::TransportTable::set", "transport", "a table entry must name a transport");
  std::vector<Step>& steps = steps_.at(static_cast<std::size_t>(c));
  const auto at = std::find_if(steps.begin(), steps.end(), [&](const Step& s) { return s.from_bytes >= from_bytes; });
  if (at != steps.end() && at->from_bytes == from_bytes) {
    at->transport = t;
  } else {
    steps.insert(at, Step{from_bytes, t});
  }
}

Transport TransportTable::pick(Collective c, std::size_t bytes) const {
  Transport chosen = Transport::peer;  // below the first step
  for (const Step& s : steps(c)) {
    if (s.from_bytes > bytes) break;
    chosen = s.transport;
  }
  return chosen;
}

std::string TransportTable::to_text() const {
  std::ostringstream out;
  out << "# cush transport table: <operation> <from bytes per device> <transport>\n";
  for (std::size_t c = 0; c < collective_count; ++c)
    for (const Step& s : steps_[c]) out << collective_names[c] << ' ' << s.from_bytes << ' ' << to_string(s.transport) << '\n';
  return out.str();
}

TransportTable TransportTable::parse(std::string_view text) {
  TransportTable t;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string op;
    std::string from;
    std::string transport;
    std::string extra;
    if (!(fields >> op)) continue;
    const auto bad = [&](const std::string& why) {
      return InvalidArgument("cush::TransportTable::parse", "text", "line " + std::to_string(number) + ": " + why);
    };
    if (!(fields >> from >> transport) || (fields >> extra)) throw bad("expected '<operation> <bytes> <transport>'");
    if (from.empty() || !std::all_of(from.begin(), from.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      throw bad("'" + from + "' is not a byte count");
    // A step names a transport; automatic (a choice among them) is not one.
    if (transport == "automatic" ||
        std::find(transport_names.begin(), transport_names.end(), transport) == transport_names.end())
      throw bad("'" + transport + "' is not a transport a table can name (peer, nccl, host_staging, peer_kernel)");
    try {
      const Transport tr = parse_transport(transport);
      t.set(parse_collective(op), std::stoull(from), tr);
    } catch (const InvalidArgument& e) {
      if (e.where() == "cush::TransportTable::parse") throw;
      throw bad(e.what());
    } catch (const std::out_of_range&) {
      throw bad("'" + from + "' is too large");
    }
  }
  return t;
}

void TransportTable::save(const std::string& path) const {
  std::ofstream out(path);
  out << to_text();
  if (!out) throw Error("cush::TransportTable::save: cannot write " + path);
}

TransportTable TransportTable::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cush::TransportTable::load", "path", "cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str());
}

namespace {
std::mutex table_mutex;
std::optional<TransportTable>& table_slot() {
  static std::optional<TransportTable> table;
  return table;
}
}  // namespace

const TransportTable& TransportTable::current() {
  std::lock_guard lock(table_mutex);
  std::optional<TransportTable>& table = table_slot();
  if (!table) {
    const std::string path = detail::env::text("CUSH_TRANSPORTS");
    table = path.empty() ? defaults() : load(path);
  }
  return *table;
}

void TransportTable::set_current(TransportTable table) {
  std::lock_guard lock(table_mutex);
  table_slot() = std::move(table);
}

}  // namespace cush
