#pragma once
// NCCL communicators of the nccl transport (docs/device_ops.md, "NCCL communicators").
//
// One communicator per *set* of devices, made at the set's first nccl operation and kept for the
// process (release_communicators() in cush/transport.hpp gives them back): ranks follow the
// devices' logical ids in ascending order, whatever order a plan lists them in, so {0, 1} and
// {1, 0} share one. Every plan that used a communicator holds it too, so one released or aborted
// is destroyed only after those plans' work is done.
//
// Operations on one communicator enqueue one at a time (lock()), from any thread, and run in
// that order on every rank (begin()/end()): NCCL needs both.
//
// A failure that may have left some ranks inside a collective that others never joined (an
// ncclGroupEnd that failed) aborts the communicator: ncclCommAbort on every rank makes their
// kernels return, the process's cache forgets it, and the next operation on the set makes a
// fresh one.

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "cush/reduce.hpp"
#include "cush/stream.hpp"

namespace cush::detail {

[[noreturn]] void throw_nccl(ncclResult_t code, const char* call, const char* file, int line);

/// NCCL's names for cush's element types and reductions.
[[nodiscard]] ncclDataType_t nccl_type(ElementType t);
[[nodiscard]] ncclRedOp_t nccl_op(ReduceOp op);

class Communicator {
 public:
  /// The communicator of the set of logical devices `devices` (any order, no repeats), made if
  /// the process keeps none for the set.
  static std::shared_ptr<Communicator> of(std::span<const int> devices);
  /// Forgets every communicator the process keeps; returns how many it kept.
  static std::size_t release_all() noexcept;

  /// Makes the communicator of `devices` (ascending logical ids) with ncclCommInitAll.
  explicit Communicator(std::vector<int> devices);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] const std::vector<int>& devices() const noexcept { return devices_; }
  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] ncclComm* comm(std::size_t rank) const { return comms_.at(rank); }
  /// The rank of logical device `device`.
  [[nodiscard]] std::size_t rank_of(int device) const;

  /// Held while one operation enqueues its calls (NCCL communicators are not thread-safe).
  [[nodiscard]] std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }
  /// Operations on one communicator must run in the same order on every rank, even when they
  /// come from different plans' streams: each waits for the previous one on its rank (unless
  /// it runs on the same stream, which orders them already).
  void begin(std::size_t rank, cudaStream_t stream);
  void end(std::size_t rank, cudaStream_t stream);

  /// ncclCommAbort on every rank (kernels waiting for a rank that never joined return), and the
  /// process's cache forgets this communicator. Call with lock() held.
  void abort() noexcept;
  [[nodiscard]] bool aborted() const noexcept { return aborted_; }

 private:
  std::vector<int> devices_;
  std::vector<ncclComm*> comms_;
  std::vector<Event> last_;
  std::vector<cudaStream_t> last_stream_;  // where last_ was recorded
  std::mutex mutex_;
  bool aborted_ = false;
};

/// How many communicators this process has made (for tests and benchmarks).
[[nodiscard]] std::size_t communicators_made() noexcept;

/// For tests only (tests/transports/test_nccl_gpu.cpp): the failures that would otherwise need a
/// broken GPU.
namespace nccl_testing {
/// The next NCCL group of an operation leaves out the calls of rank `rank` and then fails as an
/// ncclGroupEnd that launched the other ranks' parts only: those wait on their devices for a
/// rank that never comes. Use it on a communicator that has run the same operation before (its
/// connections made), or ncclGroupEnd waits on the host for the missing rank to connect.
void leave_out_rank_once(std::size_t rank);
/// Whether such a failure aborts the communicator (the default). Off only to show what the
/// abort prevents: the other ranks then wait forever.
void set_abort_on_failure(bool on);
}  // namespace nccl_testing

}  // namespace cush::detail
