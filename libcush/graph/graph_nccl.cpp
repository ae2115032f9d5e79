#include "graph/graph_nccl.hpp"

#include <nccl.h>

#include <string>
#include <vector>

#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "transports/nccl_communicator.hpp"

namespace cush::detail {

namespace {

std::shared_ptr<Communicator> communicator(const DeviceSet& devices) {
  for (std::size_t a = 0; a < devices.size(); ++a)
    for (std::size_t b = a + 1; b < devices.size(); ++b)
      if (same_gpu(devices[a], devices[b]))
        throw InvalidArgument("cush::GraphField", "transport",
                              "nccl was asked for, but devices " + std::to_string(devices[a]) + " and " +
                                  std::to_string(devices[b]) + " share one GPU (NCCL needs a GPU per rank)");
  return Communicator::of(devices.ids());
}

}  // namespace

GraphNccl::GraphNccl(const DeviceSet& devices) : devices_(&devices), comm_(communicator(devices)) {}

GraphNccl::~GraphNccl() = default;

void GraphNccl::refuse_capture(std::span<const cudaStream_t> streams) {
  for (std::size_t k = 0; k < streams.size(); ++k) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CUSH_CUDA_CHECK(cudaStreamIsCapturing(streams[k], &capture));
    if (capture != cudaStreamCaptureStatusNone)
      throw InvalidArgument("cush::GraphField::exchange", "transport",
                            "cush does not capture nccl exchanges into graphs; use peer, staged or host_staging");
  }
}

void GraphNccl::run(const ExchangePhase& phase, std::span<const cudaStream_t> streams, std::size_t element_size,
                    const std::function<void(const ExchangeStep&, cudaStream_t)>& gather,
                    const std::function<void*(const StepSide&)>& address) {
  for (const ExchangeStep& s : phase.sends)
    if (s.index_list != ExchangeStep::no_list) gather(s, streams[s.stream]);
  Communicator& comm = *comm_;
  const auto lock = comm.lock();
  // Block k's NCCL rank, and the communicator's order after its previous operation.
  std::vector<std::size_t> rank(devices_->size());
  for (std::size_t k = 0; k < rank.size(); ++k) {
    rank[k] = comm.rank_of((*devices_)[k]);
    comm.begin(rank[k], streams[k]);
  }
  ncclResult_t status = ncclGroupStart();
  if (status != ncclSuccess) throw_nccl(status, "ncclGroupStart", __FILE__, __LINE__);
  const char* failed = nullptr;
  for (const ExchangeStep& s : phase.sends) {
    if (s.index_list != ExchangeStep::no_list || status != ncclSuccess) continue;
    const std::size_t from = s.stream;
    const std::size_t to = s.dst.buffer.index;  // a copy's destination: the receiver's ghosts
    const std::size_t bytes = s.size[0] * element_size;
    {
      const DeviceGuard guard((*devices_)[from]);
      status = ncclSend(address(s.src), bytes, ncclInt8, static_cast<int>(rank[to]), comm.comm(rank[from]), streams[from]);
      if (status != ncclSuccess) failed = "ncclSend";
    }
    if (status != ncclSuccess) break;
    const DeviceGuard guard((*devices_)[to]);
    status = ncclRecv(address(s.dst), bytes, ncclInt8, static_cast<int>(rank[from]), comm.comm(rank[to]), streams[to]);
    if (status != ncclSuccess) failed = "ncclRecv";
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (status != ncclSuccess) throw_nccl(status, failed, __FILE__, __LINE__);
  if (ended != ncclSuccess) {
    comm.abort();  // some ranks may have launched and wait for the others
    throw_nccl(ended, "ncclGroupEnd", __FILE__, __LINE__);
  }
  for (std::size_t k = 0; k < rank.size(); ++k) comm.end(rank[k], streams[k]);
}

}  // namespace cush::detail
