#include "cush/rank_field.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/cuda_devices.hpp"
#include "core/stream_idle.hpp"
#include "core/stream_set.hpp"
#include "cush/device_buffer.hpp"
#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/stream.hpp"
#include "grid/block_memory.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/rank_exchange.hpp"
#include "mpi/rank_grid.hpp"
#include "mpi/rank_ipc.hpp"
#include "mpi/rank_nccl.hpp"
#include "mpi/together.hpp"

namespace cush {

namespace {

constexpr const char* where = "cush::RankField";
// The scatter's and gather's messages on the group's own communicator.
constexpr int field_tag = 0x6366;
constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

// The transport the exchanges use: automatic resolved (collective where it makes NCCL or asks
// which GPUs reach each other), and the pairs of blocks that move over CUDA IPC (`pairs`).
RankTransport resolve(const ProcessGroup& group, RankTransport asked, detail::RankNccl*& nccl, std::vector<char>& pairs) {
  nccl = nullptr;
  pairs.clear();
  if (asked == RankTransport::mpi || (asked == RankTransport::automatic && group.size() == 1)) return RankTransport::mpi;
  if (asked == RankTransport::nccl) {
    nccl = &detail::group_nccl(group);  // InvalidArgument on every rank where GPUs are shared
    return RankTransport::nccl;
  }
  pairs = detail::ipc_pairs(group);  // the same on every rank
  const std::vector<RankDevice>& d = group.devices();
  const std::size_t n = d.size();
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      if (d[a].rank == d[b].rank || pairs[a * n + b] != 0) continue;
      if (asked == RankTransport::ipc)
        throw InvalidArgument(where, "transport",
                              "ipc needs every two GPUs of different ranks on one host, each reaching the other (one GPU or "
                              "peer access both ways); rank " + std::to_string(d[a].rank) + "'s device " +
                                  std::to_string(d[a].device) + " and rank " + std::to_string(d[b].rank) + "'s device " +
                                  std::to_string(d[b].device) + " are not");
      // Some pairs go another way: NCCL where every device is a GPU of its own, else MPI.
      try {
        nccl = &detail::group_nccl(group);
        return RankTransport::nccl;
      } catch (const InvalidArgument&) {
        return RankTransport::mpi;  // every rank saw the same devices, so every rank falls back
      }
    }
  return RankTransport::ipc;
}

// Cells of block k's owned box, x fastest, between a host array of `extent` cells (at the box's
// place in it) and a packed run of the box's cells (`packed`), one component.
void pack_box(const Decomposition& grid, std::size_t k, const std::byte* host, const Extent3& extent, std::byte* packed,
              std::size_t element_size, bool to_packed) {
  const Box o = grid.owned(k);
  const std::size_t row = o.size[0] * element_size;
  for (std::size_t z = 0; z < o.size[2]; ++z)
    for (std::size_t y = 0; y < o.size[1]; ++y) {
      const std::size_t at =
          (static_cast<std::size_t>(o.lo[0]) +
           extent[0] * (static_cast<std::size_t>(o.lo[1]) + y + extent[1] * (static_cast<std::size_t>(o.lo[2]) + z))) *
          element_size;
      std::byte* run = packed + (y + o.size[1] * z) * row;
      if (to_packed) {
        std::memcpy(run, host + at, row);
      } else {
        std::memcpy(const_cast<std::byte*>(host) + at, run, row);
      }
    }
}

}  // namespace

struct RankFieldBase::Impl {
  const ProcessGroup* group = nullptr;
  Decomposition grid;
  std::vector<int> block_rank;         // by position
  detail::LocalBlocks local;           // this rank's blocks
  std::vector<std::size_t> local_of;   // position -> index in local (none: another rank's)
  std::size_t element_size = 0;
  std::size_t components = 1;
  RankTransport asked = RankTransport::automatic;  // as given (fields made alike ask the same)
  RankTransport transport = RankTransport::mpi;     // resolved
  detail::RankNccl* nccl = nullptr;
  std::vector<char> ipc;  // the pairs of blocks that move over CUDA IPC (detail::ipc_pairs; empty: none)
  // The blocks' streams, shared by fields made alike.
  std::shared_ptr<const detail::StreamSet> streams;
  std::vector<cudaStream_t> handles;
  std::vector<DeviceBuffer> buffers;
  std::vector<void*> data;   // each local block's first ghost cell
  std::vector<void*> bases;  // each local block's allocation
  HaloComponents everything;
  std::unique_ptr<detail::RankExchange> engine;
  std::vector<std::pair<HaloComponents, std::unique_ptr<detail::RankExchange>>> selective;
  detail::RankExchange* in_flight = nullptr;
  std::vector<std::byte> staging;  // this rank's blocks packed, for a scatter or gather

