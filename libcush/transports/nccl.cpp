#include "transports/nccl.hpp"

#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {

[[noreturn]] void throw_nccl(ncclResult_t code, const char* call, const char* file, int line) {
  throw NcclError(static_cast<int>(code), std::string("cush: ") + call + " failed: " + ncclGetErrorString(code) +
                                              " at " + file + ":" + std::to_string(line));
}

#define CUSH_NCCL_CHECK(call)                                                        \
  do {                                                                               \
    const ncclResult_t cush_nccl_ = (call);                                          \
    if (cush_nccl_ != ncclSuccess) throw_nccl(cush_nccl_, #call, __FILE__, __LINE__); \
  } while (0)

// Ends a group on every path: an exception inside a group must not leave the thread in it.
class Group {
 public:
  Group() { CUSH_NCCL_CHECK(ncclGroupStart()); }
  ~Group() {
    if (open_) (void)ncclGroupEnd();
  }
  void end() {
    open_ = false;
    CUSH_NCCL_CHECK(ncclGroupEnd());
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
  CUSH_NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data()));
  for (int d : devices_) last_.emplace_back(d);
  last_stream_.assign(devices_.size(), nullptr);
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
      const auto s = static_cast<std::size_t>(t.src.device);
      const auto d = static_cast<std::size_t>(t.dst.device);
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
      CUSH_NCCL_CHECK(ncclSend(from, bytes, ncclUint8, static_cast<int>(rd), comm.comm(rs), ranks[rs]));
      CUSH_NCCL_CHECK(ncclRecv(to, bytes, ncclUint8, static_cast<int>(rs), comm.comm(rd), ranks[rd]));
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
    CUSH_NCCL_CHECK(ncclBroadcast(data[r], data[r], bytes, ncclUint8, static_cast<int>(root), comm.comm(r), ranks[r]));
  group.end();
  ranks.end();
}

void nccl_reduce(Communicator& comm, OpStreams& streams, std::span<void* const> data, std::size_t count,
                 ElementType type, ReduceOp op, std::size_t root) {
  Ranks ranks(comm, streams);
  Group group;
  for (std::size_t r = 0; r < comm.size(); ++r) {
    // In place on the root; the others' buffers are only read.
    CUSH_NCCL_CHECK(ncclReduce(data[r], r == root ? data[r] : nullptr, count, nccl_type(type), nccl_op(op),
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
    CUSH_NCCL_CHECK(ncclAllReduce(data[r], data[r], count, nccl_type(type), nccl_op(op), comm.comm(r), ranks[r]));
  group.end();
  ranks.end();
}

void nccl_all_gather(Communicator& comm, OpStreams& streams, std::span<void* const> send,
                     std::span<void* const> recv, std::size_t bytes) {
  Ranks ranks(comm, streams);
  Group group;
  for (std::size_t r = 0; r < comm.size(); ++r)
    CUSH_NCCL_CHECK(ncclAllGather(send[r], recv[r], bytes, ncclUint8, comm.comm(r), ranks[r]));
  group.end();
  ranks.end();
}

}  // namespace cush::detail
