#pragma once
// One operation of the nccl transport on its communicator: holds the communicator's lock while
// it enqueues, orders each rank's working stream after the communicator's previous operation,
// and runs NCCL groups whose failure leaves no rank waiting for another:
//
//   NcclOperation run(comm, streams);
//   run.start_group();
//   for (rank ...) CUSH_NCCL_QUEUE(run, rank, ncclAllReduce(..., run.comm(rank), run.stream(rank)));
//   run.launch();
//   run.finish();
//
// - A queued call that fails (NCCL refuses its arguments, or fault injection fails it; the call
//   is then not made) stops the queueing, and launch() makes NCCL drop the whole group: no
//   device starts a collective that a peer never joins. launch() throws the call's NcclError.
// - An ncclGroupEnd that fails may have launched some ranks' kernels: launch() aborts the
//   communicator (their kernels return) before it throws.
// - A group left open by an exception is dropped the same way by the destructor.
// The communicator's lock makes operations from several threads enqueue one after the other.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "ops/op_streams.hpp"
#include "transports/nccl_communicator.hpp"

namespace cush::detail {

class NcclOperation {
 public:
  /// Locks `comm` and orders each rank's working stream (the participant's in `streams`) after
  /// the communicator's previous operation.
  NcclOperation(Communicator& comm, const OpStreams& streams);
  ~NcclOperation();
  NcclOperation(const NcclOperation&) = delete;
  NcclOperation& operator=(const NcclOperation&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return stream_.size(); }
  [[nodiscard]] cudaStream_t stream(std::size_t rank) const { return stream_.at(rank); }
  [[nodiscard]] ncclComm* comm(std::size_t rank) const { return comm_.comm(rank); }

  /// ncclGroupStart (a checked call).
  void start_group();
  /// True if the call of `rank` is to be made (none after a failure in this group; for tests,
  /// not the calls of a rank left out: nccl_testing).
  [[nodiscard]] bool queueing(std::size_t rank);
  /// The status of a queued call (see CUSH_NCCL_QUEUE).
  void queued(ncclResult_t status, const char* call, const char* file, int line);
  /// ncclGroupEnd: launches the group, or nothing if a call failed (throws its NcclError).
  void launch();
  /// Orders the communicator's next operation after this one on every rank.
  void finish();

 private:
  struct Failure {
    ncclResult_t code = ncclSuccess;
    std::string call;
    const char* file = "";
    int line = 0;
  };
  void drop_group() noexcept;
  [[noreturn]] void fail_launched(const Failure& failure);

  Communicator& comm_;
  std::unique_lock<std::mutex> lock_;
  std::vector<cudaStream_t> stream_;
  bool group_open_ = false;
  bool left_out_ = false;            // a rank's calls were left out (nccl_testing)
  std::optional<Failure> failure_;  // the first queued call that failed in the open group
};

}  // namespace cush::detail

/// Queues one NCCL call of rank `rank` in `run`'s open group. Fault injection fails it here like
/// any checked call (the call is not made); NCCL's own refusal is checked the same way.
#define CUSH_NCCL_QUEUE(run, rank, call)                                                        \
  do {                                                                                          \
    if ((run).queueing(rank)) {                                                                 \
      const ncclResult_t cush_nccl_ = CUSH_FAULT_POINT(#call) ? ncclInternalError : (call);     \
      (run).queued(cush_nccl_, #call, __FILE__, __LINE__);                                      \
    }                                                                                           \
  } while (0)
