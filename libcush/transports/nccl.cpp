// The nccl transport: NCCL collectives and grouped send/receive on the communicator of the
// operation's set of devices (nccl_communicator.hpp: one per set, kept for the process).
// Broadcasts, reductions and regular all-gathers run as one NCCL collective; every other
// operation as grouped send/receive of its transfer list. Each group is enqueued through an
// NcclOperation (nccl_operation.hpp), whose failures never leave a rank waiting for another.

#include <nccl.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/cuda_devices.hpp"
#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "transports/backend.hpp"
#include "transports/nccl_communicator.hpp"
#include "transports/nccl_operation.hpp"
#include "transports/resources.hpp"

namespace cush::detail {

ncclDataType_t nccl_type(ElementType t) {
  switch (t) {
    case ElementType::int8: return ncclInt8;
    case ElementType::uint8: return ncclUint8;
    case ElementType::int32: return ncclInt32;
    case ElementType::uint32: return ncclUint32;
    case ElementType::int64: return ncclInt64;
    case ElementType::uint64: return ncclUint64;
    case ElementType::float32: return ncclFloat32;
    case ElementType::float64: return ncclFloat64;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
  }
  return ncclSum;
}

namespace {

// The position in `ids` (a plan's devices) of device `device`.
std::size_t position_of(std::span<const int> ids, int device) {
  const auto it = std::find(ids.begin(), ids.end(), device);
  if (it == ids.end()) throw Error("cush: device " + std::to_string(device) + " is not in the plan");
  return static_cast<std::size_t>(it - ids.begin());
}

// Each rank's buffer of a plan's side `side` (its data by position).
std::vector<void*> by_rank(const Communicator& comm, const Endpoint& side) {
  std::vector<void*> out;
  for (int d : comm.devices()) out.push_back(side.data[position_of(side.ids, d)]);
  return out;
}

}  // namespace

namespace {

// A send/receive pair or a copy within one device, its ranks and bytes resolved before any group
// opens (nothing but the queued NCCL calls may fail inside one).
struct Move {
  const std::byte* from = nullptr;
  std::byte* to = nullptr;
  std::size_t bytes = 0;
  std::size_t src_rank = 0;
  std::size_t dst_rank = 0;
};

// Grouped send/receive for each copy of `list` (copies within one device as device copies, after
// their wave's group); transfers that wait for others go in later groups. `comm` contains every
// device of `streams`.
void execute_nccl(const TransferList& list, std::size_t element_size, const Endpoint& src, const Endpoint& dst,
                  Communicator& comm, const OpStreams& streams) {
  // Wave of each transfer: one more than the wave of the transfer it waits for.
  std::vector<std::size_t> wave(list.size(), 0);
  std::size_t waves = list.empty() ? 0 : 1;
  std::vector<std::vector<Move>> moves;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Transfer& t = list[i];
    if (t.combine) throw Error("cush: the nccl transport runs reductions as NCCL collectives, not as lists");
    if (t.after >= 0) wave[i] = wave.at(static_cast<std::size_t>(t.after)) + 1;
    waves = std::max(waves, wave[i] + 1);
    moves.resize(waves);
    if (t.count == 0) continue;
    const auto s = static_cast<std::size_t>(t.src.pos);
    const auto d = static_cast<std::size_t>(t.dst.pos);
    moves[wave[i]].push_back(Move{static_cast<const std::byte*>(src.data[s]) + t.src.offset * element_size,
                                  static_cast<std::byte*>(dst.data[d]) + t.dst.offset * element_size,
                                  t.count * element_size, comm.rank_of(src.ids[s]), comm.rank_of(dst.ids[d])});
  }
  NcclOperation run(comm, streams);
  for (const std::vector<Move>& group : moves) {
    run.start_group();
    for (const Move& m : group) {
      if (m.src_rank == m.dst_rank) continue;
      const int to = static_cast<int>(m.dst_rank), from = static_cast<int>(m.src_rank);
      CUSH_NCCL_QUEUE(run, m.src_rank, ncclSend(m.from, m.bytes, ncclUint8, to, run.comm(m.src_rank), run.stream(m.src_rank)));
      CUSH_NCCL_QUEUE(run, m.dst_rank, ncclRecv(m.to, m.bytes, ncclUint8, from, run.comm(m.dst_rank), run.stream(m.dst_rank)));
    }
    run.launch();
    for (const Move& m : group) {
      if (m.src_rank != m.dst_rank) continue;
      DeviceGuard guard(comm.devices()[m.dst_rank]);
      CUSH_CUDA_CHECK(cudaMemcpyAsync(m.to, m.from, m.bytes, cudaMemcpyDeviceToDevice, run.stream(m.dst_rank)));
    }
  }
  run.finish();
}

void nccl_broadcast(Communicator& comm, const OpStreams& streams, const Endpoint& plan, std::size_t bytes,
                    std::size_t root) {
  const std::vector<void*> data = by_rank(comm, plan);
  const int root_rank = static_cast<int>(comm.rank_of(plan.ids[root]));
  NcclOperation run(comm, streams);
  run.start_group();
  for (std::size_t r = 0; r < run.size(); ++r)
    CUSH_NCCL_QUEUE(run, r, ncclBroadcast(data[r], data[r], bytes, ncclUint8, root_rank, run.comm(r), run.stream(r)));
  run.launch();
  run.finish();
}

void nccl_reduce(Communicator& comm, const OpStreams& streams, const Endpoint& plan, std::size_t count,
                 ElementType type, ReduceOp op, std::size_t root) {
  const std::vector<void*> data = by_rank(comm, plan);
  const std::size_t root_rank = comm.rank_of(plan.ids[root]);
  NcclOperation run(comm, streams);
  run.start_group();
  for (std::size_t r = 0; r < run.size(); ++r) {
    // In place on the root; the others' buffers are only read.
    CUSH_NCCL_QUEUE(run, r, ncclReduce(data[r], r == root_rank ? data[r] : nullptr, count, nccl_type(type), nccl_op(op),
                                       static_cast<int>(root_rank), run.comm(r), run.stream(r)));
  }
  run.launch();
  run.finish();
}

void nccl_all_reduce(Communicator& comm, const OpStreams& streams, const Endpoint& plan, std::size_t count,
                     ElementType type, ReduceOp op) {
  const std::vector<void*> data = by_rank(comm, plan);
  NcclOperation run(comm, streams);
  run.start_group();
  for (std::size_t r = 0; r < run.size(); ++r)
    CUSH_NCCL_QUEUE(run, r, ncclAllReduce(data[r], data[r], count, nccl_type(type), nccl_op(op), run.comm(r), run.stream(r)));
  run.launch();
  run.finish();
}

void nccl_all_gather(Communicator& comm, const OpStreams& streams, const Endpoint& src, const Endpoint& dst,
                     std::size_t bytes) {
  const std::vector<void*> send = by_rank(comm, src);
  const std::vector<void*> recv = by_rank(comm, dst);
  NcclOperation run(comm, streams);
  run.start_group();
  for (std::size_t r = 0; r < run.size(); ++r)
    CUSH_NCCL_QUEUE(run, r, ncclAllGather(send[r], recv[r], bytes, ncclUint8, run.comm(r), run.stream(r)));
  run.launch();
  run.finish();
}

// A regular all-gather (equal segments, same devices in the same order as the communicator's
// ranks) is one NCCL call, which puts rank r's segment r-th.
bool all_gather_fits(const Operation& op, const Communicator& comm) {
  const Layout& src = *op.src.layout;
  const Layout& dst = *op.dst.layout;
  if (src.is_replicated() || !dst.is_replicated()) return false;
  if (!std::equal(op.src.ids.begin(), op.src.ids.end(), op.dst.ids.begin(), op.dst.ids.end())) return false;
  if (!std::equal(op.src.ids.begin(), op.src.ids.end(), comm.devices().begin(), comm.devices().end())) return false;
  if (op.part.offset != 0 || op.part.count != src.size()) return false;
  const std::size_t c = src.segment(0).count;
  return std::all_of(src.segments().begin(), src.segments().end(), [&](const Range& r) { return r.count == c; });
}

// "devices 0 and 2 share GPU 0" for the first two logical devices of the operation on one
// physical GPU (virtual GPUs), or empty.
std::string shared_gpu(const Operation& op) {
  const std::vector<int> ids = op.devices();
  for (std::size_t a = 0; a < ids.size(); ++a)
    for (std::size_t b = a + 1; b < ids.size(); ++b)
      if (same_gpu(ids[a], ids[b]))
        return "devices " + std::to_string(ids[a]) + " and " + std::to_string(ids[b]) + " share GPU " +
               std::to_string(physical_id(ids[a]));
  return {};
}

// Drops the communicators that a failure aborted from a plan's list.
void forget_aborted(std::vector<std::shared_ptr<Communicator>>& held) {
  std::erase_if(held, [](const std::shared_ptr<Communicator>& c) { return c->aborted(); });
}

// The communicator of the operation's devices, held by both plans (so that it outlives their
// work even if the process's cache lets it go). One either plan holds already is taken without the
// process-wide cache (and its lock), also after release_communicators().
std::shared_ptr<Communicator> communicator(const Operation& op, const OpStreams& streams) {
  std::vector<int> ids = streams.devices();
  std::sort(ids.begin(), ids.end());
  std::shared_ptr<Communicator> comm;
  for (TransportResources* r : {op.src.resources, op.dst.resources}) {
    forget_aborted(r->communicators);
    for (const std::shared_ptr<Communicator>& c : r->communicators)
      if (!comm && c->devices() == ids) comm = c;
  }
  if (!comm) comm = Communicator::of(ids);
  hold(op.src.resources->communicators, comm);
  hold(op.dst.resources->communicators, comm);
  return comm;
}

class Nccl final : public TransportBackend {
 public:
  std::string refusal(const Operation& op) const override {
    if (std::string shared = shared_gpu(op); !shared.empty())
      return shared + ", and NCCL cannot put one GPU twice in a communicator; use peer or host_staging";
    if (op.capturing()) return "cush does not capture nccl operations into graphs; use peer or host_staging";
    return {};
  }
  Transport fallback() const noexcept override { return Transport::peer; }
  void enqueue(const Operation& op, OpStreams& streams) const override {
    const std::shared_ptr<Communicator> comm = communicator(op, streams);
    const std::size_t es = op.src.element_size;
    const std::size_t n = op.part.count;
    switch (op.kind) {
      case Collective::all_gather:
        if (!all_gather_fits(op, *comm)) break;
        nccl_all_gather(*comm, streams, op.src, op.dst, op.src.layout->segment(0).count * es);
        return;
      case Collective::broadcast:
        if (streams.size() < 2) break;
        nccl_broadcast(*comm, streams, op.dst, n * es, op.root);
        return;
      case Collective::reduce: nccl_reduce(*comm, streams, op.dst, n, op.type, op.op, op.root); return;
      case Collective::all_reduce: nccl_all_reduce(*comm, streams, op.dst, n, op.type, op.op); return;
      default: break;
    }
    execute_nccl(op.list(), es, op.src, op.dst, *comm, streams);
  }
};

}  // namespace

const TransportBackend& nccl_backend() {
  static const Nccl instance;
  return instance;
}

}  // namespace cush::detail
