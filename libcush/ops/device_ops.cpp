#include "cush/device_ops.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "ops/device_transfers.hpp"
#include "cush/error.hpp"
#include "host/plan_impl.hpp"

namespace cush::detail {

namespace {

using Impl = PlanAccess::Impl;

// Below this size a split broadcast's extra hop costs more than the root's links save.
constexpr std::size_t split_broadcast_min_bytes = std::size_t{1} << 20;
// All-reduce shares start on 256-byte boundaries, where the combine kernel runs vectorized.
constexpr std::size_t all_reduce_alignment = 256;

void check_root(std::size_t root, std::size_t devices, const char* where) {
  if (root >= devices)
    throw InvalidArgument(where, "root",
                          "position " + std::to_string(root) + " is not in a set of " + std::to_string(devices) +
                              " devices");
}

void check_replicated(const Impl& plan, const char* argument, const char* what, const char* where) {
  if (!plan.layout.is_replicated())
    throw InvalidArgument(where, argument,
                          std::string(what) + " needs a replicated plan (Distribution::replicated()); this one is " +
                              plan.distribution.name());
}

// The largest number of bytes one device receives from other devices: the message size the
// transport table is indexed by.
std::size_t message_bytes(const TransferList& list, const Impl& src, const Impl& dst) {
  std::vector<std::pair<int, std::size_t>> received;
  for (const Transfer& t : list) {
    const int from = src.devices[static_cast<std::size_t>(t.src.device)];
    const int to = dst.devices[static_cast<std::size_t>(t.dst.device)];
    if (from == to) continue;
    auto it = std::find_if(received.begin(), received.end(), [&](const auto& r) { return r.first == to; });
    if (it == received.end()) it = received.insert(received.end(), {to, 0});
    it->second += t.count * src.element_size;
  }
  std::size_t most = 0;
  for (const auto& r : received) most = std::max(most, r.second);
  return most;
}

// Pairs of different devices that exchange data in `list`.
std::vector<std::pair<int, int>> links_used(const TransferList& list, const Impl& src, const Impl& dst) {
  std::vector<std::pair<int, int>> links;
  for (const Transfer& t : list) {
    const std::pair<int, int> l{src.devices[static_cast<std::size_t>(t.src.device)],
                                dst.devices[static_cast<std::size_t>(t.dst.device)]};
    if (l.first != l.second && std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
  }
  return links;
}

// Peer capability does not change while the process runs: asked once per pair.
bool can_access(int from, int to) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, bool> known;
  std::lock_guard lock(mutex);
  const auto it = known.find({from, to});
  if (it != known.end()) return it->second;
  int can = 0;
  CUSH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, to, from));
  return known[{from, to}] = can != 0;
}

bool peer_capable(const std::vector<std::pair<int, int>>& links) {
  return std::all_of(links.begin(), links.end(), [](const auto& l) { return can_access(l.first, l.second); });
}

bool capturing(const Impl& a, const Impl& b) {
  const auto any = [](const Impl& p) {
    return std::any_of(p.stream_handles.begin(), p.stream_handles.end(), [](cudaStream_t s) { return detail::capturing(s); });
  };
  return any(a) || (&a != &b && any(b));
}

// The transport of one operation. Under graph capture `automatic` avoids NCCL (see
// transport.hpp), and a forced NCCL is refused.
// Whether a stream is being captured is asked only where the answer matters (NCCL), as it costs
// one CUDA call per stream.
Transport choose(Collective kind, std::size_t bytes, const CommOptions& options,
                 const std::vector<std::pair<int, int>>& links, const Impl& src, const Impl& dst, const char* where) {
  const Transport forced = options.transport;
  if ((forced == Transport::peer || forced == Transport::peer_kernel) && !peer_capable(links))
    throw InvalidArgument(where, "options.transport",
                          std::string(to_string(forced)) +
                              " was asked for, but two of the devices have no peer access; use host_staging or nccl");
  if ((forced == Transport::nccl || forced == Transport::peer_kernel) && capturing(src, dst))
    throw InvalidArgument(where, "options.transport",
                          std::string("cush does not capture ") + to_string(forced) +
                              " operations into graphs; use peer or host_staging");
  if (forced != Transport::automatic) return forced;
  if (links.empty()) return Transport::peer;  // copies within devices only
  Transport t = TransportTable::current().pick(kind, bytes);
  if ((t == Transport::nccl || t == Transport::peer_kernel) && capturing(src, dst)) t = Transport::peer;
  return (t == Transport::peer || t == Transport::peer_kernel) && !peer_capable(links) ? Transport::host_staging : t;
}

