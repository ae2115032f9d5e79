#include "transports/peer_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/env.hpp"
#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "transports/backend.hpp"
#include "transports/resources.hpp"

namespace cush::detail {

namespace {

// Bytes per block of a device's kernel, and the most blocks (fewer than the SMs of a current
// data-centre GPU, so that all are resident at once; every block spins while it waits).
constexpr std::size_t bytes_per_block = std::size_t{4} << 10;
constexpr unsigned peer_kernel_max_blocks = 128;

using Key = std::vector<std::pair<int, cudaStream_t>>;
std::atomic<std::size_t> allocations{0};  // peer_group_allocations()
std::mutex registry_mutex;
std::map<Key, std::weak_ptr<PeerGroup>>& registry() {
  static std::map<Key, std::weak_ptr<PeerGroup>> r;
  return r;
}

}  // namespace

std::size_t peer_group_allocations() noexcept { return allocations.load(); }

std::shared_ptr<PeerGroup> PeerGroup::of(std::span<const int> devices, std::span<const cudaStream_t> streams) {
  std::lock_guard lock(registry_mutex);
  std::erase_if(registry(), [](const auto& entry) { return entry.second.expired(); });
  Key key;
  for (std::size_t k = 0; k < devices.size(); ++k) key.emplace_back(devices[k], streams[k]);
  auto& slot = registry()[key];
  std::shared_ptr<PeerGroup> group = slot.lock();
  if (!group) {
    group = std::make_shared<PeerGroup>(devices, streams);
    slot = group;
  }
  return group;
}

PeerGroup::PeerGroup(std::span<const int> devices, std::span<const cudaStream_t> streams)
    : devices_(devices.begin(), devices.end()), flags_(devices.size(), nullptr) {
  if (devices.size() > peer_kernel_max_devices || streams.size() != devices.size())
    throw Error("cush: a peer_kernel group has at most " + std::to_string(peer_kernel_max_devices) + " devices");
  // Every participant stores into every other's flags (and pieces): peer access between all
  // pairs, enabled once for the group rather than at every operation.
  for (int a : devices_)
    for (int b : devices_)
      if (a != b) enable_peer_access_once(a, b);
  std::vector<cudaEvent_t> zeroed(devices_.size(), nullptr);
  try {
    void* word = nullptr;
    CUSH_CUDA_CHECK(cudaHostAlloc(&word, sizeof(unsigned), cudaHostAllocPortable | cudaHostAllocMapped));
    abort_ = static_cast<unsigned*>(word);
    ++allocations;
    *abort_ = 0;
    // Each device's flags are zeroed on its working stream, and every working stream waits for
    // all the zeroings: a peer's first arrival store must not land before (and be wiped by) the
    // zeroing of the flags it writes. Nothing here blocks the host.
    for (std::size_t k = 0; k < devices_.size(); ++k) {
      DeviceGuard guard(devices_[k]);
      void* p = nullptr;
      static_assert(PeerFlags::words * sizeof(unsigned) <= scratch_offset, "the flags end before the scratch");
      CUSH_CUDA_CHECK_AT(cudaMalloc(&p, scratch_offset + 2 * peer_scratch_slot_bytes),
                         "peer_kernel flags on device " + std::to_string(devices_[k]));
      flags_[k] = static_cast<unsigned*>(p);
      ++allocations;
      CUSH_CUDA_CHECK(cudaMemsetAsync(p, 0, PeerFlags::words * sizeof(unsigned), streams[k]));
      CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&zeroed[k], cudaEventDisableTiming));
      CUSH_CUDA_CHECK(cudaEventRecord(zeroed[k], streams[k]));
    }
    for (std::size_t j = 0; j < devices_.size(); ++j)
      for (std::size_t k = 0; k < devices_.size(); ++k)
        if (j != k) CUSH_CUDA_CHECK(cudaStreamWaitEvent(streams[j], zeroed[k], 0));
    // The waits keep what they need. Inside the try: a constructor that throws runs no
    // destructor, so a failed destroy here once left the flags and the abort word allocated
    // (found by memcheck's leak check over the fault walk on 2 x H200).
    for (cudaEvent_t& e : zeroed) {
      CUSH_CUDA_CHECK(cudaEventDestroy(e));
      e = nullptr;
    }
  } catch (...) {
    for (cudaEvent_t e : zeroed)
      if (e != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
    release();
    throw;
  }
}

