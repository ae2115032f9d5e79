#include "grid/field_engine.hpp"

#include <cstddef>
#include <algorithm>
#include <string>

#include "core/cuda_devices.hpp"
#include "core/env.hpp"
#include "core/stream_idle.hpp"
#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "grid/box_copy.hpp"
#include "grid/exchange_step.hpp"
#include "grid/step_batches.hpp"

namespace cush::detail {

namespace {

// Whether block `from`'s kernels may store into block `to`'s memory (peer access enabled).
PeerStores peer_stores(const DeviceSet& devices, HaloTransport transport) {
  if (transport == HaloTransport::staged) return {};
  return [&devices](std::size_t from, std::size_t to) { return enable_peer_access_once(devices[from], devices[to]); };
}

// Pipelining of a face packed straight into a peer's receive buffer: the pack is split into
// slabs, and the receiver unpacks slab c on a second stream while slab c + 1 crosses the link.
// By default only faces of at least 256 MiB are split, in 8 slabs: below that the packs and
// unpacks of both directions contend for memory and pipelining measured slower (docs/results/records/grid_design.md).
// CUSH_HALO_PIPELINE_MIB and CUSH_HALO_CHUNKS (1: off) change them (core/env.cpp).
std::size_t pipeline_bytes() { return env::size("CUSH_HALO_PIPELINE_MIB"); }

std::size_t max_chunks() { return env::size("CUSH_HALO_CHUNKS"); }

}  // namespace

FieldEngine::FieldEngine(const DeviceSet& devices, const Decomposition& grid, std::size_t element_size,
                         HaloTransport transport, const HaloComponents& which,
                         std::vector<std::size_t> component_strides)
    : devices_(devices),
      element_size_(element_size),
      component_bytes_(std::move(component_strides)),
      program_(exchange_program(grid, peer_stores(devices_, transport), which)),
      schedule_(exchange_schedule(program_, grid, ScheduleOptions{element_size, pipeline_bytes(), max_chunks()})) {
  for (std::size_t& stride : component_bytes_) stride *= element_size;
  for (std::size_t m = 0; m < program_.ends.size(); ++m) {
    const auto [from, to] = program_.ends[m];
    send_.emplace_back();
    recv_.emplace_back();
    if (program_.send_cells[m] > 0) send_[m] = DeviceBuffer(devices_[from], program_.send_cells[m] * element_size);
    if (program_.recv_cells[m] > 0) recv_[m] = DeviceBuffer(devices_[to], program_.recv_cells[m] * element_size);
  }
  for (const ExchangePhase& phase : program_.phases)
    for (const auto& [from, to] : phase.links) {
      enable_peer_access_once(devices_[from], devices_[to]);
      enable_peer_access_once(devices_[to], devices_[from]);
    }
  for (const ScheduleEvent& e : schedule_.events) events_.emplace_back(devices_[e.block]);
  for (std::size_t k = 0; k < devices_.size(); ++k) {
    exchange_streams_.emplace_back(devices_[k]);
    preload_box_copy(devices_[k]);  // else the first exchange may wait for the device to go idle
  }
  if (!schedule_.unpack_streams) return;
  for (std::size_t k = 0; k < devices_.size(); ++k) {
    unpack_streams_.emplace_back(devices_[k]);
    const int sms = device_attribute(cudaDevAttrMultiProcessorCount, devices_[k]);
    // Half the device's threads (8 blocks of 256 fill an SM): room for the unpacks beside it.
    pack_blocks_.push_back(static_cast<unsigned>(std::max(sms, 1) * 4));
  }
}

cudaStream_t FieldEngine::stream(const ScheduleStream& s, std::span<const cudaStream_t> blocks) const {
  switch (s.kind) {
    case ScheduleStream::Kind::exchange: return exchange_streams_.at(s.block).get();
    case ScheduleStream::Kind::unpack: return unpack_streams_.at(s.block).get();
    case ScheduleStream::Kind::block: break;
  }
  return blocks[s.block];
}

void* FieldEngine::buffer(const BufferRef& b, std::span<void* const> data) const {
  switch (b.kind) {
    case BufferRef::Kind::send: return send_.at(b.index).data();
    case BufferRef::Kind::recv: return recv_.at(b.index).data();
    case BufferRef::Kind::block: break;
  }
  if (b.component == 0) return data[b.index];
  return static_cast<std::byte*>(data[b.index]) + b.component * component_bytes_.at(b.index);
}

void FieldEngine::run_step(const ExchangeStep& s, std::span<void* const> data, cudaStream_t stream,
                           unsigned max_blocks) const {
  const DeviceGuard guard(devices_[s.stream]);
  run_exchange_step(s, buffer(s.src.buffer, data), buffer(s.dst.buffer, data), element_size_, stream, max_blocks);
}

void FieldEngine::run_batch(std::span<const Instruction> batch, std::span<void* const> data, cudaStream_t stream,
                            unsigned max_blocks) const {
  const DeviceGuard guard(devices_[batch.front().step.stream]);
  BoxCopy boxes[box_copy_max_batch];
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const ExchangeStep& s = batch[k].step;
    boxes[k] = BoxCopy{BoxSide{buffer(s.src.buffer, data), s.src.alloc, s.src.lo},
                       BoxSide{buffer(s.dst.buffer, data), s.dst.alloc, s.dst.lo}, s.size};
  }
  launch_box_copies(std::span<const BoxCopy>(boxes, batch.size()), element_size_, stream, max_blocks);
}