// peer_kernel needs peer access between every two participants (their flags), not only where
// data moves.
bool all_pairs_capable(const std::vector<int>& ids) {
  for (int a : ids)
    for (int b : ids)
      if (a != b && !can_access(a, b)) return false;
  return true;
}

void enable_peers(const std::vector<std::pair<int, int>>& links) {
  for (const auto& [from, to] : links) {
    enable_peer_access_once(to, from);  // the destination's stream reads the source
    enable_peer_access_once(from, to);
  }
}

void hold(Impl& plan, const std::shared_ptr<Communicator>& comm) {
  if (std::find(plan.communicators.begin(), plan.communicators.end(), comm) == plan.communicators.end())
    plan.communicators.push_back(comm);
}

std::shared_ptr<Communicator> communicator(Impl& src, Impl& dst, const OpStreams& streams) {
  const std::vector<int> ids = streams.devices();
  // An operation within one plan over the devices of a communicator it used before takes that
  // one without the process-wide registry (and its lock).
  if (&src == &dst)
    for (const std::shared_ptr<Communicator>& c : src.communicators)
      if (c->devices() == ids) return c;
  std::shared_ptr<Communicator> comm = Communicator::of(ids);
  hold(src, comm);
  hold(dst, comm);
  return comm;
}

void hold(Impl& plan, const std::shared_ptr<PeerGroup>& group) {
  if (std::find(plan.peer_groups.begin(), plan.peer_groups.end(), group) == plan.peer_groups.end())
    plan.peer_groups.push_back(group);
}

// Runs `list` from `src` to `dst` (which may be the same plan) over `transport`. A list that
// peer_kernel cannot take runs on peer.
void run(const TransferList& list, Impl& src, Impl& dst, Transport transport,
         const std::vector<std::pair<int, int>>& links, ElementType type = ElementType::uint8,
         ReduceOp op = ReduceOp::sum) {
  OpStreams streams(src.endpoint(), dst.endpoint());
  if (transport == Transport::peer_kernel) {
    std::vector<int> ids = streams.devices();
    if (peer_kernel_fits(list, streams) && all_pairs_capable(ids)) {
      std::vector<cudaStream_t> work;
      for (std::size_t k = 0; k < streams.size(); ++k) work.push_back(streams.work(k));
      const std::shared_ptr<PeerGroup> group = PeerGroup::of(ids, work);
      hold(src, group);
      hold(dst, group);
      execute_peer_kernel(list, src.element_size, src.endpoint(), dst.endpoint(), streams, *group);
      streams.finish();
      return;
    }
    transport = Transport::peer;
  }
  if (transport == Transport::nccl) {
    const std::shared_ptr<Communicator> comm = communicator(src, dst, streams);
    execute_nccl(list, src.element_size, src.endpoint(), dst.endpoint(), *comm, streams);
  } else {
    DeviceOpContext ctx;
    ctx.element_size = src.element_size;
    ctx.src = src.endpoint();
    ctx.dst = dst.endpoint();
    ctx.staged = transport == Transport::host_staging;
    ctx.type = type;
    ctx.op = op;
    if (ctx.staged) {
      if (!dst.staging) dst.staging = std::make_unique<StagingSlots>();
      ctx.staging = dst.staging.get();
    } else {
      enable_peers(links);
    }
    execute_device(list, ctx, streams);
  }
  streams.finish();
}

// A regular all-gather (equal segments, same devices in the same order) is one NCCL call.
bool nccl_all_gather_fits(const Impl& src, const Impl& dst, Range part) {
  if (src.layout.is_replicated() || !dst.layout.is_replicated() || src.devices != dst.devices) return false;
  if (part.offset != 0 || part.count != src.layout.size()) return false;
  const std::size_t c = src.layout.segment(0).count;
  return std::all_of(src.layout.segments().begin(), src.layout.segments().end(),
                     [&](const Range& r) { return r.count == c; });
}

}  // namespace

