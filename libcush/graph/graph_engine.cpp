#include "graph/graph_engine.hpp"

#include <algorithm>
#include <string>

#include "core/peer_access.hpp"
#include "core/stream_idle.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "graph/gather.hpp"
#include "graph/graph_exchange.hpp"
#include "grid/exchange_step.hpp"

namespace cush::detail {

namespace {

// The route of each message under `transport`: a forced route, or (automatic) peer where the two
// devices reach each other (peer access, or one GPU), else staged.
GraphRouteOf routes(const DeviceSet& devices, GraphTransport transport) {
  return [&devices, transport](std::size_t from, std::size_t to) {
    switch (transport) {
      case GraphTransport::staged:
      case GraphTransport::nccl: return GraphRoute::staged;  // gathers into send buffers, then sent
      case GraphTransport::host_staging: return GraphRoute::host;
      case GraphTransport::peer:
        if (!can_reach(devices[from], devices[to]))
          throw InvalidArgument("cush::GraphField", "transport",
                                "peer was asked for, but devices " + std::to_string(devices[from]) + " and " +
                                    std::to_string(devices[to]) + " have no peer access to each other");
        return GraphRoute::peer;
      case GraphTransport::automatic: break;
    }
    return can_reach(devices[from], devices[to]) ? GraphRoute::peer : GraphRoute::staged;
  };
}

// Each block's stride in bytes.
std::vector<std::size_t> in_bytes(std::span<const std::size_t> strides, std::size_t element_size) {
  std::vector<std::size_t> out(strides.begin(), strides.end());
  for (std::size_t& s : out) s *= element_size;
  return out;
}

}  // namespace

GraphEngine::GraphEngine(const DeviceSet& devices, const GraphDecomposition& dec, std::size_t element_size,
                         std::size_t components, std::span<const std::size_t> component_strides,
                         GraphTransport transport)
    : devices_(devices), element_size_(element_size), component_bytes_(in_bytes(component_strides, element_size)) {
  if (transport == GraphTransport::nccl) nccl_ = std::make_unique<GraphNccl>(devices_);  // may refuse: first
  GraphExchange ex = graph_exchange(dec, components, routes(devices_, transport));
  program_ = std::move(ex.program);
  // No slabs: a graph message is one run, and its unpack (the host route's) reads host memory.
  schedule_ = exchange_schedule(program_, dec.size(), ScheduleOptions{element_size, 0, 1});
  for (std::size_t k = 0; k < devices_.size(); ++k) {
    exchange_streams_.emplace_back(devices_[k]);
    preload_gather(devices_[k]);  // else the first exchange may wait for the device to go idle
  }
  // The index lists, copied on the sender's exchange stream and waited for (pageable source).
  const std::span<const GraphMessage> messages = dec.messages();
  for (std::size_t m = 0; m < messages.size(); ++m) {
    const std::vector<std::int32_t>& list = ex.index_lists[m];
    lists_.emplace_back();
    if (list.empty()) continue;
    const std::size_t k = messages[m].from;
    const std::size_t bytes = list.size() * sizeof(std::int32_t);
    lists_[m] = DeviceBuffer(devices_[k], bytes);
    const DeviceGuard guard(devices_[k]);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(lists_[m].data(), list.data(), bytes, cudaMemcpyHostToDevice, exchange_streams_[k].get()));
    exchange_streams_[k].synchronize();
  }
  for (std::size_t m = 0; m < program_.ends.size(); ++m) {
    const auto [from, to] = program_.ends[m];
    send_.emplace_back();
    recv_.emplace_back();
    if (program_.send_cells[m] > 0) send_[m] = DeviceBuffer(devices_[from], program_.send_cells[m] * element_size);
    if (program_.recv_cells[m] > 0) recv_[m] = PinnedBuffer<std::byte>(program_.recv_cells[m] * element_size);
  }
  if (transport != GraphTransport::host_staging)
    for (const ExchangePhase& phase : program_.phases)
      for (const auto& [from, to] : phase.links) {
        enable_peer_access_once(devices_[from], devices_[to]);
        enable_peer_access_once(devices_[to], devices_[from]);
      }
  for (const ScheduleEvent& e : schedule_.events) events_.emplace_back(devices_[e.block]);
  if (!nccl_) return;
  for (std::size_t k = 0; k < devices_.size(); ++k) {
    ready_.emplace_back(devices_[k]);
    end_.emplace_back(devices_[k]);
  }
}

