// GPU<->GPU operations: cush against its raw twins on the same device buffers, from 4 KiB to
// 1 GiB per GPU, over all GPUs of the host.
//
// Names: dev/<op>/<impl>/<bytes>
//   op    copy        one GPU's buffer to the next GPU (one way: GPU 0 -> GPU 1)
//         exchange    every GPU sends its segment to the next one at once (both ways on 2 GPUs)
//         broadcast   replica 0 to all replicas
//         scatter     GPU 0's buffer (p pieces) to the GPUs, one piece each
//         gather      every GPU's piece into GPU 0's buffer
//         all_gather  every GPU's piece to every GPU
//         all_to_all  every GPU's buffer cut in p pieces, piece j to GPU j
//         reduce      sum of the replicas into replica 0 (float)
//         all_reduce  sum of the replicas into every replica (float)
//   impl  raw_peer    cudaMemcpyPeerAsync loop, one stream per GPU, issued on the source's stream,
//                     with the stream ordering that a correct multi-GPU raw CUDA program needs
//                     (see PeerOrder): before the copies each source's stream waits for an event
//                     recorded on the stream of every destination it writes (that GPU's earlier
//                     work may still use the buffer), after them each destination's stream waits
//                     for an event recorded on every source's stream that wrote to it (its later
//                     work must see the data). cush orders its operations the same way, so this
//                     is the raw program it replaces; raw_peer rows measured before this ordering
//                     (unordered copies) are not comparable with these.
//         raw_nccl    direct NCCL calls (collective, or grouped send/receive as nccl-tests does)
//         raw_nccl_window   all_reduce and all_gather only: the NCCL collective on buffers from
//                     ncclMemAlloc registered as symmetric windows (ncclCommWindowRegister with
//                     NCCL_WIN_COLL_SYMMETRIC, NCCL 2.27+), where NCCL may run its symmetric
//                     kernels: NCCL as a user would best set it up. Such a row runs only with
//                     NCCL_NVLS_ENABLE=0 (else it is skipped, saying so): NCCL then binds no
//                     multicast object to the windows (they can take a shared host's GPUs down).
//         cush        cush, transport chosen automatically
//         cush_peer / cush_nccl / cush_staged / cush_kernel   cush with the transport forced
//                     (cush_kernel: peer_kernel)
//   bytes the per-GPU buffer size of nccl-tests: the buffer each GPU sends from or receives
//         into (for scatter, gather and all_gather: the whole p-piece buffer); 4 KiB x 16^k up to
//         256 MiB, and 1 GiB; reduce and all_reduce at every 4 KiB x 4^k; with a cap above 1 GiB
//         every power of two from 512 MiB to the cap
// Counters: op_us = time of one operation (each timed interval runs a batch of them),
// algbw = bytes / time, busbw = algbw x the nccl-tests factor of the op (all_reduce
// 2(p-1)/p; all_gather, all_to_all, scatter, gather (p-1)/p; others 1), GB/s.
// Environment: CUSH_BENCH_DEVICE_OPS_MAX_MIB (default 1024) caps the sizes.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "harness.hpp"