void copy_plans(const PlanBase& src_plan, PlanBase& dst_plan, Range part, std::size_t root, Collective kind,
                const CommOptions& options, const char* where) {
  Impl& src = PlanAccess::impl(src_plan);
  Impl& dst = PlanAccess::impl(dst_plan);
  if (&src == &dst) throw InvalidArgument(where, "dst", "is the source plan; copy between two plans");
  if (src.layout.size() != dst.layout.size())
    throw InvalidArgument(where, "dst",
                          "has " + std::to_string(dst.layout.size()) + " elements, the source has " +
                              std::to_string(src.layout.size()));
  if (part.count == 0) throw InvalidArgument(where, "count", "is zero");
  if (part.offset >= src.layout.size() || part.count > src.layout.size() - part.offset)
    throw InvalidArgument(where, "first",
                          "elements [" + std::to_string(part.offset) + ", " + std::to_string(part.offset + part.count) +
                              ") do not fit in the plans' " + std::to_string(src.layout.size()) + " elements");
  CopyRoots roots;
  if (kind == Collective::scatter) {
    check_root(root, src.devices.size(), where);
    if (src.layout.is_replicated()) {
      roots.source = static_cast<int>(root);
    } else if (src.layout.segment(root).count != src.layout.size()) {
      throw InvalidArgument(where, "src",
                            "a device scatter reads one device's whole buffer: make src replicated or give position " +
                                std::to_string(root) + " the whole extent");
    }
  } else if (kind == Collective::gather) {
    check_root(root, dst.devices.size(), where);
    if (dst.layout.is_replicated()) {
      roots.destination = static_cast<int>(root);
    } else if (dst.layout.segment(root).count != dst.layout.size()) {
      throw InvalidArgument(where, "dst",
                            "a device gather fills one device's whole buffer: make dst replicated or give position " +
                                std::to_string(root) + " the whole extent");
    }
  } else if (kind == Collective::all_gather) {
    check_replicated(dst, "dst", "an all-gather", where);
  }
  const TransferList list = copy_transfers(src.layout, src.devices.ids(), dst.layout, dst.devices.ids(), part, roots);
  const std::vector<std::pair<int, int>> links = links_used(list, src, dst);
  const Transport transport = choose(kind, message_bytes(list, src, dst), options, links, src, dst, where);
  if (transport == Transport::nccl && kind == Collective::all_gather && nccl_all_gather_fits(src, dst, part)) {
    OpStreams streams(src.endpoint(), dst.endpoint());
    const std::shared_ptr<Communicator> comm = communicator(src, dst, streams);
    nccl_all_gather(*comm, streams, src.data, dst.data, src.layout.segment(0).count * src.element_size);
    streams.finish();
    return;
  }
  run(list, src, dst, transport, links);
}

void copy_segment(const PlanBase& src_plan, std::size_t src_pos, PlanBase& dst_plan, std::size_t dst_pos,
                  const CommOptions& options, const char* where) {
  Impl& src = PlanAccess::impl(src_plan);
  Impl& dst = PlanAccess::impl(dst_plan);
  check_root(src_pos, src.devices.size(), where);
  check_root(dst_pos, dst.devices.size(), where);
  const std::size_t count = src.layout.segment(src_pos).count;
  if (count != dst.layout.segment(dst_pos).count)
    throw InvalidArgument(where, "dst_pos",
                          "segment " + std::to_string(dst_pos) + " holds " +
                              std::to_string(dst.layout.segment(dst_pos).count) + " elements, source segment " +
                              std::to_string(src_pos) + " holds " + std::to_string(count));
  if (&src == &dst && src_pos == dst_pos) return;
  const TransferList list{Transfer{Location{static_cast<int>(src_pos), 0}, Location{static_cast<int>(dst_pos), 0},
                                   count, -1, false}};
  const std::vector<std::pair<int, int>> links = links_used(list, src, dst);
  run(list, src, dst, choose(Collective::copy, count * src.element_size, options, links, src, dst, where),
      links);
}

