#include "transports/backend.hpp"

#include <algorithm>
#include <string>

#include "cush/error.hpp"
#include "ops/combine.hpp"
#include "transports/peer_kernel.hpp"

namespace cush::detail {

const TransportBackend& peer_backend();          // peer.cpp
const TransportBackend& nccl_backend();          // nccl.cpp
const TransportBackend& host_staging_backend();  // host_staging.cpp
const TransportBackend& peer_kernel_backend();   // peer_kernel.cpp

const TransferList& Operation::list() const {
  if (!list_) list_ = make_list_();
  return *list_;
}

bool Operation::capturing() const {
  if (!capturing_) {
    const auto any = [](const Endpoint& e) {
      return std::any_of(e.streams.begin(), e.streams.end(), [](cudaStream_t s) { return detail::capturing(s); });
    };
    capturing_ = any(src) || (!within_one_plan() && any(dst));
  }
  return *capturing_;
}

std::vector<int> Operation::devices() const {
  std::vector<int> ids(dst.ids.begin(), dst.ids.end());
  for (int id : src.ids)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  return ids;
}

const TransportBackend& backend(Transport t) {
  switch (t) {
    case Transport::peer: return peer_backend();
    case Transport::nccl: return nccl_backend();
    case Transport::host_staging: return host_staging_backend();
    case Transport::peer_kernel: return peer_kernel_backend();
    case Transport::automatic: break;
  }
  throw Error("cush: 'automatic' is a choice of transport, not a transport");
}

// The transport of one operation: the forced one if it can run it, else the table's choice for
// the operation and its message size, and where that one refuses, its fallbacks (host_staging
// refuses nothing).
const TransportBackend& choose_backend(const Operation& op, std::size_t bytes, const CommOptions& options, const char* where) {
  const Transport forced = options.transport;
  if (forced != Transport::automatic) {
    const TransportBackend& b = backend(forced);
    if (std::string why = b.refusal(op); !why.empty())
      throw InvalidArgument(where, "options.transport", std::string(to_string(forced)) + " was asked for, but " + why);
    return b;
  }
  // Copies within devices only: no link to choose for.
  Transport t = op.links.empty() ? Transport::peer : TransportTable::current().pick(op.kind, bytes);
  while (!backend(t).refusal(op).empty()) t = backend(t).fallback();
  return backend(t);
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUSH_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

void prepare_transports(int device) {
  preload_peer_kernel(device);
  preload_combine(device);  // the reductions of peer and host_staging
}

}  // namespace cush::detail