// The plans that held the group have waited for their streams, so no kernel uses the flags.
PeerGroup::~PeerGroup() { release(); }

void PeerGroup::release() noexcept {
  if (abort_ != nullptr) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(abort_));
    --allocations;
  }
  abort_ = nullptr;
  for (std::size_t k = 0; k < flags_.size(); ++k) {
    if (flags_[k] == nullptr) continue;
    // No DeviceGuard: cudaFree needs no current device, and a guard may throw (a noexcept
    // function would terminate; found by fault injection).
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(flags_[k]));
    --allocations;
    flags_[k] = nullptr;
  }
}

unsigned PeerGroup::next_epoch() {
  ++epoch_;
  if (epoch_ == 0) ++epoch_;  // 0 is what the flags start at
  return epoch_;
}

void PeerGroup::abort() noexcept {
  if (abort_ != nullptr) reinterpret_cast<volatile unsigned*>(abort_)[0] = 1;
  retired_ = true;
  std::lock_guard lock(registry_mutex);
  std::erase_if(registry(), [this](const auto& entry) {
    const std::shared_ptr<PeerGroup> held = entry.second.lock();
    return held == nullptr || held.get() == this;
  });
}

std::vector<std::size_t> peer_reduction_shares(std::size_t count, std::size_t parts, std::size_t granularity) {
  std::vector<std::size_t> bounds{0};
  for (const Range& share : even_shares(Range{0, count}, parts, granularity)) bounds.push_back(share.end());
  return bounds;
}

std::vector<std::size_t> peer_reduce_spread_shares(std::size_t count, std::size_t parts, std::size_t root,
                                                   std::size_t granularity) {
  if (parts < 2 || root >= parts)
    throw InvalidArgument("cush::detail::peer_reduce_spread_shares", "root", "needs two or more parts and a root among them");
  std::vector<std::size_t> bounds = peer_reduction_shares(count, parts - 1, granularity);
  bounds.insert(bounds.begin() + static_cast<std::ptrdiff_t>(root), bounds[root]);  // the root's empty share
  return bounds;
}

