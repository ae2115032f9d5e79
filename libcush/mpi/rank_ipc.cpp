#include "mpi/rank_ipc.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "core/cuda_devices.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/together.hpp"

namespace cush::detail {

namespace {

constexpr const char* where = "cush::RankField: halos over CUDA IPC";
// Tags on the duplicate communicator: a phase's notes 2 p ("free") and 2 p + 1 ("done"); the
// set-up's records and the teardown's notes above any phase's.
constexpr int records_tag = 30000;
constexpr int released_tag = 30001;
int note_tag(std::size_t phase, int kind) { return static_cast<int>(2 * phase) + kind; }

// What one end of a transfer tells the other at connect().
struct Record {
  std::uint64_t tag = 0;
  std::uint64_t offset = 0;     // receiver: where the cells go in the allocation below
  cudaIpcMemHandle_t memory{};  // receiver: the allocation
  cudaIpcEventHandle_t event{};  // receiver: its "free" event; sender: its "done" event
};

// This rank's devices' PCI bus ids, one a line ("" where CUDA cannot say).
std::string bus_ids(const std::vector<int>& devices) {
  std::string out;
  for (int d : devices) {
    std::string id;
    try {
      id = pci_bus_id(d);
    } catch (const CudaError&) {
      // a device CUDA cannot describe reaches nothing
    }
    out += id + "\n";
  }
  return out;
}

void add_once(std::vector<int>& v, int x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}
void add_once(std::vector<std::size_t>& v, std::size_t x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

cudaEvent_t interprocess_event(int device) {
  const DeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
  return e;
}

}  // namespace

std::vector<char> ipc_pairs(const ProcessGroup& group) {
  const std::vector<RankDevice>& devices = group.devices();
  const std::size_t n = devices.size();
  // Every device's PCI bus id, as its own process sees it.
  const std::vector<std::string> said = allgather_strings(group.comm(), group.size(), bus_ids(group.devices_of(group.rank())), where);
  std::vector<std::string> bus(n);
  for (int r = 0, k = 0; r < group.size(); ++r) {
    const std::string& text = said[static_cast<std::size_t>(r)];
    for (std::size_t at = 0; at < text.size(); ++k) {
      const std::size_t end = text.find('\n', at);
      bus.at(static_cast<std::size_t>(k)) = text.substr(at, end - at);
      at = end + 1;
    }
  }
  // This rank's rows: which devices of other ranks on this host its devices reach.
  std::vector<std::uint64_t> rows;
  for (std::size_t a = 0; a < n; ++a) {
    if (devices[a].rank != group.rank()) continue;
    for (std::size_t b = 0; b < n; ++b)
      rows.push_back(devices[b].rank != group.rank() && group.same_host(devices[a].rank, devices[b].rank) &&
                             reaches_physical(devices[a].device, physical_by_bus_id(bus[b]))
                         ? 1
                         : 0);
  }
  const std::vector<std::vector<std::uint64_t>> all = allgather_words(group.comm(), group.size(), rows, where);
  std::vector<char> reached(n * n, 0);
  std::vector<std::size_t> used(static_cast<std::size_t>(group.size()), 0);
  for (std::size_t a = 0; a < n; ++a) {
    const std::vector<std::uint64_t>& from = all[static_cast<std::size_t>(devices[a].rank)];
    std::size_t& at = used[static_cast<std::size_t>(devices[a].rank)];
    for (std::size_t b = 0; b < n; ++b) reached[a * n + b] = from.at(at++) != 0 ? 1 : 0;
  }
  std::vector<char> pairs(n * n, 0);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) pairs[a * n + b] = reached[a * n + b] != 0 && reached[b * n + a] != 0 ? 1 : 0;
  return pairs;
}

RankIpc::RankIpc(RankProgram& program, std::span<const char> pairs, std::span<const std::size_t> local_of,
                 std::span<const int> devices, std::size_t element_size)
    : devices_(devices.begin(), devices.end()), element_size_(element_size) {
  const std::size_t n = local_of.size();
  const auto linked = [&](const RankTransfer& t) { return pairs[t.block * n + t.peer_block] != 0; };
  for (RankPhase& phase : program.phases) {
    Phase& mine = phases_.emplace_back();
    mine.free.assign(devices_.size(), nullptr);
    mine.done.assign(devices_.size(), nullptr);
    const auto take = [&](std::vector<RankTransfer>& from, bool out) {
      std::vector<RankTransfer> rest;
      for (const RankTransfer& t : from) {
        if (!linked(t)) {
          rest.push_back(t);
          continue;
        }
        const std::size_t i = local_of[t.block];
        if (out) {
          mine.out.push_back(Out{t, i});
          add_once(mine.to, t.peer);
          add_once(mine.senders, i);
          add_once(mapped_from_, t.peer);
        } else {
          mine.in.push_back(In{t, i});
          add_once(mine.from, t.peer);
          add_once(mine.receivers, i);
          add_once(mapped_by_, t.peer);
        }
      }
      from = std::move(rest);
    };
    take(phase.outgoing, true);
    take(phase.incoming, false);
  }
}

void RankIpc::connect(const ProcessGroup& group, const std::function<IpcPlace(const RankTransfer&)>& place) {
  CUSH_MPI_CHECK(MPI_Comm_dup(group.comm(), &comm_));
  CUSH_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  // This rank's ends: its events, and the allocations its incoming transfers land in.
  std::map<int, std::vector<Record>> to_send;
  together(group, where, [&] {
    for (Phase& phase : phases_) {
      for (const In& in : phase.in) {
        cudaEvent_t& free = phase.free[in.local];
        if (free == nullptr) free = interprocess_event(devices_[in.local]);
        const IpcPlace p = place(in.t);
        Record r;
        r.tag = in.t.tag;
        r.offset = static_cast<std::uint64_t>(static_cast<std::byte*>(p.at) - static_cast<std::byte*>(p.base));
        const DeviceGuard guard(devices_[in.local]);
        CUSH_CUDA_CHECK(cudaIpcGetMemHandle(&r.memory, p.base));
        CUSH_CUDA_CHECK(cudaIpcGetEventHandle(&r.event, free));
        to_send[in.t.peer].push_back(r);
      }
      for (const Out& out : phase.out) {
        cudaEvent_t& done = phase.done[out.local];
        if (done == nullptr) done = interprocess_event(devices_[out.local]);
        Record r;
        r.tag = out.t.tag;
        const DeviceGuard guard(devices_[out.local]);
        CUSH_CUDA_CHECK(cudaIpcGetEventHandle(&r.event, done));
        to_send[out.t.peer].push_back(r);
      }
    }
  });
  // Each peer's records of the transfers between us: one per transfer, both ways.
  std::map<int, std::vector<Record>> received;
  for (const Phase& phase : phases_) {
    for (const Out& out : phase.out) received[out.t.peer].emplace_back();
    for (const In& in : phase.in) received[in.t.peer].emplace_back();
  }
  std::vector<MPI_Request> requests;
  for (auto& [peer, records] : received)
    receive_bytes(records.data(), records.size() * sizeof(Record), peer, records_tag, comm_, requests);
  for (auto& [peer, records] : to_send)
    send_bytes(records.data(), records.size() * sizeof(Record), peer, records_tag, comm_, requests);
  wait_for_ranks(requests, comm_, where);
  connected_ = true;
  // The peers' ends mapped (each allocation and event once).
  together(group, where, [&] {
    std::map<std::uint64_t, const Record*> by_tag;
    for (const auto& [peer, records] : received)
      for (const Record& r : records) by_tag[r.tag] = &r;
    std::map<std::pair<int, std::string>, void*> memory;
    std::map<std::pair<int, std::string>, cudaEvent_t> events;
    const auto open_event = [&](int peer, int device, const cudaIpcEventHandle_t& h) {
      const auto key = std::make_pair(peer, std::string(h.reserved, sizeof h.reserved));
      if (const auto it = events.find(key); it != events.end()) return it->second;
      const DeviceGuard guard(device);
      cudaEvent_t e = nullptr;
      CUSH_CUDA_CHECK(cudaIpcOpenEventHandle(&e, h));
      opened_.push_back(e);
      return events[key] = e;
    };
    for (Phase& phase : phases_) {
      for (Out& out : phase.out) {
        const Record& r = *by_tag.at(out.t.tag);
        const auto key = std::make_pair(out.t.peer, std::string(r.memory.reserved, sizeof r.memory.reserved));
        void*& base = memory[key];
        if (base == nullptr) {
          const DeviceGuard guard(devices_[out.local]);
          CUSH_CUDA_CHECK(cudaIpcOpenMemHandle(&base, r.memory, cudaIpcMemLazyEnablePeerAccess));
          mapped_.push_back(base);
        }
        out.remote = static_cast<std::byte*>(base) + r.offset;
        // Mapped once per process, under the first sender's device: the others reach the GPU too.
        cudaPointerAttributes where_it_is{};
        CUSH_CUDA_CHECK(cudaPointerGetAttributes(&where_it_is, out.remote));
        enable_access_to_physical(devices_[out.local], where_it_is.device);
        out.free = open_event(out.t.peer, devices_[out.local], r.event);
      }
      for (In& in : phase.in) in.done = open_event(in.t.peer, devices_[in.local], by_tag.at(in.t.tag)->event);
    }
  });
}

void RankIpc::notes(std::span<const int> to, std::span<const int> from, int tag, const char* asker) const {
  std::vector<MPI_Request> requests(to.size() + from.size(), MPI_REQUEST_NULL);
  std::size_t k = 0;
  for (int r : from) CUSH_MPI_CHECK(MPI_Irecv(nullptr, 0, MPI_BYTE, r, tag, comm_, &requests[k++]));
  for (int r : to) CUSH_MPI_CHECK(MPI_Isend(nullptr, 0, MPI_BYTE, r, tag, comm_, &requests[k++]));
  wait_for_ranks(requests, comm_, asker);
}

void RankIpc::record(std::span<const std::size_t> blocks, std::span<const cudaEvent_t> events,
                     std::span<const cudaStream_t> on) const {
  for (std::size_t i : blocks) {
    const DeviceGuard guard(devices_[i]);
    CUSH_CUDA_CHECK(cudaEventRecord(events[i], on[i]));
  }
}

void RankIpc::transfer(std::size_t p, const std::function<const void*(const RankTransfer&)>& source,
                       std::span<const cudaStream_t> on) {
  Phase& phase = phases_[p];
  if (phase.out.empty() && phase.in.empty()) return;
  // The receiving blocks' buffers are free from here on: the senders may write.
  record(phase.receivers, phase.free, on);
  notes(phase.from, phase.to, note_tag(p, 0), "cush::RankField: an exchange over CUDA IPC (free)");
  for (const Out& out : phase.out) {
    const DeviceGuard guard(devices_[out.local]);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(on[out.local], out.free, 0));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(out.remote, source(out.t), out.t.cells * element_size_, cudaMemcpyDefault, on[out.local]));
  }
  record(phase.senders, phase.done, on);
  notes(phase.to, phase.from, note_tag(p, 1), "cush::RankField: an exchange over CUDA IPC (done)");
  for (const In& in : phase.in) {
    const DeviceGuard guard(devices_[in.local]);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(on[in.local], in.done, 0));
  }
}

void RankIpc::close() noexcept {
  for (void* p : mapped_) CUSH_CUDA_CHECK_NOEXCEPT(cudaIpcCloseMemHandle(p));
  for (cudaEvent_t e : opened_) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
  mapped_.clear();
  opened_.clear();
}

RankIpc::~RankIpc() {
  close();
  if (connected_) {
    try {
      // Mapped from them: closed, they may free. Mapped by them: wait until they have closed.
      notes(mapped_from_, mapped_by_, released_tag, "cush::RankField: freeing buffers other ranks mapped over CUDA IPC");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cush: %s\n", e.what());
    }
  }
  for (Phase& phase : phases_)
    for (std::vector<cudaEvent_t>* own : {&phase.free, &phase.done})
      for (cudaEvent_t e : *own)
        if (e != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
  if (comm_ != MPI_COMM_NULL) (void)MPI_Comm_free(&comm_);
}

}  // namespace cush::detail
