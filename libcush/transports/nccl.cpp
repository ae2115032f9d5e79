// The nccl transport: NCCL collectives and grouped send/receive on one communicator per ordered
// list of devices, created on first use and shared by every plan that used it; destroyed when
// the last such plan is. Broadcasts, reductions and regular all-gathers run as one NCCL
// collective; every other operation as grouped send/receive of its transfer list.

#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/cuda_devices.hpp"
#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/stream.hpp"
#include "transports/backend.hpp"
#include "transports/resources.hpp"

namespace cush::detail {

class Communicator {
 public:
  /// The communicator of `devices` (rank i = devices[i]), created if no plan holds one.
  static std::shared_ptr<Communicator> of(std::span<const int> devices);
  explicit Communicator(std::span<const int> devices);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] const std::vector<int>& devices() const noexcept { return devices_; }
  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] ncclComm* comm(std::size_t rank) const { return comms_.at(rank); }
  /// The rank of CUDA device `device`.
  [[nodiscard]] std::size_t rank_of(int device) const;

  /// Operations on one communicator must run in the same order on every rank, even when they
  /// come from different plans' streams: each waits for the previous one on its rank (unless
  /// it runs on the same stream, which orders them already).
  void begin(std::size_t rank, cudaStream_t stream) const;
  void end(std::size_t rank, cudaStream_t stream) const;

 private:
  std::vector<int> devices_;
  std::vector<ncclComm*> comms_;
  std::vector<Event> last_;
  mutable std::vector<cudaStream_t> last_stream_;  // where last_ was recorded
};

