#include "transports/nccl_operation.hpp"

#include <atomic>
#include <string>

namespace cush::detail {

namespace {

std::atomic<long long> left_out_rank{-1};
std::atomic<bool> abort_on_failure{true};

}  // namespace

namespace nccl_testing {
void leave_out_rank_once(std::size_t rank) { left_out_rank.store(static_cast<long long>(rank)); }
void set_abort_on_failure(bool on) { abort_on_failure.store(on); }
}  // namespace nccl_testing

NcclOperation::NcclOperation(Communicator& comm, const OpStreams& streams) : comm_(comm), lock_(comm.lock()) {
  for (std::size_t r = 0; r < comm.size(); ++r) {
    stream_.push_back(streams.work(streams.index_of(comm.devices()[r])));
    comm.begin(r, stream_.back());
  }
}

NcclOperation::~NcclOperation() {
  if (group_open_) drop_group();
}

void NcclOperation::start_group() {
  ncclResult_t status = CUSH_FAULT_POINT("ncclGroupStart()") ? ncclInternalError : ncclGroupStart();
  if (status != ncclSuccess) throw_nccl(status, "ncclGroupStart()", __FILE__, __LINE__);
  group_open_ = true;
  left_out_ = false;
  failure_.reset();
}

bool NcclOperation::queueing(std::size_t rank) {
  if (failure_) return false;
  const long long out = left_out_rank.load();
  if (out >= 0 && static_cast<std::size_t>(out) == rank) {
    left_out_ = true;
    return false;
  }
  return true;
}

void NcclOperation::queued(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess && !failure_) failure_ = Failure{status, call, file, line};
}

// A call NCCL refused has already marked the group failed; one that fault injection failed has
// not: a call NCCL must refuse (no communicator) marks it, and ncclGroupEnd then drops every
// queued call of the group instead of launching it.
void NcclOperation::drop_group() noexcept {
  group_open_ = false;
  (void)ncclSend(nullptr, 0, ncclUint8, 0, nullptr, nullptr);
  (void)ncclGroupEnd();
}

void NcclOperation::launch() {
  if (failure_) {
    drop_group();
    throw_nccl(failure_->code, failure_->call.c_str(), failure_->file, failure_->line);
  }
  group_open_ = false;
  ncclResult_t status = ncclGroupEnd();
  // An injected failure of ncclGroupEnd comes after the call: the group has launched.
  if (status == ncclSuccess && CUSH_FAULT_POINT("ncclGroupEnd()")) status = ncclInternalError;
  if (status != ncclSuccess) fail_launched(Failure{status, "ncclGroupEnd()", __FILE__, __LINE__});
  if (left_out_) {
    left_out_rank.store(-1);
    fail_launched(Failure{ncclInternalError, "ncclGroupEnd() (a rank's calls left out for a test)", __FILE__, __LINE__});
  }
}

void NcclOperation::fail_launched(const Failure& failure) {
  if (abort_on_failure.load()) comm_.abort();
  throw_nccl(failure.code, failure.call.c_str(), failure.file, failure.line);
}

void NcclOperation::finish() {
  for (std::size_t r = 0; r < comm_.size(); ++r) comm_.end(r, stream_[r]);
}

}  // namespace cush::detail
