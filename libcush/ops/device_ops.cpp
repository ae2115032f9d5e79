#include "cush/device_ops.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/cuda_devices.hpp"
#include "cush/error.hpp"
#include "host/plan_impl.hpp"
#include "ops/device_transfers.hpp"
#include "transports/backend.hpp"

namespace cush::detail {

namespace {

using Impl = PlanAccess::Impl;

// A relayed broadcast (three or more devices, along a chain) from this size. On 4 x H200 an
// earlier split (the root sent 1.5 x the part, unpipelined) lost to the root's plain copies at
// 1 MiB (87.5 against 28.8 µs) and won at 16 MiB (124 against 152 µs): the relay starts at 16 MiB.
// Its rounds are an eighth of the part, from 2 to 16 MiB: the last device of the chain starts
// p - 2 rounds after the first, so smaller rounds fill the chain sooner, and each round costs a
// copy and an event per link. Neither is tuned by a measurement yet (docs/device_ops.md).
constexpr std::size_t device_split_broadcast_min_bytes = std::size_t{16} << 20;
constexpr std::size_t device_relay_min_chunk_bytes = std::size_t{2} << 20;
constexpr std::size_t device_relay_chunk_bytes = std::size_t{16} << 20;
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
    const int from = src.devices[static_cast<std::size_t>(t.src.pos)];
    const int to = dst.devices[static_cast<std::size_t>(t.dst.pos)];
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
    const std::pair<int, int> l{src.devices[static_cast<std::size_t>(t.src.pos)],
                                dst.devices[static_cast<std::size_t>(t.dst.pos)]};
    if (l.first != l.second && std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
  }
  return links;
}

// Runs `op` on the transport chosen for it, on the two plans' streams.
void run(const Operation& op, std::size_t bytes, const CommOptions& options, const char* where) {
  const TransportBackend& transport = choose_backend(op, bytes, options, where);
  try {
    OpStreams streams(op.src, op.dst);
    transport.enqueue(op, streams);
    streams.finish();
  } catch (...) {
    // Half enqueued: the plans' streams would not be ordered after what did start.
    std::vector<int> devices(op.src.ids.begin(), op.src.ids.end());
    devices.insert(devices.end(), op.dst.ids.begin(), op.dst.ids.end());
    finish_devices(devices);
    throw;
  }
}

// An operation from `src` to `dst` whose list is `list` (made at once: its links are needed).
Operation operation(Collective kind, Impl& src, Impl& dst, TransferList list) {
  std::vector<std::pair<int, int>> links = links_used(list, src, dst);
  Operation op(std::move(list));
  op.kind = kind;
  op.src = src.endpoint();
  op.dst = dst.endpoint();
  op.links = std::move(links);
  op.part = Range{0, src.layout.size()};
  return op;
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
  Operation op = operation(kind, src, dst,
                           copy_transfers(src.layout, src.devices.ids(), dst.layout, dst.devices.ids(), part, roots));
  op.part = part;
  run(op, message_bytes(op.list(), src, dst), options, where);
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
  const Operation op = operation(Collective::copy, src, dst,
                                 TransferList{Transfer{Location{static_cast<int>(src_pos), 0},
                                                       Location{static_cast<int>(dst_pos), 0}, count, -1, false}});
  run(op, count * src.element_size, options, where);
}

void all_to_all_plans(const PlanBase& src_plan, PlanBase& dst_plan, std::span<const std::size_t> counts,
                      const CommOptions& options, const char* where) {
  Impl& src = PlanAccess::impl(src_plan);
  Impl& dst = PlanAccess::impl(dst_plan);
  if (&src == &dst) throw InvalidArgument(where, "dst", "is the source plan; an all-to-all needs two plans");
  try {
    const std::vector<std::size_t> derived = counts.empty() ? all_to_all_counts(src.layout, dst.layout)
                                                            : std::vector<std::size_t>{};
    const Operation op = operation(Collective::all_to_all, src, dst,
                                   all_to_all_transfers(src.layout, dst.layout, counts.empty() ? derived : counts));
    run(op, message_bytes(op.list(), src, dst), options, where);
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
  const std::size_t bytes = n * plan.element_size;
  const bool split = bytes >= device_split_broadcast_min_bytes;
  const std::size_t round_bytes = std::clamp(bytes / 8, device_relay_min_chunk_bytes, device_relay_chunk_bytes);
  const std::size_t chunk = std::max<std::size_t>(round_bytes / plan.element_size, 1);
  Operation op =
      operation(Collective::broadcast, plan, plan, device_broadcast_transfers(plan.layout, root, Range{0, n}, split, chunk));
  op.root = root;
  run(op, n * plan.element_size, options, where);
}

void reduce_plan(PlanBase& plan_base, bool all, std::size_t root, ElementType type, ReduceOp reduce_op,
                 const CommOptions& options, const char* where) {
  Impl& plan = PlanAccess::impl(plan_base);
  check_replicated(plan, "plan", "a reduction", where);
  if (!all) check_root(root, plan.devices.size(), where);
  if (size_of(type) != plan.element_size)
    throw InvalidArgument(where, "type", std::string(to_string(type)) + " does not match the plan's element size");
  if (plan.devices.size() == 1) return;  // one replica is its own reduction
  const std::size_t n = plan.layout.size();
  const std::size_t granularity = std::max<std::size_t>(1, all_reduce_alignment / plan.element_size);
  // The links decide which transports can run it; they are computed once per plan and root,
  // so an operation that runs as an NCCL collective builds no list.
  const auto make_list = [&plan, all, root, n, granularity] {
    return all ? all_reduce_transfers(plan.layout, Range{0, n}, granularity) : reduce_transfers(plan.layout, root, Range{0, n});
  };
  const std::pair<bool, std::size_t> key{all, all ? 0 : root};
  auto known = plan.reduce_links.find(key);
  if (known == plan.reduce_links.end()) known = plan.reduce_links.emplace(key, links_used(make_list(), plan, plan)).first;
  Operation op(make_list);
  op.kind = all ? Collective::all_reduce : Collective::reduce;
  op.src = op.dst = plan.endpoint();
  op.part = Range{0, n};
  op.root = root;
  op.type = type;
  op.op = reduce_op;
  op.links = known->second;
  run(op, n * plan.element_size, options, where);
}

}  // namespace cush::detail
