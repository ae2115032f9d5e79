#include "mpi/rank_exchange.hpp"

#include <nccl.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/peer_access.hpp"
#include "core/stream_idle.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "grid/box_copy.hpp"
#include "grid/exchange_step.hpp"
#include "grid/step_batches.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/rank_nccl.hpp"
#include "transports/nccl_communicator.hpp"

namespace cush::detail {

namespace {

// The halo messages of fields over ranks on the group's own communicator (the MPI transport).
constexpr int halo_tag = 0x6861;

}  // namespace

RankExchange::RankExchange(const ProcessGroup& group, RankProgram program, const Decomposition& grid,
                           const LocalBlocks& local, std::size_t element_size, RankNccl* nccl, std::span<const char> ipc)
    : group_(&group),
      local_(local),
      local_of_(grid.size(), std::numeric_limits<std::size_t>::max()),
      element_size_(element_size),
      program_(std::move(program)),
      nccl_(nccl) {
  for (std::size_t i = 0; i < local_.pos.size(); ++i) local_of_.at(local_.pos[i]) = i;
  for (std::size_t& stride : local_.strides) stride *= element_size_;
  // The leading phases along axes exchanged in place copy each block's cells into its own ghosts.
  while (in_place_ < program_.phases.size() && grid.exchanged_in_place(program_.phases[in_place_].axis)) ++in_place_;
  // The transfers over CUDA IPC leave the program; NCCL or MPI moves the rest.
  if (!ipc.empty()) ipc_ = std::make_unique<RankIpc>(program_, ipc, local_of_, local_.devices, element_size_);
  for (std::size_t m = 0; m < program_.ends.size(); ++m) {
    const auto [from, to] = program_.ends[m];
    send_.emplace_back();
    recv_.emplace_back();
    if (program_.send_cells[m] > 0) send_[m] = DeviceBuffer(local_.devices[index_of(from)], program_.send_cells[m] * element_size_);
    if (program_.recv_cells[m] > 0) recv_[m] = DeviceBuffer(local_.devices[index_of(to)], program_.recv_cells[m] * element_size_);
  }
  for (const RankPhase& phase : program_.phases) {
    for (const auto& [from, to] : phase.links) {
      enable_peer_access_once(local_.devices[index_of(from)], local_.devices[index_of(to)]);
      enable_peer_access_once(local_.devices[index_of(to)], local_.devices[index_of(from)]);
    }
    host_out_.emplace_back();
    host_in_.emplace_back();
    if (nccl_ != nullptr) continue;
    for (const RankTransfer& t : phase.outgoing) host_out_.back().emplace_back(t.cells * element_size_);
    for (const RankTransfer& t : phase.incoming) host_in_.back().emplace_back(t.cells * element_size_);
  }
  for (int device : local_.devices) {
    marks_.emplace_back(device);
    streams_.emplace_back(device);
    preload_box_copy(device);  // else the first exchange may wait for the device to go idle
  }
}

void* RankExchange::buffer(const BufferRef& b, std::span<void* const> data) const {
  switch (b.kind) {
    case BufferRef::Kind::send: return send_.at(b.index).data();
    case BufferRef::Kind::recv: return recv_.at(b.index).data();
    case BufferRef::Kind::block: break;
  }
  const std::size_t i = index_of(b.index);
  return static_cast<std::byte*>(data[i]) + b.component * local_.strides[i];
}

void RankExchange::connect(std::span<void* const> data, std::span<void* const> bases) {
  if (!ipc_) return;
  ipc_->connect(*group_, [&](const RankTransfer& t) {
    void* buf = buffer(t.side.buffer, data);
    void* base = t.side.buffer.kind == BufferRef::Kind::block ? bases[index_of(t.side.buffer.index)] : buf;
    return IpcPlace{side_address(buf, t.side, element_size_), base};
  });
}

void RankExchange::barrier(std::span<const cudaStream_t> on) const {
  if (on.size() < 2) return;
  for (std::size_t i = 0; i < on.size(); ++i) marks_[i].record(on[i]);
  for (std::size_t j = 0; j < on.size(); ++j)
    for (std::size_t i = 0; i < on.size(); ++i)
      if (i != j) marks_[i].wait_in(on[j]);
}

void RankExchange::transfer_nccl(const RankPhase& phase, std::span<void* const> data,
                                 std::span<const cudaStream_t> on) const {
  // Every transfer of the phase in one group: NCCL pairs a sender's sends to one peer with the
  // peer's receives in the order both post them (the global program's).
  ncclResult_t status = ncclGroupStart();
  if (status != ncclSuccess) throw_nccl(status, "ncclGroupStart", __FILE__, __LINE__);
  const char* failed = nullptr;
  const auto post = [&](const RankTransfer& t, bool send) {
    if (status != ncclSuccess) return;
    const std::size_t i = index_of(t.block);
    const DeviceGuard guard(local_.devices[i]);
    void* at = side_address(buffer(t.side.buffer, data), t.side, element_size_);
    const int peer = static_cast<int>(t.peer_block);
    status = send ? ncclSend(at, t.cells * element_size_, ncclInt8, peer, nccl_->comm(i), on[i])
                  : ncclRecv(at, t.cells * element_size_, ncclInt8, peer, nccl_->comm(i), on[i]);
    if (status != ncclSuccess) failed = send ? "ncclSend" : "ncclRecv";
  };
  for (const RankTransfer& t : phase.outgoing) post(t, true);
  for (const RankTransfer& t : phase.incoming) post(t, false);
  const ncclResult_t ended = ncclGroupEnd();
  if (status != ncclSuccess) throw_nccl(status, failed, __FILE__, __LINE__);
  if (ended != ncclSuccess) throw_nccl(ended, "ncclGroupEnd", __FILE__, __LINE__);
}

void RankExchange::transfer_mpi(const RankPhase& phase, std::span<void* const> data, std::span<const cudaStream_t> on) {
  const std::size_t p = static_cast<std::size_t>(&phase - program_.phases.data());
  // The sends' cells to the host once the phase's packs are done.
  for (std::size_t k = 0; k < phase.outgoing.size(); ++k) {
    const RankTransfer& t = phase.outgoing[k];
    const std::size_t i = index_of(t.block);
    const DeviceGuard guard(local_.devices[i]);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(host_out_[p][k].data(), side_address(buffer(t.side.buffer, data), t.side, element_size_),
                                    t.cells * element_size_, cudaMemcpyDeviceToHost, on[i]));
  }
  // The streams also finish the previous exchange's copies out of the receive buffers.
  for (std::size_t i = 0; i < on.size(); ++i) StreamRef(local_.devices[i], on[i]).synchronize();
  std::vector<MPI_Request> requests;
  for (std::size_t k = 0; k < phase.incoming.size(); ++k)
    receive_bytes(host_in_[p][k].data(), host_in_[p][k].size(), phase.incoming[k].peer, halo_tag, group_->comm(), requests);
  for (std::size_t k = 0; k < phase.outgoing.size(); ++k)
    send_bytes(host_out_[p][k].data(), host_out_[p][k].size(), phase.outgoing[k].peer, halo_tag, group_->comm(), requests);
  wait_for_ranks(requests, group_->comm(), "cush::RankField: a halo exchange between ranks");
  for (std::size_t k = 0; k < phase.incoming.size(); ++k) {
    const RankTransfer& t = phase.incoming[k];
    const std::size_t i = index_of(t.block);
    const DeviceGuard guard(local_.devices[i]);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(side_address(buffer(t.side.buffer, data), t.side, element_size_), host_in_[p][k].data(),
                                    t.cells * element_size_, cudaMemcpyHostToDevice, on[i]));
  }
}