  // Collective: everything checked together, then allocated (a rank that fails tells the others).
  Impl(const ProcessGroup& g, Decomposition d, std::size_t es, std::size_t count, RankTransport how,
       std::shared_ptr<const detail::StreamSet> shared_streams)
      : group(&g), grid(std::move(d)), element_size(es), components(count), asked(how) {
    g.agree(where, "the grid (extent, blocks, halo, periodicity, row alignment)", detail::grid_fingerprint(grid));
    g.agree(where, "the components", components);
    g.agree(where, "the element size", element_size);
    g.agree(where, "the transport", static_cast<std::uint64_t>(asked));
    if (components == 0) throw InvalidArgument(where, "components", "a field needs at least one component");
    const std::vector<RankDevice>& devices = g.devices();
    if (grid.size() != devices.size())
      throw InvalidArgument(where, "grid",
                            std::to_string(grid.size()) + " blocks for a group of " + std::to_string(devices.size()) +
                                " devices (one block per device of every rank)");
    local_of.assign(grid.size(), none);
    for (std::size_t k = 0; k < grid.size(); ++k) {
      block_rank.push_back(devices[k].rank);
      if (devices[k].rank != g.rank()) continue;
      local_of[k] = local.pos.size();
      local.pos.push_back(k);
      local.devices.push_back(devices[k].device);
    }
    transport = resolve(g, asked, nccl, ipc);
    everything = HaloComponents::all(components);
    detail::RankProgram program = detail::rank_exchange_program(g, grid, block_rank, everything);
    detail::together(g, where, [&] {
      streams = shared_streams ? std::move(shared_streams) : std::make_shared<const detail::StreamSet>(local.devices);
      handles.assign(streams->handles().begin(), streams->handles().end());
      std::vector<std::size_t> bytes;
      for (std::size_t i = 0; i < local.pos.size(); ++i) {
        const std::size_t k = local.pos[i];
        local.strides.push_back(detail::component_stride(grid, k, element_size, where));
        bytes.push_back(detail::block_bytes(grid, k, element_size, components, local.strides[i], where));
        const DeviceSet one(std::vector<int>{local.devices[i]});
        const std::size_t available = one.free_memory(0);
        if (bytes[i] > available) throw OutOfMemory(where, local.devices[i], bytes[i], available);
      }
      for (std::size_t i = 0; i < local.pos.size(); ++i) {
        buffers.emplace_back(local.devices[i], bytes[i]);
        bases.push_back(buffers.back().data());
        data.push_back(static_cast<std::byte*>(buffers.back().data()) + grid.lead() * element_size);
      }
      engine = std::make_unique<detail::RankExchange>(g, std::move(program), grid, local, element_size, nccl, ipc);
    });
    engine->connect(data, bases);
  }