namespace {

using Byte = std::byte;

#define NCCL_OK(call)                                                                    \
  do {                                                                                   \
    const ncclResult_t r_ = (call);                                                      \
    if (r_ != ncclSuccess) throw cush::Error(std::string(#call) + ": " + ncclGetErrorString(r_)); \
  } while (0)

std::size_t max_bytes() {
  return cush::detail::env::size("CUSH_BENCH_DEVICE_OPS_MAX_MIB") << 20;
}

const std::vector<int>& gpus() {
  static const std::vector<int> ids = cush_bench::all_devices();
  return ids;
}

// The raw twins' streams and communicator, one per GPU, made once.
struct Raw {
  std::vector<cush::Stream> streams;
  std::vector<cudaStream_t> handles;
  std::vector<ncclComm_t> comms;
  Raw() {
    for (int d : gpus()) {
      streams.emplace_back(d);
      handles.push_back(streams.back().get());
    }
    comms.resize(gpus().size());
    NCCL_OK(ncclCommInitAll(comms.data(), static_cast<int>(gpus().size()), gpus().data()));
    // Peer access for the raw copies, as for cush's (enabled once per process either way).
    cush::DeviceSet(gpus()).enable_peer_access();
  }
  static Raw& get() {
    static Raw raw;
    return raw;
  }
};

// A peer copy's source and destination, positions in gpus().
struct Link {
  std::size_t from;
  std::size_t to;
};

// Every ordered pair of distinct GPUs.
std::vector<Link> all_pairs() {
  std::vector<Link> links;
  for (std::size_t i = 0; i < gpus().size(); ++i)
    for (std::size_t j = 0; j < gpus().size(); ++j)
      if (i != j) links.push_back({i, j});
  return links;
}

// The ordering that raw_peer's copies need between the GPUs' streams (one per GPU, `handles`), as
// a careful raw CUDA program writes it and as cush does: before() makes each source's stream wait
// for an event recorded on the stream of each destination it writes, after() (once the copies are
// issued) makes each destination's stream wait for an event recorded on the stream of each source
// that wrote to it. One event per destination and one per source, made once per benchmark (no
// timing, each on its own device: cush::Event) and recorded once per operation and phase; every
// record of a phase comes before its waits, so that streams which are both sources and
// destinations do not wait for each other's waits. Copies within one GPU need no event.
class PeerOrder {
 public:
  PeerOrder(const std::vector<Link>& links, std::vector<cudaStream_t> handles)
      : streams_(std::move(handles)), start_(streams_.size()), end_(streams_.size()) {
    for (const Link& l : links) {
      if (l.from == l.to) continue;
      const auto same = [&](const Link& o) { return o.from == l.from && o.to == l.to; };
      if (std::any_of(links_.begin(), links_.end(), same)) continue;
      links_.push_back(l);
      if (!start_[l.to]) {
        start_[l.to] = cush::Event(gpus()[l.to]);
        destinations_.push_back(l.to);
      }
      if (!end_[l.from]) {
        end_[l.from] = cush::Event(gpus()[l.from]);
        sources_.push_back(l.from);
      }
    }
  }
  void before() const {
    for (std::size_t d : destinations_) CUSH_CUDA_CHECK(cudaEventRecord(start_[d].get(), streams_[d]));
    for (const Link& l : links_) CUSH_CUDA_CHECK(cudaStreamWaitEvent(streams_[l.from], start_[l.to].get(), 0));
  }
  void after() const {
    for (std::size_t s : sources_) CUSH_CUDA_CHECK(cudaEventRecord(end_[s].get(), streams_[s]));
    for (const Link& l : links_) CUSH_CUDA_CHECK(cudaStreamWaitEvent(streams_[l.to], end_[l.from].get(), 0));
  }

 private:
  std::vector<cudaStream_t> streams_;
  std::vector<Link> links_;                // distinct, between distinct GPUs
  std::vector<std::size_t> destinations_;  // each once
  std::vector<std::size_t> sources_;
  std::vector<cush::Event> start_;  // per GPU: recorded on a destination's stream before the copies
  std::vector<cush::Event> end_;    // per GPU: recorded on a source's stream after its copies
};

template <class T>
void zero(cush::Plan<T>& plan) {
  plan.for_each([](cush::Segment<T> s) { CUSH_CUDA_CHECK(cudaMemsetAsync(s.data(), 0, s.bytes(), s.stream())); });
  plan.wait();
}

// Streams to time on: per GPU, the first plan's stream there, else the second's.
template <class A, class B>
std::vector<cudaStream_t> timing_streams(const A& first, const B& second) {
  std::vector<cudaStream_t> s;
  for (std::size_t i = 0; i < gpus().size(); ++i) {
    const int d = gpus()[i];
    const int a = first.devices().position_of(d);
    const int b = second.devices().position_of(d);
    if (a >= 0) {
      s.push_back(first.stream(static_cast<std::size_t>(a)));
    } else if (b >= 0) {
      s.push_back(second.stream(static_cast<std::size_t>(b)));
    } else {
      // A GPU in neither plan (the copy on more than 2 GPUs): an idle stream, timed as ~0.
      s.push_back(Raw::get().handles[i]);
    }
  }
  return s;
}

std::vector<int> rotated(std::size_t by) {
  std::vector<int> r;
  for (std::size_t i = 0; i < gpus().size(); ++i) r.push_back(gpus()[(i + by) % gpus().size()]);
  return r;
}

enum class Op { copy, exchange, broadcast, scatter, gather, all_gather, all_to_all, reduce, all_reduce };
const char* name(Op op) {
  static const char* names[] = {"copy",   "exchange",   "broadcast",  "scatter",   "gather",
                                "all_gather", "all_to_all", "reduce", "all_reduce"};
  return names[static_cast<int>(op)];
}
enum class Impl { raw_peer, raw_nccl, cush, cush_peer, cush_nccl, cush_staged, cush_kernel, raw_nccl_window };
const char* name(Impl i) {
  static const char* names[] = {"raw_peer",  "raw_nccl",    "cush",       "cush_peer",
                                "cush_nccl", "cush_staged", "cush_kernel", "raw_nccl_window"};
  return names[static_cast<int>(i)];
}
cush::CommOptions options(Impl i) {
  switch (i) {
    case Impl::cush_peer: return {cush::Transport::peer};
    case Impl::cush_nccl: return {cush::Transport::nccl};
    case Impl::cush_staged: return {cush::Transport::host_staging};
    case Impl::cush_kernel: return {cush::Transport::peer_kernel};
    default: return {cush::Transport::automatic};
  }
}

double bus_factor(Op op, std::size_t p) {
  const double f = static_cast<double>(p - 1) / static_cast<double>(p);
  switch (op) {
    case Op::all_reduce: return 2 * f;
    case Op::all_gather:
    case Op::all_to_all:
    case Op::scatter:
    case Op::gather: return f;
    default: return 1.0;
  }
}

// One benchmark: `setup` builds the buffers and returns the operation and the streams it ends on.
struct Prepared {
  std::function<void()> run;
  std::vector<cudaStream_t> streams;
  std::vector<std::shared_ptr<void>> keep;  // plans (and raw_peer's events) alive while timing
  std::string skip;                         // why the row cannot run here (then nothing else is set)
};

// raw_nccl_window's buffers: on every GPU `bytes` from ncclMemAlloc, zeroed, registered on the
// raw twins' communicators as symmetric windows (collectively, in one group).
class Windows {
 public:
  explicit Windows(std::size_t bytes) : bufs_(gpus().size(), nullptr), wins_(gpus().size(), nullptr) {
    Raw& raw = Raw::get();
    try {
      for (std::size_t k = 0; k < gpus().size(); ++k) {
        cush::DeviceGuard guard(gpus()[k]);
        NCCL_OK(ncclMemAlloc(&bufs_[k], bytes));
        CUSH_CUDA_CHECK(cudaMemset(bufs_[k], 0, bytes));
      }
      ncclResult_t r = ncclGroupStart();
      for (std::size_t k = 0; k < gpus().size() && r == ncclSuccess; ++k)
        r = ncclCommWindowRegister(raw.comms[k], bufs_[k], bytes, &wins_[k], NCCL_WIN_COLL_SYMMETRIC);
      const ncclResult_t end = ncclGroupEnd();  // ends the group even after a failed call in it
      NCCL_OK(r);
      NCCL_OK(end);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Windows() { release(); }
  Windows(const Windows&) = delete;
  Windows& operator=(const Windows&) = delete;
  [[nodiscard]] void* buffer(std::size_t k) const { return bufs_[k]; }

 private:
  void release() noexcept {
    Raw& raw = Raw::get();
    const auto report = [](ncclResult_t r, const char* what) {
      if (r != ncclSuccess) std::fprintf(stderr, "bench_device_ops: %s: %s\n", what, ncclGetErrorString(r));
    };
    if (std::any_of(wins_.begin(), wins_.end(), [](ncclWindow_t w) { return w != nullptr; })) {
      report(ncclGroupStart(), "ncclGroupStart");
      for (std::size_t k = 0; k < wins_.size(); ++k)
        if (wins_[k] != nullptr) report(ncclCommWindowDeregister(raw.comms[k], wins_[k]), "ncclCommWindowDeregister");
      report(ncclGroupEnd(), "ncclGroupEnd");
    }
    for (std::size_t k = 0; k < bufs_.size(); ++k) {
      if (bufs_[k] == nullptr) continue;
      CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(gpus()[k]));
      report(ncclMemFree(bufs_[k]), "ncclMemFree");
      bufs_[k] = nullptr;
    }
    wins_.assign(wins_.size(), nullptr);
  }
  std::vector<void*> bufs_;
  std::vector<ncclWindow_t> wins_;
};

// Why a raw_nccl_window row cannot run in this process, or empty.
std::string window_refusal() {
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  if (nvls == nullptr || std::strcmp(nvls, "0") != 0)
    return "skipped: symmetric windows run only with NCCL_NVLS_ENABLE=0 (else NCCL may bind multicast objects)";
  return {};
}

// raw_nccl_window: all_reduce (`bytes` of floats, in place) or all_gather (`bytes` the whole
// buffer, each GPU's piece in place at its rank's offset) on registered windows.
Prepared prepare_window(Op op, std::size_t bytes) {
  Prepared w;
  if (w.skip = window_refusal(); !w.skip.empty()) return w;
  Raw& raw = Raw::get();
  const std::size_t p = gpus().size();
  auto windows = std::make_shared<Windows>(bytes);
  w.keep = {windows};
  w.streams = raw.handles;
  w.run = [=, &raw] {
    NCCL_OK(ncclGroupStart());
    for (std::size_t k = 0; k < p; ++k) {
      auto* buf = static_cast<std::byte*>(windows->buffer(k));
      if (op == Op::all_reduce) {
        NCCL_OK(ncclAllReduce(buf, buf, bytes / sizeof(float), ncclFloat32, ncclSum, raw.comms[k], raw.handles[k]));
      } else {
        const std::size_t piece = bytes / p;
        NCCL_OK(ncclAllGather(buf + k * piece, buf, piece, ncclUint8, raw.comms[k], raw.handles[k]));
      }
    }
    NCCL_OK(ncclGroupEnd());
  };
  return w;
}

template <class T>
std::shared_ptr<cush::Plan<T>> plan(std::vector<int> ids, std::size_t n, cush::Distribution d = cush::Distribution::uniform()) {
  auto p = std::make_shared<cush::Plan<T>>(cush::DeviceSet(std::move(ids)), n, d);
  zero(*p);
  return p;
}

Prepared prepare(Op op, Impl impl, std::size_t bytes) {
  if (impl == Impl::raw_nccl_window) return prepare_window(op, bytes);
  Raw& raw = Raw::get();
  const std::size_t p = gpus().size();
  const cush::Distribution rep = cush::Distribution::replicated();
  const cush::CommOptions o = options(impl);
  const bool is_raw = impl == Impl::raw_peer || impl == Impl::raw_nccl;
  const bool nccl = impl == Impl::raw_nccl;
  Prepared w;
  switch (op) {
    case Op::copy: {
      auto a = plan<Byte>({gpus()[0]}, bytes);
      auto b = plan<Byte>({gpus()[1]}, bytes);
      w.keep = {a, b};
      w.streams = is_raw ? raw.handles : timing_streams(*b, *a);
      Byte* from = a->segment(0).data();
      Byte* to = b->segment(0).data();
      if (impl == Impl::raw_peer) {
        auto order = std::make_shared<PeerOrder>(std::vector<Link>{{0, 1}}, raw.handles);
        w.keep.push_back(order);
        w.run = [=, &raw] {
          order->before();
          CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(to, gpus()[1], from, gpus()[0], bytes, raw.handles[0]));
          order->after();
        };
      } else if (nccl) {
        w.run = [=, &raw] {
          NCCL_OK(ncclGroupStart());
          NCCL_OK(ncclSend(from, bytes, ncclUint8, 1, raw.comms[0], raw.handles[0]));
          NCCL_OK(ncclRecv(to, bytes, ncclUint8, 0, raw.comms[1], raw.handles[1]));
          NCCL_OK(ncclGroupEnd());
        };
      } else {
        w.run = [=] { cush::copy(*a, *b, o); };
      }
      return w;
    }
    case Op::exchange: {
      auto a = plan<Byte>(gpus(), bytes * p);
      auto b = plan<Byte>(rotated(1), bytes * p);
      w.keep = {a, b};
      w.streams = is_raw ? raw.handles : timing_streams(*b, *a);
      if (is_raw) {
        std::shared_ptr<PeerOrder> order;  // raw_peer only
        if (!nccl) {
          std::vector<Link> links;
          for (std::size_t i = 0; i < p; ++i) links.push_back({i, (i + 1) % p});
          order = std::make_shared<PeerOrder>(links, raw.handles);
          w.keep.push_back(order);
        }
        w.run = [=, &raw] {
          if (nccl) NCCL_OK(ncclGroupStart());
          else order->before();
          for (std::size_t i = 0; i < p; ++i) {
            const std::size_t k = (i + 1) % p;  // device i's segment lands on device k
            Byte* from = a->segment(i).data();
            Byte* to = b->segment(i).data();
            if (nccl) {
              NCCL_OK(ncclSend(from, bytes, ncclUint8, static_cast<int>(k), raw.comms[i], raw.handles[i]));
              NCCL_OK(ncclRecv(to, bytes, ncclUint8, static_cast<int>(i), raw.comms[k], raw.handles[k]));
            } else {
              CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(to, gpus()[k], from, gpus()[i], bytes, raw.handles[i]));
            }
          }
          if (nccl) NCCL_OK(ncclGroupEnd());
          else order->after();
        };
      } else {
        w.run = [=] { cush::copy(*a, *b, o); };
      }
      return w;
    }
    case Op::broadcast:
    case Op::reduce:
    case Op::all_reduce: {
      auto r = plan<float>(gpus(), bytes / sizeof(float), rep);
      w.keep = {r};
      w.streams = is_raw ? raw.handles : timing_streams(*r, *r);
      const std::size_t n = bytes / sizeof(float);
      if (impl == Impl::raw_peer) {  // broadcast only
        std::vector<Link> links;
        for (std::size_t k = 1; k < p; ++k) links.push_back({0, k});
        auto order = std::make_shared<PeerOrder>(links, raw.handles);
        w.keep.push_back(order);
        w.run = [=, &raw] {
          order->before();
          for (std::size_t k = 1; k < p; ++k)
            CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(r->segment(k).data(), gpus()[k], r->segment(0).data(), gpus()[0],
                                                bytes, raw.handles[0]));
          order->after();
        };
      } else if (nccl) {
        w.run = [=, &raw] {
          NCCL_OK(ncclGroupStart());
          for (std::size_t k = 0; k < p; ++k) {
            float* x = r->segment(k).data();
            if (op == Op::broadcast) NCCL_OK(ncclBroadcast(x, x, n, ncclFloat32, 0, raw.comms[k], raw.handles[k]));
            if (op == Op::reduce) NCCL_OK(ncclReduce(x, x, n, ncclFloat32, ncclSum, 0, raw.comms[k], raw.handles[k]));
            if (op == Op::all_reduce) NCCL_OK(ncclAllReduce(x, x, n, ncclFloat32, ncclSum, raw.comms[k], raw.handles[k]));
          }
          NCCL_OK(ncclGroupEnd());
        };
      } else if (op == Op::broadcast) {
        w.run = [=] { cush::broadcast(*r, 0, o); };
      } else if (op == Op::reduce) {
        w.run = [=] { cush::reduce(*r, cush::ReduceOp::sum, 0, o); };
      } else {
        w.run = [=] { cush::all_reduce(*r, cush::ReduceOp::sum, o); };
      }
      return w;
    }
    case Op::scatter:
    case Op::gather:
    case Op::all_gather: {
      // `bytes` is the whole buffer; each GPU holds one piece of it.
      const std::size_t piece = bytes / p;
      auto parts = plan<Byte>(gpus(), piece * p);
      auto whole = op == Op::all_gather ? plan<Byte>(gpus(), piece * p, rep) : plan<Byte>({gpus()[0]}, piece * p);
      w.keep = {parts, whole};
      w.streams = is_raw ? raw.handles : timing_streams(*parts, *whole);
      if (is_raw) {
        std::shared_ptr<PeerOrder> order;  // raw_peer only: GPU 0 to each GPU, each to GPU 0, or all pairs
        if (!nccl) {
          std::vector<Link> links;
          if (op == Op::all_gather) {
            links = all_pairs();
          } else {
            for (std::size_t k = 1; k < p; ++k) links.push_back(op == Op::scatter ? Link{0, k} : Link{k, 0});
          }
          order = std::make_shared<PeerOrder>(links, raw.handles);
          w.keep.push_back(order);
        }
        w.run = [=, &raw] {
          if (nccl && op == Op::all_gather) {
            NCCL_OK(ncclGroupStart());
            for (std::size_t k = 0; k < p; ++k)
              NCCL_OK(ncclAllGather(parts->segment(k).data(), whole->segment(k).data(), piece, ncclUint8, raw.comms[k],
                                    raw.handles[k]));
            NCCL_OK(ncclGroupEnd());
            return;
          }
          if (nccl) NCCL_OK(ncclGroupStart());
          else order->before();
          const std::size_t receivers = op == Op::all_gather ? p : 1;
          for (std::size_t to = 0; to < receivers; ++to)
            for (std::size_t k = 0; k < p; ++k) {
              Byte* part = parts->segment(k).data();
              Byte* slot = whole->segment(to).data() + k * piece;
              const bool down = op == Op::scatter;  // whole -> parts
              const std::size_t s = down ? to : k;  // source GPU
              const std::size_t d = down ? k : to;
              if (nccl) {
                if (s == d) {
                  CUSH_CUDA_CHECK(cudaMemcpyAsync(down ? part : slot, down ? slot : part, piece, cudaMemcpyDeviceToDevice,
                                                  raw.handles[s]));
                  continue;
                }
                NCCL_OK(ncclSend(down ? slot : part, piece, ncclUint8, static_cast<int>(d), raw.comms[s], raw.handles[s]));
                NCCL_OK(ncclRecv(down ? part : slot, piece, ncclUint8, static_cast<int>(s), raw.comms[d], raw.handles[d]));
              } else {
                CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(down ? part : slot, gpus()[d], down ? slot : part, gpus()[s], piece,
                                                    raw.handles[s]));
              }
            }
          if (nccl) NCCL_OK(ncclGroupEnd());
          else order->after();
        };
      } else if (op == Op::scatter) {
        w.run = [=] { cush::scatter(*whole, *parts, 0, o); };
      } else if (op == Op::gather) {
        w.run = [=] { cush::gather(*parts, *whole, 0, o); };
      } else {
        w.run = [=] { cush::all_gather(*parts, *whole, o); };
      }
      return w;
    }
    case Op::all_to_all: {
      auto a = plan<Byte>(gpus(), bytes * p);
      auto b = plan<Byte>(gpus(), bytes * p);
      w.keep = {a, b};
      w.streams = is_raw ? raw.handles : timing_streams(*b, *a);
      const std::size_t piece = bytes / p;
      if (is_raw) {
        std::shared_ptr<PeerOrder> order;  // raw_peer only
        if (!nccl) {
          order = std::make_shared<PeerOrder>(all_pairs(), raw.handles);
          w.keep.push_back(order);
        }
        w.run = [=, &raw] {
          if (nccl) NCCL_OK(ncclGroupStart());
          else order->before();
          for (std::size_t i = 0; i < p; ++i)
            for (std::size_t j = 0; j < p; ++j) {
              Byte* from = a->segment(i).data() + j * piece;
              Byte* to = b->segment(j).data() + i * piece;
              if (nccl) {
                NCCL_OK(ncclSend(from, piece, ncclUint8, static_cast<int>(j), raw.comms[i], raw.handles[i]));
                NCCL_OK(ncclRecv(to, piece, ncclUint8, static_cast<int>(i), raw.comms[j], raw.handles[j]));
              } else {
                CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(to, gpus()[j], from, gpus()[i], piece, raw.handles[i]));
              }
            }
          if (nccl) NCCL_OK(ncclGroupEnd());
          else order->after();
        };
      } else {
        w.run = [=] { cush::all_to_all(*a, *b, o); };
      }
      return w;
    }
  }
  return w;
}

