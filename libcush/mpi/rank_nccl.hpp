#pragma once
// NCCL over the GPUs of every rank of a process group: the communicator of the operations
// between GPUs of plans over ranks (cush/rank_plan.hpp). One NCCL rank per device of the group,
// in the group's order (ProcessGroup::devices(): rank 0's devices first), so NCCL rank i is
// position i of every RankPlan layout over the group. Made collectively, at the group's first
// such operation, and kept by the group (group_nccl()); rank 0 makes the NCCL id and sends it to
// the others over the group's communicator (the way NCCL's documentation starts a job of
// several processes).
//
// NCCL needs a GPU of its own for each of its ranks: where two devices of the group are one GPU
// (ranks sharing a GPU, virtual GPUs), every rank throws InvalidArgument naming them, before any
// NCCL call. A rank whose checks fail tells the others through the same gather, so no rank is
// left waiting in ncclCommInitRank.

#include <nccl.h>

#include <cstddef>
#include <vector>

#include "cush/process_group.hpp"

namespace cush::detail {

class RankNccl {
 public:
  /// Collective over `group` (every rank, devices or not).
  explicit RankNccl(const ProcessGroup& group);
  ~RankNccl();
  RankNccl(const RankNccl&) = delete;
  RankNccl& operator=(const RankNccl&) = delete;

  /// NCCL ranks in all (the group's devices).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The NCCL rank of this process's first device (its k-th is first_rank() + k).
  [[nodiscard]] std::size_t first_rank() const noexcept { return first_; }
  /// The communicator of this process's k-th device (ProcessGroup::devices_of(rank())[k]).
  [[nodiscard]] ncclComm* comm(std::size_t k) const { return comms_.at(k); }
  /// This process's devices (logical ids), as the group lists them.
  [[nodiscard]] const std::vector<int>& devices() const noexcept { return devices_; }

 private:
  std::vector<int> devices_;
  std::vector<ncclComm*> comms_;
  std::size_t size_ = 0;
  std::size_t first_ = 0;
};

/// The group's communicator, made at the first call (collective then: every rank of the group
/// calls it at the same point of its program, as it calls the operation that needs it).
[[nodiscard]] RankNccl& group_nccl(const ProcessGroup& group);

}  // namespace cush::detail