namespace {

[[noreturn]] void throw_nccl(ncclResult_t code, const char* call, const char* file, int line) {
  throw NcclError(static_cast<int>(code), std::string("cush: ") + call + " failed: " + ncclGetErrorString(code) +
                                              " at " + file + ":" + std::to_string(line));
}

// A call outside a group: a fault point (cush/error.hpp) like every checked call.
#define CUSH_NCCL_CHECK(call)                                                                 \
  do {                                                                                        \
    const ncclResult_t cush_nccl_ = CUSH_FAULT_POINT(#call) ? ncclInternalError : (call);     \
    if (cush_nccl_ != ncclSuccess) throw_nccl(cush_nccl_, #call, __FILE__, __LINE__);          \
  } while (0)

// A call inside a group only queues work. NCCL notes its failure (a bad argument), and
// ncclGroupEnd then drops the whole group and returns the error; a failure injected by skipping
// the call would leave NCCL unaware and launch half a group. So no fault point here: the group's
// start and end stand for its calls.
#define CUSH_NCCL_QUEUE(call)                                                                 \
  do {                                                                                        \
    const ncclResult_t cush_nccl_ = (call);                                                   \
    if (cush_nccl_ != ncclSuccess) throw_nccl(cush_nccl_, #call, __FILE__, __LINE__);          \
  } while (0)

// Ends a group on every path: an exception inside a group must not leave the thread in it.
class Group {
 public:
  Group() { CUSH_NCCL_CHECK(ncclGroupStart()); }
  ~Group() {
    if (open_) (void)ncclGroupEnd();
  }
  // An injected failure of ncclGroupEnd comes after the call: skipping it would leave the
  // thread inside the group.
  void end() {
    open_ = false;
    ncclResult_t status = ncclGroupEnd();
    if (status == ncclSuccess && CUSH_FAULT_POINT("ncclGroupEnd()")) status = ncclInternalError;
    if (status != ncclSuccess) throw_nccl(status, "ncclGroupEnd()", __FILE__, __LINE__);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  bool open_ = true;
};

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

std::mutex registry_mutex;
std::map<std::vector<int>, std::weak_ptr<Communicator>>& registry() {
  static std::map<std::vector<int>, std::weak_ptr<Communicator>> r;
  return r;
}

// The working stream of each rank, bracketed by the communicator's order.
class Ranks {
 public:
  Ranks(Communicator& comm, OpStreams& streams) : comm_(comm) {
    for (std::size_t r = 0; r < comm.size(); ++r) {
      stream_.push_back(streams.work(streams.index_of(comm.devices()[r])));
      comm.begin(r, stream_.back());
    }
  }
  void end() {
    for (std::size_t r = 0; r < comm_.size(); ++r) comm_.end(r, stream_[r]);
  }
  cudaStream_t operator[](std::size_t r) const { return stream_.at(r); }

 private:
  Communicator& comm_;
  std::vector<cudaStream_t> stream_;
};

}  // namespace

std::shared_ptr<Communicator> Communicator::of(std::span<const int> devices) {
  std::lock_guard lock(registry_mutex);
  // Entries of communicators whose plans are all gone are dropped, so the registry stays as
  // small as the set of live device lists.
  std::erase_if(registry(), [](const auto& entry) { return entry.second.expired(); });
  std::vector<int> key(devices.begin(), devices.end());
  auto& slot = registry()[key];
  std::shared_ptr<Communicator> comm = slot.lock();
  if (!comm) {
    comm = std::make_shared<Communicator>(devices);
    slot = comm;
  }
  return comm;
}

Communicator::Communicator(std::span<const int> devices) : devices_(devices.begin(), devices.end()) {
  comms_.assign(devices_.size(), nullptr);
  // NCCL takes CUDA devices: the physical ones (a communicator never holds one GPU twice).
  const std::vector<int> physical = physical_ids(devices_);
  for (int d : devices_) last_.emplace_back(d);
  last_stream_.assign(devices_.size(), nullptr);
  // Last: nothing after it may throw, for a constructor that throws leaves comms_ to nobody
  // (found by fault injection: a failed event creation leaked every communicator).
  CUSH_NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(physical.size()), physical.data()));
}

Communicator::~Communicator() {
  for (ncclComm* c : comms_) {
    if (c == nullptr) continue;
    const ncclResult_t status = ncclCommDestroy(c);
    if (status != ncclSuccess) std::fprintf(stderr, "cush: ncclCommDestroy failed: %s\n", ncclGetErrorString(status));
  }
}

std::size_t Communicator::rank_of(int device) const {
  const auto it = std::find(devices_.begin(), devices_.end(), device);
  if (it == devices_.end()) throw Error("cush: device " + std::to_string(device) + " is not in the communicator");
  return static_cast<std::size_t>(it - devices_.begin());
}

void Communicator::begin(std::size_t rank, cudaStream_t stream) const {
  if (last_stream_.at(rank) == stream) return;
  DeviceGuard guard(devices_.at(rank));
  last_.at(rank).wait_in(stream);
}

void Communicator::end(std::size_t rank, cudaStream_t stream) const {
  DeviceGuard guard(devices_.at(rank));
  last_.at(rank).record(stream);
  last_stream_.at(rank) = stream;
}

namespace {

// Grouped send/receive for each copy of `list` (local ones as device copies); transfers that
// wait for others go in later groups. `comm` contains every device of `streams`.
void execute_nccl(const TransferList& list, std::size_t element_size, const Endpoint& src, const Endpoint& dst,
                  Communicator& comm, OpStreams& streams) {
  // Wave of each transfer: one more than the wave of the transfer it waits for.
  std::vector<std::size_t> wave(list.size(), 0);
  std::size_t waves = list.empty() ? 0 : 1;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].combine) throw Error("cush: the nccl transport runs reductions as NCCL collectives, not as lists");
    if (list[i].after >= 0) wave[i] = wave.at(static_cast<std::size_t>(list[i].after)) + 1;
    waves = std::max(waves, wave[i] + 1);
  }
  Ranks ranks(comm, streams);
  for (std::size_t w = 0; w < waves; ++w) {
    Group group;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Transfer& t = list[i];
      if (wave[i] != w || t.count == 0) continue;
      const auto s = static_cast<std::size_t>(t.src.pos);
      const auto d = static_cast<std::size_t>(t.dst.pos);
      const auto* from = static_cast<const std::byte*>(src.data[s]) + t.src.offset * element_size;
      auto* to = static_cast<std::byte*>(dst.data[d]) + t.dst.offset * element_size;
      const std::size_t bytes = t.count * element_size;
      const std::size_t rs = comm.rank_of(src.ids[s]);
      const std::size_t rd = comm.rank_of(dst.ids[d]);
      if (rs == rd) {
        DeviceGuard guard(comm.devices()[rd]);
        CUSH_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, ranks[rd]));
        continue;
      }
      CUSH_NCCL_QUEUE(ncclSend(from, bytes, ncclUint8, static_cast<int>(rd), comm.comm(rs), ranks[rs]));
      CUSH_NCCL_QUEUE(ncclRecv(to, bytes, ncclUint8, static_cast<int>(rs), comm.comm(rd), ranks[rd]));
    }
    group.end();
  }
  ranks.end();
}