void measure(benchmark::State& state, Op op, Impl impl, std::size_t bytes) {
  Prepared w = prepare(op, impl, bytes);
  if (!w.skip.empty()) {
    state.SkipWithError(w.skip.c_str());
    return;
  }
  cush_bench::EventTimer timer(gpus());
  // Small messages: many operations per timed interval, as nccl-tests does, so that the
  // interval is not the cost of one event pair and the run is not mostly synchronization.
  const int batch = static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / std::max<std::size_t>(bytes, 1), 1, 200));
  w.run();  // warm-up: communicators, peer access, staging slots
  cush_bench::synchronize(gpus());
  cush_bench::Throughput algbw;
  double total = 0;
  double ops = 0;
  for (auto _ : state) {
    timer.start(w.streams);
    for (int k = 0; k < batch; ++k) w.run();
    const double seconds = timer.stop(w.streams);
    // The iteration's time is the whole batch (so that min_time bounds the run's length); the
    // time of one operation is the op_us counter.
    state.SetIterationTime(seconds);
    algbw.add(seconds, static_cast<double>(bytes) * batch);
    total += seconds;
    ops += batch;
  }
  algbw.report(state, "algbw");
  state.counters["op_us"] = ops > 0 ? total / ops * 1e6 : 0.0;
  state.counters["batch"] = batch;
  state.counters["busbw"] = state.counters["algbw"] * bus_factor(op, gpus().size());
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["gpus"] = static_cast<double>(gpus().size());
}