namespace {

// Reductions on the kernel: all-reduce shares start on 256-byte bounds (the combine's 16-byte
// vectors stay aligned in every replica).
constexpr std::size_t reduction_alignment = 256;

// A reduce over three or more devices is spread over the devices other than the root from this
// size (CUSH_PEER_REDUCE_SPREAD_MIN_KIB, default 2 MiB): with the root reading every replica, on
// 4 x H200 a 1 GiB reduce moved 3 GiB into the root's NVLink port at that port's rate (8.6 ms,
// NCCL 3.1 ms); below a few MiB the one-shot reduce's single barrier is worth more than the
// port (docs/device_ops.md has both ways measured).
std::size_t reduce_spread_min_bytes() {
  static const std::size_t bytes = env::size("CUSH_PEER_REDUCE_SPREAD_MIN_KIB");
  return bytes;
}

// An all-reduce above the one-shot slot runs in one pass with stores into every replica from
// this size (CUSH_PEER_ALL_REDUCE_PUSH_MIN_KIB, default 0: always; below it, two shots). On
// 4 x H200 one pass took 0.74-0.79 of the two shots' time from 4 to 64 MiB (0.70 with the kernel
// forced at 256 MiB and 1 GiB), and no size was slower on 2 or 4 GPUs (docs/device_ops.md).
std::size_t all_reduce_push_min_bytes() {
  static const std::size_t bytes = env::size("CUSH_PEER_ALL_REDUCE_PUSH_MIN_KIB");
  return bytes;
}

// True if `op` is a reduction the kernel runs itself (an all-reduce or reduce within one plan).
bool kernel_reduces(const Operation& op) {
  return (op.kind == Collective::all_reduce || op.kind == Collective::reduce) && op.within_one_plan();
}

// Enqueues the reduction `op` on `streams`, one kernel per participant (PeerReduction).
void execute_reduction(const Operation& op, OpStreams& streams, PeerGroup& group) {
  const std::size_t p = streams.size();
  const std::size_t es = op.src.element_size;
  PeerKernelArgs base;
  base.group = static_cast<unsigned>(p);
  base.epoch = group.next_epoch();
  base.abort = group.abort_word();
  for (std::size_t j = 0; j < p; ++j) base.peer_flags[j] = group.flags(j);
  PeerReduction& r = base.reduction;
  r.kind = op.kind == Collective::all_reduce ? PeerReduction::all_reduce : PeerReduction::reduce;
  if (r.kind == PeerReduction::all_reduce && op.part.count * es <= peer_one_shot_max_bytes(p))
    r.kind = PeerReduction::all_reduce_one_shot;
  if (r.kind == PeerReduction::all_reduce && op.part.count * es >= all_reduce_push_min_bytes())
    r.kind = PeerReduction::all_reduce_push;
  if (r.kind == PeerReduction::reduce && p >= 3 && op.part.count * es >= reduce_spread_min_bytes())
    r.kind = PeerReduction::reduce_spread;
  for (std::size_t k = 0; k < p; ++k) r.scratch[k] = group.scratch(k, base.epoch);
  r.type = static_cast<unsigned>(op.type);
  r.op = static_cast<unsigned>(op.op);
  r.count = op.part.count;
  for (std::size_t pos = 0; pos < op.dst.data.size(); ++pos)
    r.data[streams.of_dst(pos)] = static_cast<std::byte*>(op.dst.data[pos]) + op.part.offset * es;
  r.root = static_cast<unsigned>(streams.of_dst(op.root));
  const std::size_t granule = std::max<std::size_t>(reduction_alignment / es, 1);
  const std::vector<std::size_t> bounds = r.kind == PeerReduction::reduce_spread
                                              ? peer_reduce_spread_shares(r.count, p, r.root, granule)
                                              : peer_reduction_shares(r.count, p, granule);
  std::copy(bounds.begin(), bounds.end(), r.share);
  try {
    for (std::size_t k = 0; k < p; ++k) {
      PeerKernelArgs a = base;
      a.me = static_cast<unsigned>(k);
      a.flags = group.flags(k);
      // The bytes this participant reads: every replica's copy of its share (all-reduce), then
      // the others' shares; the root of a reduce every replica, the others nothing.
      std::size_t bytes = 0;
      if (r.kind == PeerReduction::all_reduce) bytes = (bounds[k + 1] - bounds[k]) * es * p + r.count * es;
      if (r.kind == PeerReduction::all_reduce_one_shot) bytes = r.count * es * (p + 1);
      if (r.kind == PeerReduction::reduce && k == r.root) bytes = r.count * es * p;
      if (r.kind == PeerReduction::reduce_spread) bytes = (bounds[k + 1] - bounds[k]) * es * p;
      if (r.kind == PeerReduction::all_reduce_push) bytes = (bounds[k + 1] - bounds[k]) * es * 2 * p;
      const auto blocks = static_cast<unsigned>(std::clamp<std::size_t>(bytes / bytes_per_block, 1, peer_kernel_max_blocks));
      DeviceGuard guard(streams.device(k));
      launch_peer_kernel(a, blocks, streams.work(k));
    }
  } catch (...) {
    group.abort();  // as in execute(): the kernels launched so far return
    throw;
  }
}

struct Piece {
  std::size_t part = 0;  // the participant that pushes it
  PeerPiece piece;
};

std::vector<Piece> pieces_of(const TransferList& list, std::size_t es, const Endpoint& src, const Endpoint& dst,
                             const OpStreams& streams) {
  std::vector<Piece> out;
  for (const Transfer& t : list) {
    if (t.count == 0) continue;
    const auto s = static_cast<std::size_t>(t.src.pos);
    const auto d = static_cast<std::size_t>(t.dst.pos);
    out.push_back(Piece{streams.of_src(s),
                        PeerPiece{static_cast<const std::byte*>(src.data[s]) + t.src.offset * es,
                                  static_cast<std::byte*>(dst.data[d]) + t.dst.offset * es, t.count * es}});
  }
  return out;
}

// True if `list` can run on the kernel: no combines, no ordered pieces (`after`), at most
// peer_kernel_max_pieces pieces leaving any device and at most peer_kernel_max_devices
// participants.
bool fits(const TransferList& list, const OpStreams& streams) {
  if (streams.size() > peer_kernel_max_devices) return false;
  std::vector<std::size_t> per_part(streams.size(), 0);
  for (const Transfer& t : list) {
    if (t.combine || t.after >= 0) return false;
    if (t.count == 0) continue;
    if (++per_part[streams.of_src(static_cast<std::size_t>(t.src.pos))] > peer_kernel_max_pieces) return false;
  }
  return true;
}

// Enqueues `list` (which fits) on `streams`, one kernel per participant.
void execute(const TransferList& list, std::size_t element_size, const Endpoint& src, const Endpoint& dst,
             OpStreams& streams, PeerGroup& group) {
  const std::size_t p = streams.size();
  std::vector<PeerKernelArgs> args(p);
  std::vector<std::size_t> bytes(p, 0);
  const unsigned epoch = group.next_epoch();
  for (std::size_t k = 0; k < p; ++k) {
    args[k].me = static_cast<unsigned>(k);
    args[k].group = static_cast<unsigned>(p);
    args[k].epoch = epoch;
    args[k].abort = group.abort_word();
    args[k].flags = group.flags(k);
    for (std::size_t j = 0; j < p; ++j) args[k].peer_flags[j] = group.flags(j);
  }
  for (const Piece& piece : pieces_of(list, element_size, src, dst, streams)) {
    PeerKernelArgs& a = args[piece.part];
    a.pieces[a.count++] = piece.piece;
    bytes[piece.part] += piece.piece.bytes;
  }
  try {
    for (std::size_t k = 0; k < p; ++k) {
      const auto blocks =
          static_cast<unsigned>(std::clamp<std::size_t>(bytes[k] / bytes_per_block, 1, peer_kernel_max_blocks));
      DeviceGuard guard(streams.device(k));  // kernels launch on the current device
      launch_peer_kernel(args[k], blocks, streams.work(k));
    }
  } catch (...) {
    // The kernels launched so far (and one whose launch reported its failure late) wait for
    // the rest: they return once they read the abort word.
    group.abort();
    throw;
  }
}

class PeerKernel final : public TransportBackend {
 public:
  std::string refusal(const Operation& op) const override {
    // Every participant stores into every other's flags, not only where data moves.
    const std::vector<int> ids = op.devices();
    for (int a : ids)
      for (int b : ids) {
        if (a >= b) continue;
        // Each participant's kernel spins until the others' have arrived; CUDA does not promise
        // that two kernels on one GPU run at the same time (a sanitizer runs them one by one).
        if (same_gpu(a, b))
          return "devices " + std::to_string(a) + " and " + std::to_string(b) +
                 " share a GPU, where the participants' kernels could wait for each other forever; use peer";
        if (!can_reach(a, b))
          return "devices " + std::to_string(a) + " and " + std::to_string(b) + " have no peer access";
      }
    if (op.capturing()) return "cush does not capture peer_kernel operations into graphs; use peer or host_staging";
    return {};
  }
  Transport fallback() const noexcept override { return Transport::peer; }
  // All-reduces and reduces within a plan run as reductions in the kernel; other lists the
  // kernel cannot take run on the peer transport (transport.hpp).
  void enqueue(const Operation& op, OpStreams& streams) const override {
    const bool reduction = kernel_reduces(op) && streams.size() <= peer_kernel_max_devices;
    if (!reduction && !fits(op.list(), streams)) {
      backend(Transport::peer).enqueue(op, streams);
      return;
    }
    // A group retired by a failed operation: its kernels returned before that operation threw.
    for (TransportResources* r : {op.src.resources, op.dst.resources})
      std::erase_if(r->peer_groups, [](const std::shared_ptr<PeerGroup>& g) { return g->retired(); });
    const std::vector<int> ids = streams.devices();
    std::vector<cudaStream_t> work;
    for (std::size_t k = 0; k < streams.size(); ++k) work.push_back(streams.work(k));
    const std::shared_ptr<PeerGroup> group = PeerGroup::of(ids, work);
    hold(op.src.resources->peer_groups, group);
    hold(op.dst.resources->peer_groups, group);
    if (reduction) {
      execute_reduction(op, streams, *group);
    } else {
      execute(op.list(), op.src.element_size, op.src, op.dst, streams, *group);
    }
  }
};

}  // namespace

const TransportBackend& peer_kernel_backend() {
  static const PeerKernel instance;
  return instance;
}

}  // namespace cush::detail