void nccl_broadcast(Communicator& comm, OpStreams& streams, std::span<void* const> data, std::size_t bytes,
                    std::size_t root) {
  Ranks ranks(comm, streams);
  Group group;
  for (std::size_t r = 0; r < comm.size(); ++r)
    CUSH_NCCL_QUEUE(ncclBroadcast(data[r], data[r], bytes, ncclUint8, static_cast<int>(root), comm.comm(r), ranks[r]));
  group.end();
  ranks.end();
}

void nccl_reduce(Communicator& comm, OpStreams& streams, std::span<void* const> data, std::size_t count,
                 ElementType type, ReduceOp op, std::size_t root) {
  Ranks ranks(comm, streams);
  Group group;
  for (std::size_t r = 0; r < comm.size(); ++r) {
    // In place on the root; the others' buffers are only read.
    CUSH_NCCL_QUEUE(ncclReduce(data[r], r == root ? data[r] : nullptr, count, nccl_type(type), nccl_op(op),
                               static_cast<int>(root), comm.comm(r), ranks[r]));
  }
  group.end();
  ranks.end();
}

void nccl_all_reduce(Communicator& comm, OpStreams& streams, std::span<void* const> data, std::size_t count,
                     ElementType type, ReduceOp op) {
  Ranks ranks(comm, streams);
  Group group;
  for (std::size_t r = 0; r < comm.size(); ++r)
    CUSH_NCCL_QUEUE(ncclAllReduce(data[r], data[r], count, nccl_type(type), nccl_op(op), comm.comm(r), ranks[r]));
  group.end();
  ranks.end();
}

void nccl_all_gather(Communicator& comm, OpStreams& streams, std::span<void* const> send,
                     std::span<void* const> recv, std::size_t bytes) {
  Ranks ranks(comm, streams);
  Group group;
  for (std::size_t r = 0; r < comm.size(); ++r)
    CUSH_NCCL_QUEUE(ncclAllGather(send[r], recv[r], bytes, ncclUint8, comm.comm(r), ranks[r]));
  group.end();
  ranks.end();
}

// A regular all-gather (equal segments, same devices in the same order) is one NCCL call.
bool all_gather_fits(const Operation& op) {
  const Layout& src = *op.src.layout;
  const Layout& dst = *op.dst.layout;
  if (src.is_replicated() || !dst.is_replicated()) return false;
  if (!std::equal(op.src.ids.begin(), op.src.ids.end(), op.dst.ids.begin(), op.dst.ids.end())) return false;
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

// The communicator of the operation's devices, held by both plans.
std::shared_ptr<Communicator> communicator(const Operation& op, const OpStreams& streams) {
  const std::vector<int> ids = streams.devices();
  // An operation within one plan over the devices of a communicator it used before takes that
  // one without the process-wide registry (and its lock).
  if (op.within_one_plan())
    for (const std::shared_ptr<Communicator>& c : op.src.resources->communicators)
      if (c->devices() == ids) return c;
  std::shared_ptr<Communicator> comm = Communicator::of(ids);
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
        if (!all_gather_fits(op)) break;
        nccl_all_gather(*comm, streams, op.src.data, op.dst.data, op.src.layout->segment(0).count * es);
        return;
      case Collective::broadcast:
        if (streams.size() < 2) break;
        nccl_broadcast(*comm, streams, op.dst.data, n * es, op.root);
        return;
      case Collective::reduce: nccl_reduce(*comm, streams, op.dst.data, n, op.type, op.op, op.root); return;
      case Collective::all_reduce: nccl_all_reduce(*comm, streams, op.dst.data, n, op.type, op.op); return;
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