void RankExchange::transfer(const RankPhase& phase, std::span<void* const> data, std::span<const cudaStream_t> on) {
  if (ipc_)
    ipc_->transfer(static_cast<std::size_t>(&phase - program_.phases.data()),
                   [&](const RankTransfer& t) { return side_address(buffer(t.side.buffer, data), t.side, element_size_); }, on);
  if (phase.outgoing.empty() && phase.incoming.empty()) return;
  if (nccl_ != nullptr) {
    transfer_nccl(phase, data, on);
  } else {
    transfer_mpi(phase, data, on);
  }
}

void RankExchange::run_steps(std::span<const ExchangeStep> steps, std::span<void* const> data,
                             std::span<const cudaStream_t> on) const {
  for (std::size_t first = 0; first < steps.size();) {
    const ExchangeStep& s = steps[first];
    const std::size_t i = index_of(s.stream);
    const DeviceGuard guard(local_.devices[i]);
    // Box copies on one stream that touch none of each other's cells run as one launch (as in a
    // Field's exchange, grid/step_batches.hpp): the ghosts of a periodic axis are two such copies.
    std::size_t end = first + 1;
    while (!s.contiguous && end < steps.size() && end - first < box_copy_max_batch && !steps[end].contiguous &&
           steps[end].stream == s.stream &&
           std::all_of(steps.begin() + static_cast<std::ptrdiff_t>(first), steps.begin() + static_cast<std::ptrdiff_t>(end),
                       [&](const ExchangeStep& earlier) { return steps_independent(earlier, steps[end]); }))
      ++end;
    if (end - first == 1) {
      run_exchange_step(s, buffer(s.src.buffer, data), buffer(s.dst.buffer, data), element_size_, on[i]);
    } else {
      BoxCopy boxes[box_copy_max_batch];
      for (std::size_t k = first; k < end; ++k) {
        const ExchangeStep& b = steps[k];
        boxes[k - first] = BoxCopy{BoxSide{buffer(b.src.buffer, data), b.src.alloc, b.src.lo},
                                   BoxSide{buffer(b.dst.buffer, data), b.dst.alloc, b.dst.lo}, b.size};
      }
      launch_box_copies(std::span<const BoxCopy>(boxes, end - first), element_size_, on[i]);
    }
    first = end;
  }
}