std::string label(std::size_t bytes) {
  if (bytes >= (1U << 30)) return std::to_string(bytes >> 30) + "GiB";
  if (bytes >= (1U << 20)) return std::to_string(bytes >> 20) + "MiB";
  return std::to_string(bytes >> 10) + "KiB";
}

void register_all() {
  if (gpus().size() < 2) {
    std::printf("bench_device_ops: one GPU; the GPU<->GPU operations need two or more.\n");
    return;
  }
  const std::vector<std::pair<Op, std::vector<Impl>>> table{
      {Op::copy, {Impl::raw_peer, Impl::raw_nccl, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl, Impl::cush_staged}},
      {Op::exchange, {Impl::raw_peer, Impl::raw_nccl, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl}},
      {Op::broadcast, {Impl::raw_peer, Impl::raw_nccl, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl}},
      {Op::scatter, {Impl::raw_peer, Impl::raw_nccl, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl}},
      {Op::gather, {Impl::raw_peer, Impl::raw_nccl, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl}},
      {Op::all_gather, {Impl::raw_peer, Impl::raw_nccl, Impl::raw_nccl_window, Impl::cush, Impl::cush_peer, Impl::cush_kernel,
                        Impl::cush_nccl}},
      {Op::all_to_all, {Impl::raw_peer, Impl::raw_nccl, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl, Impl::cush_staged}},
      {Op::reduce, {Impl::raw_nccl, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl}},
      {Op::all_reduce,
       {Impl::raw_nccl, Impl::raw_nccl_window, Impl::cush, Impl::cush_peer, Impl::cush_kernel, Impl::cush_nccl, Impl::cush_staged}},
  };
  // Every operation at 4 KiB x 16^k (and 1 GiB); the reductions also in between (x 4), where the
  // peer kernel's one-shot and two-shot paths and NCCL's algorithms change places.
  // Past 1 GiB (CUSH_BENCH_DEVICE_OPS_MAX_MIB above 1024) every operation at every power of two from
  // 512 MiB: the FFT's all-to-all floors at 2^27 .. 2^30 points on 2 GPUs want 512 MiB to 4 GiB.
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = 4096; bytes <= max_bytes(); bytes *= 4) sizes.push_back(bytes);
  if (max_bytes() >= (std::size_t{1} << 30) && sizes.back() != (std::size_t{1} << 30)) sizes.push_back(std::size_t{1} << 30);
  if (max_bytes() > (std::size_t{1} << 30))
    for (std::size_t bytes = std::size_t{1} << 29; bytes <= max_bytes(); bytes *= 2) sizes.push_back(bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const auto on_coarse_grid = [](std::size_t bytes) {
    return bytes > (std::size_t{256} << 20) || std::countr_zero(bytes / 4096) % 4 == 0;  // 4 KiB x 16^k, and above
  };
  for (std::size_t bytes : sizes) {
    for (const auto& [op, impls] : table) {
      if (op != Op::reduce && op != Op::all_reduce && !on_coarse_grid(bytes)) continue;
      for (Impl impl : impls) {
        const std::string n = std::string("dev/") + name(op) + "/" + name(impl) + "/" + label(bytes);
        benchmark::RegisterBenchmark(n.c_str(), [op, impl, bytes](benchmark::State& s) { measure(s, op, impl, bytes); })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(cush_bench::min_time(0.2));
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return cush_bench::run(argc, argv, "bench_device_ops", register_all); }
