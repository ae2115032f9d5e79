#include "mpi/rank_nccl.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "mpi/mpi_call.hpp"
#include "transports/nccl_communicator.hpp"

namespace cush::detail {

namespace {

constexpr const char* where = "cush: NCCL over a process group";

// This rank's devices as "<host>/<PCI bus id>" lines, or its problem (a line starting with '!').
std::string describe_gpus(const ProcessGroup& group, const std::vector<int>& devices) {
  try {
    std::string out;
    if (devices.empty()) return out;
    const DeviceSet set(devices);
    const std::string& host = group.hosts().at(static_cast<std::size_t>(group.host_of(group.rank())));
    for (const DeviceInfo& d : set.topology().devices()) out += host + "/" + d.pci_bus_id + "\n";
    return out;
  } catch (const std::exception& e) {
    return std::string("!") + e.what();
  }
}

}  // namespace

RankNccl::RankNccl(const ProcessGroup& group) : devices_(group.devices_of(group.rank())) {
  // Every rank's GPUs, checked together: a problem on one rank, or two devices that are one GPU,
  // is an InvalidArgument on every rank before anyone calls NCCL.
  const std::vector<std::string> all = allgather_strings(group.comm(), group.size(), describe_gpus(group, devices_), where);
  std::string problems;
  std::map<std::string, std::pair<int, std::size_t>> seen;  // GPU -> (rank, its k-th device)
  for (int r = 0; r < group.size(); ++r) {
    const std::string& text = all[static_cast<std::size_t>(r)];
    if (!text.empty() && text.front() == '!') {
      problems += (problems.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " + text.substr(1);
      continue;
    }
    std::size_t k = 0;
    for (std::size_t at = 0; at < text.size(); ++k) {
      const std::size_t end = text.find('\n', at);
      const std::string gpu = text.substr(at, end - at);
      at = end + 1;
      const auto [it, added] = seen.emplace(gpu, std::make_pair(r, k));
      if (!added)
        problems += (problems.empty() ? "" : "; ") + std::string("rank ") + std::to_string(it->second.first) +
                    "'s device " + std::to_string(it->second.second) + " and rank " + std::to_string(r) + "'s device " +
                    std::to_string(k) + " are one GPU (" + gpu + "): NCCL needs a GPU of its own for each device";
    }
  }
  if (!problems.empty()) throw InvalidArgument(where, "group", problems);
  for (const RankDevice& d : group.devices()) {
    if (d.rank < group.rank()) ++first_;
    ++size_;
  }
  if (size_ == 0) throw InvalidArgument(where, "group", "no rank of the group brings a GPU");

  // Rank 0's NCCL id to every rank, with whether rank 0 could make one.
  struct {
    int ok;
    ncclUniqueId id;
  } start{};
  if (group.rank() == 0) start.ok = ncclGetUniqueId(&start.id) == ncclSuccess ? 1 : 0;
  MPI_Request request = MPI_REQUEST_NULL;
  CUSH_MPI_CHECK(MPI_Ibcast(&start, static_cast<int>(sizeof start), MPI_BYTE, 0, group.comm(), &request));
  wait_for_ranks(std::span<MPI_Request>(&request, 1), group.comm(), where);
  if (start.ok == 0) throw NcclError(static_cast<int>(ncclSystemError), std::string(where) + ": ncclGetUniqueId failed on rank 0");

  comms_.assign(devices_.size(), nullptr);
  if (devices_.empty()) return;
  // One NCCL rank per device of this process, in one group call (ncclCommInitRank for several
  // devices of one process must be grouped, or the first blocks waiting for the others).
  ncclResult_t status = ncclGroupStart();
  if (status != ncclSuccess) throw_nccl(status, "ncclGroupStart", __FILE__, __LINE__);
  for (std::size_t k = 0; k < devices_.size(); ++k) {
    const DeviceGuard guard(devices_[k]);  // NCCL takes the current device: the map's physical one
    status = ncclCommInitRank(&comms_[k], static_cast<int>(size_), start.id, static_cast<int>(first_ + k));
    if (status != ncclSuccess) break;
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (status == ncclSuccess) status = ended;
  if (status != ncclSuccess) {
    for (ncclComm*& c : comms_)
      if (c != nullptr) (void)ncclCommAbort(std::exchange(c, nullptr));
    throw_nccl(status, "ncclCommInitRank", __FILE__, __LINE__);
  }
}

RankNccl::~RankNccl() {
  for (ncclComm* c : comms_) {
    if (c == nullptr) continue;
    const ncclResult_t status = ncclCommDestroy(c);
    if (status != ncclSuccess) std::fprintf(stderr, "cush: ncclCommDestroy failed: %s\n", ncclGetErrorString(status));
  }
}

RankNccl& group_nccl(const ProcessGroup& group) {
  if (!group.nccl_) group.nccl_ = std::make_shared<RankNccl>(group);
  return *group.nccl_;
}

}  // namespace cush::detail
