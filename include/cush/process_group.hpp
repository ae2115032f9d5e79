#pragma once
/// @file process_group.hpp
/// @brief The processes of an MPI program and their GPUs: cush's view of a communicator that the
/// application owns. cush never calls MPI_Init or MPI_Finalize; it works with MPI_COMM_WORLD or
/// any sub-communicator.
///
/// Needs MPI: cush builds its MPI part (the cush::mpi target, this header) where CMake finds an
/// MPI (find_package(MPI)); link cush::mpi, which brings MPI's headers and libraries.
#if !__has_include(<mpi.h>)
#error "cush/process_group.hpp needs MPI (<mpi.h>): build cush where CMake finds an MPI and link cush::mpi"
#endif

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cush/error.hpp"

namespace cush {

class ProcessGroup;

namespace detail {
class RankNccl;
RankNccl& group_nccl(const ProcessGroup& group);
}  // namespace detail


/// @brief An MPI call failed (the group's communicator returns errors instead of aborting).
class MpiError : public Error {
 public:
  MpiError(int code, const std::string& call, const std::string& message)
      : Error(message), code_(code), call_(call) {}
  /// The MPI error code.
  [[nodiscard]] int code() const noexcept { return code_; }
  /// The call, as written.
  [[nodiscard]] const std::string& call() const noexcept { return call_; }

 private:
  int code_;
  std::string call_;
};

/// One GPU of a process group: the rank whose process drives it, its device id in that process
/// (a logical device, as that process's DeviceSet numbers it) and the host it is on (an index
/// into ProcessGroup::hosts()).
struct RankDevice {
  int rank = 0;
  int device = 0;
  int host = 0;
  friend bool operator==(const RankDevice&, const RankDevice&) = default;
};

/// @brief The ranks of a communicator, their hosts and their GPUs, the same on every rank.
///
/// Made collectively: every rank of `comm` constructs it, with the GPUs its process drives. The
/// group keeps a duplicate of `comm` (MPI_Comm_dup) for its own messages, so that they never
/// match the application's, with MPI_ERRORS_RETURN: a failed MPI call throws MpiError. Bad input
/// on any rank (a device this process does not have, a device listed twice) is an
/// InvalidArgument on every rank, never a rank left waiting: the ranks check their input
/// together before anything else. A rank that leaves the program's order of collective calls
/// (an exception it does not pass on, a hang) does not leave the others waiting for ever: every
/// wait of cush::mpi for other ranks ends the job with MPI_Abort after CUSH_MPI_WAIT_LIMIT_S
/// seconds (default 600; 0: no limit), saying which rank waited where (docs/guide.md,
/// "Failure across ranks").
///
///     cush::ProcessGroup group(MPI_COMM_WORLD);           // every GPU each process can use
///     cush::ProcessGroup one(MPI_COMM_WORLD, {gpu});        // one GPU per process (local_rank())
class ProcessGroup {
 public:
  /// This process's rank among the ranks of `comm` on its host, and how many they are
  /// (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED): collective over `comm`. What a program with one
  /// process per GPU picks its GPU by, before it makes the group:
  ///
  ///     const int local = cush::ProcessGroup::local_rank(MPI_COMM_WORLD);
  ///     cush::ProcessGroup one(MPI_COMM_WORLD, {local % cush::DeviceSet::available()});
  [[nodiscard]] static int local_rank(MPI_Comm comm);
  [[nodiscard]] static int local_size(MPI_Comm comm);

  /// Every GPU this process can use (DeviceSet::available(); none without a GPU).
  explicit ProcessGroup(MPI_Comm comm);
  /// The GPUs `devices` of this process (logical ids; empty: none).
  ProcessGroup(MPI_Comm comm, std::vector<int> devices);
  /// Frees the duplicate communicator (MPI_Comm_free: every rank destroys its group).
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;
  ProcessGroup(ProcessGroup&& other) noexcept;
  ProcessGroup& operator=(ProcessGroup&& other) noexcept;

  /// This process's rank and the number of ranks.
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// The group's own communicator (a duplicate of the one it was made from).
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }

  /// Every GPU of the group, rank by rank, each rank's in the order it gave them.
  [[nodiscard]] const std::vector<RankDevice>& devices() const noexcept { return devices_; }
  /// The GPUs of one rank (device ids in that process).
  [[nodiscard]] std::vector<int> devices_of(int rank) const;
  /// The hosts (MPI_Get_processor_name), in the order of their lowest rank; the host of a rank.
  [[nodiscard]] const std::vector<std::string>& hosts() const noexcept { return hosts_; }
  [[nodiscard]] int host_of(int rank) const;
  [[nodiscard]] bool same_host(int rank_a, int rank_b) const { return host_of(rank_a) == host_of(rank_b); }
  /// E.g. "4 ranks on 1 host (node0: ranks 0-3), 4 GPUs: rank 0: 0; rank 1: 1; ...".
  [[nodiscard]] std::string describe() const;

  /// Collective: every rank passes its `value` of something all ranks must agree on (a size, a
  /// count); returns if they are equal, else throws InvalidArgument on every rank, naming `what`
  /// and each rank's value (`where`: the function asking).
  void agree(const char* where, const char* what, std::uint64_t value) const;

 private:
  void release() noexcept;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  std::vector<RankDevice> devices_;
  std::vector<std::string> hosts_;
  std::vector<int> host_of_;  // by rank
  // NCCL over the group's GPUs, made at its first use (detail::group_nccl).
  mutable std::shared_ptr<detail::RankNccl> nccl_;
  friend detail::RankNccl& detail::group_nccl(const ProcessGroup& group);
};

}  // namespace cush