  ~Impl() {
    detail::synchronize_noexcept(handles);
    selective.clear();
    engine.reset();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  [[nodiscard]] std::size_t index(std::size_t pos, const char* asker) const {
    if (pos >= local_of.size() || local_of[pos] == none)
      throw InvalidArgument(asker, "pos",
                            "block " + std::to_string(pos) + " is not one of rank " + std::to_string(group->rank()) +
                                "'s (local_blocks())");
    return local_of[pos];
  }

  void check_idle(const char* asker) const {
    if (in_flight != nullptr) throw InvalidArgument(asker, "this", "an exchange is in flight: call exchange_finish() first");
  }

  // The exchange of `which` (collective the first time: built and kept).
  detail::RankExchange& engine_for(const HaloComponents& which) {
    if (which == everything) return *engine;
    for (auto& [w, e] : selective)
      if (w == which) return *e;
    detail::check_components(grid, which, components);
    detail::RankProgram program = detail::rank_exchange_program(*group, grid, block_rank, which);
    std::unique_ptr<detail::RankExchange> made;
    detail::together(*group, "cush::RankField::exchange", [&] {
      made = std::make_unique<detail::RankExchange>(*group, std::move(program), grid, local, element_size, nccl, ipc);
    });
    made->connect(data, bases);
    selective.emplace_back(which, std::move(made));
    return *selective.back().second;
  }

  // This rank's blocks, every component, in a packed run of staging (or back).
  void copy_local(bool to_device) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < local.pos.size(); ++i) {
      const std::size_t k = local.pos[i];
      const Box o = grid.owned(k);
      const DeviceGuard guard(local.devices[i]);
      for (std::size_t c = 0; c < components; ++c) {
        const detail::HostBox h{staging.data() + at, o.size, Extent3{0, 0, 0}};
        detail::copy_owned(grid, k, static_cast<std::byte*>(data[i]) + c * local.strides[i] * element_size, h,
                           element_size, handles[i], to_device);
        at += o.volume() * element_size;
      }
    }
  }

  // Bytes of rank r's blocks, every component.
  [[nodiscard]] std::size_t rank_bytes(int r) const {
    std::size_t bytes = 0;
    for (std::size_t k = 0; k < grid.size(); ++k)
      if (block_rank[k] == r) bytes += grid.owned(k).volume() * element_size * components;
    return bytes;
  }

  // Rank r's blocks of the global array(s) `host` to or from a packed run.
  void pack_rank(int r, const std::byte* host, std::byte* packed, bool to_packed) const {
    const Extent3& e = grid.extent();
    const std::size_t component_bytes = e[0] * e[1] * e[2] * element_size;
    for (std::size_t k = 0; k < grid.size(); ++k) {
      if (block_rank[k] != r) continue;
      for (std::size_t c = 0; c < components; ++c) {
        pack_box(grid, k, host + c * component_bytes, e, packed, element_size, to_packed);
        packed += grid.owned(k).volume() * element_size;
      }
    }
  }

  // The root's own blocks straight between the global array and the GPUs.
  void copy_root_blocks(std::byte* host, bool to_device) const {
    const Extent3& e = grid.extent();
    for (std::size_t i = 0; i < local.pos.size(); ++i) {
      const std::size_t k = local.pos[i];
      const Box o = grid.owned(k);
      const DeviceGuard guard(local.devices[i]);
      for (std::size_t c = 0; c < components; ++c) {
        const detail::HostBox h{host + c * e[0] * e[1] * e[2] * element_size, e,
                                Extent3{static_cast<std::size_t>(o.lo[0]), static_cast<std::size_t>(o.lo[1]),
                                        static_cast<std::size_t>(o.lo[2])}};
        detail::copy_owned(grid, k, static_cast<std::byte*>(data[i]) + c * local.strides[i] * element_size, h,
                           element_size, handles[i], to_device);
      }
    }
  }

  void wait() const {
    for (std::size_t i = 0; i < handles.size(); ++i) StreamRef(local.devices[i], handles[i]).synchronize();
  }
};

RankFieldBase::RankFieldBase(const ProcessGroup& group, Decomposition grid, std::size_t element_size,
                             std::size_t components, RankTransport transport)
    : impl_(std::make_unique<Impl>(group, std::move(grid), element_size, components, transport, nullptr)) {}

RankFieldBase::RankFieldBase(const RankFieldBase& like, std::size_t element_size, std::size_t components) {
  if (!like.impl_) throw InvalidArgument("cush::RankField::alike", "like", "was moved from");
  const Impl& l = *like.impl_;
  impl_ = std::make_unique<Impl>(*l.group, l.grid, element_size, components, l.asked, l.streams);
}

RankFieldBase::RankFieldBase(RankFieldBase&&) noexcept = default;
RankFieldBase& RankFieldBase::operator=(RankFieldBase&&) noexcept = default;
RankFieldBase::~RankFieldBase() = default;

namespace {
template <class Impl>
Impl& live(const std::unique_ptr<Impl>& impl) {
  if (!impl) throw InvalidArgument(where, "this", "the field was moved from");
  return *impl;
}
}  // namespace

const ProcessGroup& RankFieldBase::group() const { return *live(impl_).group; }
const Decomposition& RankFieldBase::grid() const { return live(impl_).grid; }
std::size_t RankFieldBase::components() const noexcept { return impl_ ? impl_->components : 0; }
std::span<const std::size_t> RankFieldBase::local_blocks() const { return live(impl_).local.pos; }
RankTransport RankFieldBase::transport() const { return live(impl_).transport; }

bool RankFieldBase::holds(std::size_t pos) const {
  const Impl& f = live(impl_);
  return pos < f.local_of.size() && f.local_of[pos] != none;
}

cudaStream_t RankFieldBase::stream(std::size_t pos) const {
  const Impl& f = live(impl_);
  return f.handles[f.index(pos, "cush::RankField::stream")];
}

std::size_t RankFieldBase::component_stride(std::size_t pos) const {
  const Impl& f = live(impl_);
  return f.local.strides[f.index(pos, "cush::RankField::component_stride")];
}

void* RankFieldBase::block_data(std::size_t pos) const {
  const Impl& f = live(impl_);
  return f.data[f.index(pos, "cush::RankField::block")];
}

int RankFieldBase::block_device(std::size_t pos) const {
  const Impl& f = live(impl_);
  return f.local.devices[f.index(pos, "cush::RankField::block")];
}

void RankFieldBase::exchange_start() { exchange_start(live(impl_).everything); }

void RankFieldBase::exchange_start(const HaloComponents& which) {
  Impl& f = live(impl_);
  f.check_idle("cush::RankField::exchange_start");
  detail::RankExchange& e = f.engine_for(which);
  e.exchange_start(f.data, f.handles);
  f.in_flight = &e;
}