void GraphEngine::run_nccl(std::span<void* const> data, std::span<const cudaStream_t> streams) const {
  if (program_.phases.empty()) return;
  nccl_->run(
      program_.phases.front(), streams, element_size_,
      [&](const ExchangeStep& s, cudaStream_t on) { run_step(s, data, on); },
      [&](const StepSide& side) { return side_address(buffer(side.buffer, data), side, element_size_); });
}

void* GraphEngine::buffer(const BufferRef& b, std::span<void* const> data) const {
  switch (b.kind) {
    case BufferRef::Kind::send: return send_.at(b.index).data();
    case BufferRef::Kind::recv: return const_cast<std::byte*>(recv_.at(b.index).data());
    case BufferRef::Kind::block: break;
  }
  return static_cast<std::byte*>(data[b.index]) + b.component * component_bytes_.at(b.index);
}

void GraphEngine::run_step(const ExchangeStep& s, std::span<void* const> data, cudaStream_t stream) const {
  const DeviceGuard guard(devices_[s.stream]);
  void* src = buffer(s.src.buffer, data);
  void* dst = buffer(s.dst.buffer, data);
  if (s.index_list == ExchangeStep::no_list) {
    run_exchange_step(s, src, dst, element_size_, stream);  // a copy of one run
    return;
  }
  launch_gather(src, static_cast<const std::int32_t*>(lists_.at(s.index_list).data()), s.size[0],
                side_address(dst, s.dst, element_size_), element_size_, stream);
}

void GraphEngine::enqueue(std::span<const Instruction> list, std::span<void* const> data,
                          std::span<const cudaStream_t> blocks) const {
  for (const Instruction& in : list) {
    const cudaStream_t on =
        in.stream.kind == ScheduleStream::Kind::block ? blocks[in.stream.block] : exchange_streams_.at(in.stream.block).get();
    switch (in.op) {
      case Instruction::Op::step: run_step(in.step, data, on); break;
      case Instruction::Op::record: events_[in.event].record(on); break;
      case Instruction::Op::wait: events_[in.event].wait_in(on); break;
    }
  }
}

// After a failed enqueue: let whatever was enqueued finish, so no copy outlives the call's
// consequences unseen.
void GraphEngine::drain(std::span<const cudaStream_t> blocks) const noexcept {
  for (cudaStream_t s : blocks) drain_stream(s);
  for (const Stream& s : exchange_streams_) drain_stream(s.get());
}

bool GraphEngine::done() const {
  return std::all_of(exchange_streams_.begin(), exchange_streams_.end(),
                     [](const Stream& s) { return stream_idle(s.get(), "exchange stream", s.device()); });
}

void GraphEngine::exchange_start(std::span<void* const> data, std::span<const cudaStream_t> blocks) {
  if (nccl_) GraphNccl::refuse_capture(blocks);
  try {
    if (nccl_) {
      std::vector<cudaStream_t> own;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        ready_[k].record(blocks[k]);
        ready_[k].wait_in(exchange_streams_[k].get());
        own.push_back(exchange_streams_[k].get());
      }
      run_nccl(data, own);
      return;
    }
    enqueue(schedule_.start, data, blocks);
  } catch (...) {
    drain(blocks);
    throw;
  }
}

void GraphEngine::exchange_finish(std::span<const cudaStream_t> blocks) {
  try {
    if (nccl_) {
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        end_[k].record(exchange_streams_[k].get());
        end_[k].wait_in(blocks[k]);
      }
      return;
    }
    enqueue(schedule_.finish, {}, blocks);
  } catch (...) {
    drain(blocks);
    throw;
  }
}

void GraphEngine::exchange(std::span<void* const> data, std::span<const cudaStream_t> blocks) {
  if (nccl_) GraphNccl::refuse_capture(blocks);
  try {
    if (nccl_) {
      run_nccl(data, blocks);
      return;
    }
    enqueue(schedule_.whole, data, blocks);
  } catch (...) {
    drain(blocks);
    throw;
  }
}

}  // namespace cush::detail
