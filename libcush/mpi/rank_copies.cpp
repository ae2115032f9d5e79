// Copies and all-to-alls between two plans over the ranks of a process group
// (RankPlan::copy_from, all_to_all_from): the single-process operation's transfer list
// (ops/device_transfers.hpp) over the layouts of every rank's devices, cut into this rank's steps
// (host/rank_transfers.hpp), run on the GPUs. Both lists have a step per piece, each destination
// element written once and the source only read, and no step waits for another, so one pass
// runs them all: the copies within this rank on the destination's streams, then every send and
// receive of this rank in one NCCL group call. NCCL pairs the transfers between two devices in
// the order both post them: every rank walks the list in its order. Position p of either layout
// is the group's p-th device, NCCL rank p of the group's communicator.

#include <stdexcept>
#include <string>
#include <vector>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/rank_plan.hpp"
#include "cush/stream.hpp"
#include "mpi/rank_lists.hpp"
#include "mpi/rank_nccl.hpp"
#include "ops/device_transfers.hpp"
#include "transports/nccl_communicator.hpp"

namespace cush {

namespace {

// Every stream of `waiters` waits for the work enqueued so far on every stream of `on` (this
// rank's devices: streams k of both lists are on device k).
void wait_for(std::span<const cudaStream_t> on, std::span<const cudaStream_t> waiters, std::span<const int> devices) {
  for (std::size_t k = 0; k < on.size(); ++k) {
    const Event done(devices[k]);
    done.record(on[k]);
    for (cudaStream_t w : waiters) done.wait_in(w);
  }
}

}  // namespace

void RankPlanBase::rank_copy(const RankPlanBase& src, std::span<void* const> from,
                             std::span<const cudaStream_t> from_streams, std::span<void* const> to,
                             std::span<const cudaStream_t> streams, std::size_t element_size, bool all_to_all,
                             const char* where) const {
  const ProcessGroup& g = group();
  g.agree(where, "the source's size", src.size());
  g.agree(where, "the destination's size", size());
  if (&src.group() != &g) throw InvalidArgument(where, "src", "is a plan over another process group");
  if (src.size() != size())
    throw InvalidArgument(where, "src", std::to_string(src.size()) + " elements, this plan " + std::to_string(size()));
  if (&src == this) throw InvalidArgument(where, "src", "is this plan");
  if (all_to_all && (layout().is_replicated() || src.layout().is_replicated()))
    throw InvalidArgument(where, "this", "an all-to-all needs two plans that are not replicated");
  if (size() == 0) return;

  // The positions' ids: distinct per device of the group (no two positions on one GPU, which
  // the NCCL communicator needs anyway).
  std::vector<int> ids(layout().devices());
  for (std::size_t p = 0; p < ids.size(); ++p) ids[p] = static_cast<int>(p);
  TransferList list;
  if (all_to_all) {
    const std::vector<std::size_t> counts = all_to_all_counts(src.layout(), layout());
    list = all_to_all_transfers(src.layout(), layout(), counts);
  } else {
    list = copy_transfers(src.layout(), ids, layout(), ids, Range{0, size()});
  }
  const detail::RankMap map{src.position_ranks(), position_ranks(), 0};
  const std::vector<detail::RankStep> steps = detail::rank_steps(g, list, map);  // the ranks check the list together
  bool between_ranks = false;
  for (const Transfer& t : list) {
    if (t.after >= 0 || t.combine) throw std::logic_error(std::string(where) + ": a transfer list with waits or combines");
    between_ranks = between_ranks || map.of_src(t.src) != map.of_dst(t.dst);
  }
  // NCCL only where some piece crosses between ranks (the same on every rank: the list is).
  const detail::RankNccl* nccl = between_ranks ? &detail::group_nccl(g) : nullptr;

  // This rank's positions, in order: the k-th is its k-th device (of both plans).
  std::vector<std::size_t> local_of(layout().devices(), 0);
  std::vector<int> devices;
  for (std::size_t p = 0; p < local_of.size(); ++p) {
    if (position_ranks()[p] != g.rank()) continue;
    local_of[p] = devices.size();
    devices.push_back(g.devices()[p].device);
  }
  if (devices.size() != to.size() || devices.size() != from.size())
    throw Error(std::string(where) + ": this rank has " + std::to_string(devices.size()) + " devices, the plans' segments " +
                std::to_string(from.size()) + " and " + std::to_string(to.size()));
  const auto at = [&](std::span<void* const> data, const Location& l) {
    return static_cast<std::byte*>(data[local_of[static_cast<std::size_t>(l.pos)]]) + l.offset * element_size;
  };

  wait_for(from_streams, streams, devices);  // every copy or receive after the source's work
  for (const detail::RankStep& s : steps) {
    if (s.kind != detail::RankStep::Kind::local) continue;
    const std::size_t k = local_of[static_cast<std::size_t>(s.transfer.dst.pos)];
    const DeviceGuard guard(devices[k]);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(at(to, s.transfer.dst), at(from, s.transfer.src), s.transfer.count * element_size,
                                    cudaMemcpyDefault, streams[k]));
  }
  if (nccl != nullptr) {
    ncclResult_t status = ncclGroupStart();
    if (status != ncclSuccess) detail::throw_nccl(status, "ncclGroupStart", __FILE__, __LINE__);
    for (const detail::RankStep& s : steps) {
      if (s.kind == detail::RankStep::Kind::local || status != ncclSuccess) continue;
      const Transfer& t = s.transfer;
      const bool send = s.kind == detail::RankStep::Kind::send;
      const std::size_t k = local_of[static_cast<std::size_t>(send ? t.src.pos : t.dst.pos)];
      const DeviceGuard guard(devices[k]);
      const std::size_t bytes = t.count * element_size;
      status = send ? ncclSend(at(from, t.src), bytes, ncclInt8, t.dst.pos, nccl->comm(k), from_streams[k])
                    : ncclRecv(at(to, t.dst), bytes, ncclInt8, t.src.pos, nccl->comm(k), streams[k]);
    }
    const ncclResult_t ended = ncclGroupEnd();
    if (status == ncclSuccess) status = ended;
    if (status != ncclSuccess) detail::throw_nccl(status, where, __FILE__, __LINE__);
  }
  wait_for(streams, from_streams, devices);  // the source's later work after the copies that read it
}

}  // namespace cush