void FieldEngine::enqueue(std::span<const Instruction> list, std::span<void* const> data,
                          std::span<const cudaStream_t> blocks) const {
  for (std::size_t i = 0; i < list.size();) {
    const Instruction& in = list[i];
    const cudaStream_t on = stream(in.stream, blocks);
    // Box copies on one stream that do not touch each other's cells run as one launch.
    const std::size_t end = batch_end(list, i);
    switch (in.op) {
      case Instruction::Op::step: {
        const unsigned max_blocks = in.throttled ? pack_blocks_.at(in.step.stream) : box_copy_max_blocks;
        if (end - i > 1) {
          run_batch(list.subspan(i, end - i), data, on, max_blocks);
          i = end;
          continue;
        }
        run_step(in.step, data, on, max_blocks);
        break;
      }
      case Instruction::Op::record: events_[in.event].record(on); break;
      case Instruction::Op::wait: events_[in.event].wait_in(on); break;
    }
    ++i;
  }
}

// After a failed enqueue: let whatever was enqueued finish, so no copy outlives the call's
// consequences unseen.
void FieldEngine::drain(std::span<const cudaStream_t> blocks) const noexcept {
  for (cudaStream_t s : blocks) drain_stream(s);
  for (const Stream& s : exchange_streams_) drain_stream(s.get());
  for (const Stream& s : unpack_streams_) drain_stream(s.get());
}

bool FieldEngine::done() const {
  const auto idle = [](const Stream& s) { return stream_idle(s.get(), "exchange stream", s.device()); };
  return std::all_of(exchange_streams_.begin(), exchange_streams_.end(), idle) &&
         std::all_of(unpack_streams_.begin(), unpack_streams_.end(), idle);
}

void FieldEngine::exchange_start(std::span<void* const> data, std::span<const cudaStream_t> blocks) {
  if (in_flight_)
    throw InvalidArgument("cush::Field::exchange_start", "this", "an exchange is in flight: call exchange_finish() first");
  try {
    enqueue(schedule_.start, data, blocks);
  } catch (...) {
    drain(blocks);
    throw;
  }
  in_flight_ = true;
}

void FieldEngine::exchange_finish(std::span<const cudaStream_t> blocks) {
  if (!in_flight_)
    throw InvalidArgument("cush::Field::exchange_finish", "this", "no exchange is in flight: call exchange_start() first");
  try {
    enqueue(schedule_.finish, {}, blocks);
  } catch (...) {
    drain(blocks);
    in_flight_ = false;
    throw;
  }
  in_flight_ = false;
}

void FieldEngine::exchange(std::span<void* const> data, std::span<const cudaStream_t> blocks) {
  if (in_flight_)
    throw InvalidArgument("cush::Field::exchange", "this", "an exchange is in flight: call exchange_finish() first");
  try {
    enqueue(schedule_.whole, data, blocks);
  } catch (...) {
    drain(blocks);
    throw;
  }
}

}  // namespace cush::detail