void all_to_all_plans(const PlanBase& src_plan, PlanBase& dst_plan, std::span<const std::size_t> counts,
                      const CommOptions& options, const char* where) {
  Impl& src = PlanAccess::impl(src_plan);
  Impl& dst = PlanAccess::impl(dst_plan);
  if (&src == &dst) throw InvalidArgument(where, "dst", "is the source plan; an all-to-all needs two plans");
  try {
    const std::vector<std::size_t> derived = counts.empty() ? all_to_all_counts(src.layout, dst.layout)
                                                            : std::vector<std::size_t>{};
    const TransferList list = all_to_all_transfers(src.layout, dst.layout, counts.empty() ? derived : counts);
    const std::vector<std::pair<int, int>> links = links_used(list, src, dst);
    run(list, src, dst,
        choose(Collective::all_to_all, message_bytes(list, src, dst), options, links, src, dst, where),
        links);
  } catch (const InvalidArgument& e) {
    if (e.where() == where) throw;
    throw InvalidArgument(where, e.argument(), e.what());
  }
}

void broadcast_plan(PlanBase& plan_base, std::size_t root, const CommOptions& options, const char* where) {
  Impl& plan = PlanAccess::impl(plan_base);
  check_replicated(plan, "plan", "a broadcast", where);
  check_root(root, plan.devices.size(), where);
  const std::size_t n = plan.layout.size();
  const bool split = n * plan.element_size >= split_broadcast_min_bytes;
  const TransferList list = device_broadcast_transfers(plan.layout, root, Range{0, n}, split);
  const std::vector<std::pair<int, int>> links = links_used(list, plan, plan);
  const Transport transport =
      choose(Collective::broadcast, n * plan.element_size, options, links, plan, plan, where);
  if (transport == Transport::nccl && plan.devices.size() > 1) {
    OpStreams streams(plan.endpoint(), plan.endpoint());
    const std::shared_ptr<Communicator> comm = communicator(plan, plan, streams);
    nccl_broadcast(*comm, streams, plan.data, n * plan.element_size, root);
    streams.finish();
    return;
  }
  run(list, plan, plan, transport, links);
}

void reduce_plan(PlanBase& plan_base, bool all, std::size_t root, ElementType type, ReduceOp op,
                 const CommOptions& options, const char* where) {
  Impl& plan = PlanAccess::impl(plan_base);
  check_replicated(plan, "plan", "a reduction", where);
  if (!all) check_root(root, plan.devices.size(), where);
  if (size_of(type) != plan.element_size)
    throw InvalidArgument(where, "type", std::string(to_string(type)) + " does not match the plan's element size");
  if (plan.devices.size() == 1) return;  // one replica is its own reduction
  const std::size_t n = plan.layout.size();
  const std::size_t granularity = std::max<std::size_t>(1, all_reduce_alignment / plan.element_size);
  // The list also names the links, which decide whether peer access is possible; the links are
  // kept, so an operation that runs as an NCCL collective builds no list.
  std::optional<TransferList> list;
  const auto make_list = [&] {
    list = all ? all_reduce_transfers(plan.layout, Range{0, n}, granularity)
               : reduce_transfers(plan.layout, root, Range{0, n});
  };
  const std::pair<bool, std::size_t> key{all, all ? 0 : root};
  auto known = plan.reduce_links.find(key);
  if (known == plan.reduce_links.end()) {
    make_list();
    known = plan.reduce_links.emplace(key, links_used(*list, plan, plan)).first;
  }
  const std::vector<std::pair<int, int>>& links = known->second;
  const Transport transport =
      choose(all ? Collective::all_reduce : Collective::reduce, n * plan.element_size, options, links,
             plan, plan, where);
  if (transport == Transport::nccl) {
    OpStreams streams(plan.endpoint(), plan.endpoint());
    const std::shared_ptr<Communicator> comm = communicator(plan, plan, streams);
    if (all) {
      nccl_all_reduce(*comm, streams, plan.data, n, type, op);
    } else {
      nccl_reduce(*comm, streams, plan.data, n, type, op, root);
    }
    streams.finish();
    return;
  }
  if (!list) make_list();
  run(*list, plan, plan, transport, links, type, op);
}

}  // namespace cush::detail