void RankExchange::run_phases(std::size_t first, std::size_t last, std::span<void* const> data,
                              std::span<const cudaStream_t> on) {
  for (std::size_t p = first; p < last; ++p) {
    const RankPhase& phase = program_.phases[p];
    if (p >= in_place_) barrier(on);  // in place: every step within one block
    run_steps(phase.sends, data, on);
    transfer(phase, data, on);
    if (!phase.links.empty()) barrier(on);
    run_steps(phase.receives, data, on);
  }
}

void RankExchange::drain(std::span<const cudaStream_t> blocks) const noexcept {
  for (cudaStream_t s : blocks) drain_stream(s);
  for (const Stream& s : streams_) drain_stream(s.get());
}

bool RankExchange::done() const {
  return std::all_of(streams_.begin(), streams_.end(),
                     [](const Stream& s) { return stream_idle(s.get(), "exchange stream", s.device()); });
}

void RankExchange::exchange_start(std::span<void* const> data, std::span<const cudaStream_t> blocks) {
  if (in_flight_)
    throw InvalidArgument("cush::RankField::exchange_start", "this", "an exchange is in flight: call exchange_finish() first");
  try {
    // The copies in place on the blocks' own streams (kernels enqueued next may read them), the
    // rest on the exchange's streams once the blocks' streams are there.
    run_phases(0, in_place_, data, blocks);
    std::vector<cudaStream_t> own;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      marks_[i].record(blocks[i]);
      marks_[i].wait_in(streams_[i].get());
      own.push_back(streams_[i].get());
    }
    run_phases(in_place_, program_.phases.size(), data, own);
  } catch (...) {
    drain(blocks);
    throw;
  }
  in_flight_ = true;
}

void RankExchange::exchange_finish(std::span<const cudaStream_t> blocks) {
  if (!in_flight_)
    throw InvalidArgument("cush::RankField::exchange_finish", "this", "no exchange is in flight: call exchange_start() first");
  in_flight_ = false;
  try {
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      marks_[i].record(streams_[i].get());
      marks_[i].wait_in(blocks[i]);
    }
  } catch (...) {
    drain(blocks);
    throw;
  }
}

void RankExchange::exchange(std::span<void* const> data, std::span<const cudaStream_t> blocks) {
  if (in_flight_)
    throw InvalidArgument("cush::RankField::exchange", "this", "an exchange is in flight: call exchange_finish() first");
  try {
    run_phases(0, program_.phases.size(), data, blocks);
  } catch (...) {
    drain(blocks);
    throw;
  }
}

}  // namespace cush::detail