void RankFieldBase::exchange_finish() {
  Impl& f = live(impl_);
  if (f.in_flight == nullptr)
    throw InvalidArgument("cush::RankField::exchange_finish", "this", "no exchange is in flight: call exchange_start() first");
  detail::RankExchange* e = std::exchange(f.in_flight, nullptr);
  e->exchange_finish(f.handles);
}

void RankFieldBase::exchange() { exchange(live(impl_).everything); }

void RankFieldBase::exchange(const HaloComponents& which) {
  Impl& f = live(impl_);
  f.check_idle("cush::RankField::exchange");
  f.engine_for(which).exchange(f.data, f.handles);
}

void RankFieldBase::wait() const {
  if (!impl_) return;
  detail::finishing_on_error(impl_->local.devices, [&] { impl_->wait(); });
}

bool RankFieldBase::done() const {
  if (!impl_) return true;
  return detail::finishing_on_error(impl_->local.devices, [&] {
    for (std::size_t i = 0; i < impl_->handles.size(); ++i)
      if (!detail::stream_idle(impl_->handles[i], "block stream", impl_->local.devices[i])) return false;
    for (const auto& [which, engine] : impl_->selective)
      if (!engine->done()) return false;
    return impl_->engine->done();
  });
}

void RankFieldBase::scatter_bytes(const void* host, int root) {
  Impl& f = live(impl_);
  const ProcessGroup& g = *f.group;
  detail::check_root(g, host, true, root, "cush::RankField::scatter");
  f.check_idle("cush::RankField::scatter");
  std::vector<MPI_Request> requests;
  if (g.rank() == root) {
    std::vector<std::vector<std::byte>> packed(static_cast<std::size_t>(g.size()));
    for (int r = 0; r < g.size(); ++r) {
      const std::size_t bytes = f.rank_bytes(r);
      if (r == root || bytes == 0) continue;
      packed[static_cast<std::size_t>(r)].resize(bytes);
      f.pack_rank(r, static_cast<const std::byte*>(host), packed[static_cast<std::size_t>(r)].data(), true);
      detail::send_bytes(packed[static_cast<std::size_t>(r)].data(), bytes, r, field_tag, g.comm(), requests);
    }
    detail::finishing_on_error(f.local.devices, [&] { f.copy_root_blocks(static_cast<std::byte*>(const_cast<void*>(host)), true); });
    detail::wait_for_ranks(requests, g.comm(), "cush::RankField::scatter");
    return;
  }
  if (f.local.pos.empty()) return;
  f.wait();  // the previous scatter's or gather's copies are done with the staging buffer
  f.staging.resize(f.rank_bytes(g.rank()));
  detail::receive_bytes(f.staging.data(), f.staging.size(), root, field_tag, g.comm(), requests);
  detail::wait_for_ranks(requests, g.comm(), "cush::RankField::scatter");
  detail::finishing_on_error(f.local.devices, [&] { f.copy_local(true); });
}

void RankFieldBase::gather_bytes(void* host, int root) {
  Impl& f = live(impl_);
  const ProcessGroup& g = *f.group;
  detail::check_root(g, host, true, root, "cush::RankField::gather");
  f.check_idle("cush::RankField::gather");
  std::vector<MPI_Request> requests;
  if (g.rank() != root) {
    if (f.local.pos.empty()) return;
    f.wait();
    f.staging.resize(f.rank_bytes(g.rank()));
    detail::finishing_on_error(f.local.devices, [&] {
      f.copy_local(false);
      f.wait();
    });
    detail::send_bytes(f.staging.data(), f.staging.size(), root, field_tag, g.comm(), requests);
    detail::wait_for_ranks(requests, g.comm(), "cush::RankField::gather");
    return;
  }
  std::vector<std::vector<std::byte>> packed(static_cast<std::size_t>(g.size()));
  for (int r = 0; r < g.size(); ++r) {
    const std::size_t bytes = f.rank_bytes(r);
    if (r == root || bytes == 0) continue;
    packed[static_cast<std::size_t>(r)].resize(bytes);
    detail::receive_bytes(packed[static_cast<std::size_t>(r)].data(), bytes, r, field_tag, g.comm(), requests);
  }
  detail::finishing_on_error(f.local.devices, [&] { f.copy_root_blocks(static_cast<std::byte*>(host), false); });
  detail::wait_for_ranks(requests, g.comm(), "cush::RankField::gather");
  for (int r = 0; r < g.size(); ++r)
    if (!packed[static_cast<std::size_t>(r)].empty())
      f.pack_rank(r, static_cast<std::byte*>(host), packed[static_cast<std::size_t>(r)].data(), false);
}

}  // namespace cush
