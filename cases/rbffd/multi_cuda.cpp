// Case "rbffd", multi-GPU raw CUDA: what a CUDA programmer writes without cush. Each GPU owns a
// latitude slab of rows and builds its own sets: Q (owned), R (ghosts: the columns of Q's rows
// outside Q, grouped by owner), B (rows reading a ghost), O (owned nodes another GPU reads); its
// local order [Q\(B+O)] [O\B] [O&B] [B\O] [R by owner] (interior and boundary rows are then ranges);
// the map from global to local ids; its rows with local columns. For every pair (g, h) with
// ghosts of h owned by g, an index list on g and a gather kernel that stores the values straight
// into h's ghosts over peer access (else into a buffer on g, then cudaMemcpyPeerAsync). Per stage:
// each GPU records that its input is ready; its exchange stream waits for that and for each
// receiver's readiness (the receiver's previous stage no longer reads those ghosts), gathers, and
// records that it has sent; the rows that read no ghost run meanwhile on the main stream (overlap),
// which waits for every sender before the boundary rows (split: their owned-column entries run
// during the exchange too, their ghost-column entries after it). With Options::graph one step is captured
// into a CUDA graph (GPU 0's main stream forks to the others and joins them back) and replayed.

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "cush/error.hpp"
#include "rbffd.hpp"

namespace cases {
namespace rbffd {


// One GPU's part. Local index l < owned is an owned row; ghosts follow, grouped by owner.
struct MultiCuda::Gpu {
  int device = 0;
  std::size_t lo = 0, hi = 0;  // owned global rows
  std::size_t owned = 0, interior = 0, size = 0;
  std::vector<std::int64_t> global;  // local -> global
  cudaStream_t main = nullptr, side = nullptr;
  cudaEvent_t ready = nullptr, sent = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;  // Options::graph: into and out of the step's graph
  double* x[2] = {nullptr, nullptr};
  double* u = nullptr;
  double* acc = nullptr;
  std::unique_ptr<DeviceEll> a;
  std::unique_ptr<DeviceEll> own, ghosts;  // Schedule::split: boundary rows' owned / ghost columns
  double* partial = nullptr;               // and their owned columns' sums
  struct Send {  // to GPU `to`: x[index[i]] -> to's ghosts [at, at + count)
    std::size_t to = 0, at = 0, count = 0;
    std::int32_t* index = nullptr;
    double* buffer = nullptr;  // without peer access: gathered here, then copied
  };
  std::vector<Send> sends;
  std::vector<std::size_t> senders;  // GPUs that fill our ghosts
  double* staging = nullptr;         // download: owned values in local order

  ~Gpu() {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
    if (main != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(main));
    if (side != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(side));
    for (Send& s : sends) {
      CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(s.index));
      CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(s.buffer));
    }
    for (double* b : {x[0], x[1], u, acc, partial}) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(b));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(staging));
    for (cudaEvent_t e : {ready, sent, fork, join})
      if (e != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
    for (cudaStream_t s : {main, side})
      if (s != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s));
  }
};

MultiCuda::MultiCuda(const Problem& p, const Devices& gpus, Options options)
    : n_(p.a ? p.a->rows() : 0), dt_(p.dt), options_(options) {
  if (p.a == nullptr || !(p.dt > 0)) throw std::invalid_argument("cases::rbffd: a problem needs a matrix and dt > 0");
  const Matrix& a = *p.a;
  const std::size_t count = gpus.cuda.size();
  const auto owner = [&](std::int64_t j) {  // the GPU whose slab holds node j
    std::size_t g = std::min(count - 1, static_cast<std::size_t>(j) * count / n_);
    while (static_cast<std::size_t>(j) < g * n_ / count) --g;
    while (static_cast<std::size_t>(j) >= (g + 1) * n_ / count) ++g;
    return g;
  };
  // The sets and local order of every GPU.
  std::vector<std::vector<std::int64_t>> ghosts(count);  // R, sorted: by owner, then id (owners are ranges)
  std::vector<std::vector<char>> is_sent(count);         // O, by owned row
  for (std::size_t g = 0; g < count; ++g) {
    auto gpu = std::make_unique<Gpu>();
    gpu->device = gpus.cuda[g];
    gpu->lo = g * n_ / count;
    gpu->hi = (g + 1) * n_ / count;
    gpus_.push_back(std::move(gpu));
    is_sent[g].assign(gpus_[g]->hi - gpus_[g]->lo, 0);
  }
  for (std::size_t g = 0; g < count; ++g) {
    Gpu& G = *gpus_[g];
    for (std::size_t i = G.lo; i < G.hi; ++i)
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
        const std::int64_t j = a.cols[static_cast<std::size_t>(e)];
        if (static_cast<std::size_t>(j) >= G.lo && static_cast<std::size_t>(j) < G.hi) continue;
        ghosts[g].push_back(j);
        const std::size_t h = owner(j);
        is_sent[h][static_cast<std::size_t>(j) - gpus_[h]->lo] = 1;
      }
    std::sort(ghosts[g].begin(), ghosts[g].end());
    ghosts[g].erase(std::unique(ghosts[g].begin(), ghosts[g].end()), ghosts[g].end());
  }
  std::vector<std::vector<std::int32_t>> local_of(count, std::vector<std::int32_t>(n_, -1));  // global -> local
  for (std::size_t g = 0; g < count; ++g) {
    Gpu& G = *gpus_[g];
    std::vector<char> boundary(G.hi - G.lo, 0);
    for (std::size_t i = G.lo; i < G.hi; ++i)
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
        const auto j = static_cast<std::size_t>(a.cols[static_cast<std::size_t>(e)]);
        if (j < G.lo || j >= G.hi) boundary[i - G.lo] = 1;
      }
    // Groups: 0 = neither, 1 = sent only, 2 = sent and boundary, 3 = boundary only.
    for (int group = 0; group < 4; ++group) {
      for (std::size_t i = G.lo; i < G.hi; ++i) {
        const bool b = boundary[i - G.lo] != 0, o = is_sent[g][i - G.lo] != 0;
        if ((group == 0 && !b && !o) || (group == 1 && o && !b) || (group == 2 && o && b) || (group == 3 && b && !o))
          G.global.push_back(static_cast<std::int64_t>(i));
      }
      if (group == 1) G.interior = G.global.size();
    }
    G.owned = G.global.size();
    G.global.insert(G.global.end(), ghosts[g].begin(), ghosts[g].end());
    G.size = G.global.size();
    for (std::size_t l = 0; l < G.size; ++l) local_of[g][static_cast<std::size_t>(G.global[l])] = static_cast<std::int32_t>(l);
  }
  // Per GPU: streams, events, buffers, its rows with local columns; then the sends.
  for (std::size_t g = 0; g < count; ++g) {
    Gpu& G = *gpus_[g];
    CUSH_CUDA_CHECK(cudaSetDevice(G.device));
    CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&G.main, cudaStreamNonBlocking));
    CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&G.side, cudaStreamNonBlocking));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&G.ready, cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&G.sent, cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&G.fork, cudaEventDisableTiming));
    CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&G.join, cudaEventDisableTiming));
    for (double** b : {&G.x[0], &G.x[1]}) CUSH_CUDA_CHECK(cudaMalloc(b, G.size * sizeof(double)));
    for (double** b : {&G.u, &G.acc}) CUSH_CUDA_CHECK(cudaMalloc(b, G.owned * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMallocHost(&G.staging, G.owned * sizeof(double)));
    std::vector<std::int64_t> row_ptr{0};
    std::vector<std::int32_t> cols;
    std::vector<double> values;
    for (std::size_t r = 0; r < G.owned; ++r) {
      const auto i = static_cast<std::size_t>(G.global[r]);
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
        cols.push_back(local_of[g][static_cast<std::size_t>(a.cols[static_cast<std::size_t>(e)])]);
        values.push_back(a.values[static_cast<std::size_t>(e)]);
      }
      row_ptr.push_back(static_cast<std::int64_t>(cols.size()));
    }
    G.a = std::make_unique<DeviceEll>(ell_from_csr(row_ptr, cols, values), G.device);
    if (options.schedule == Schedule::split) {  // the boundary rows split by column: owned < G.owned
      std::vector<std::int64_t> ptr[2] = {{0}, {0}};
      std::vector<std::int32_t> c[2];
      std::vector<double> v[2];
      for (std::size_t r = 0; r < G.owned; ++r) {
        for (auto e = static_cast<std::size_t>(row_ptr[r]); e < static_cast<std::size_t>(row_ptr[r + 1]); ++e) {
          const int half = static_cast<std::size_t>(cols[e]) < G.owned ? 0 : 1;
          c[half].push_back(cols[e]);
          v[half].push_back(values[e]);
        }
        for (int half = 0; half < 2; ++half) ptr[half].push_back(static_cast<std::int64_t>(c[half].size()));
      }
      const std::size_t edge = G.owned - G.interior;
      G.own = std::make_unique<DeviceEll>(ell_of_rows(ptr[0], c[0], v[0], G.interior, edge), G.device);
      G.ghosts = std::make_unique<DeviceEll>(ell_of_rows(ptr[1], c[1], v[1], G.interior, edge), G.device);
      CUSH_CUDA_CHECK(cudaMalloc(&G.partial, std::max<std::size_t>(edge, 1) * sizeof(double)));
    }
  }
  for (std::size_t h = 0; h < count; ++h) {  // receiver
    const Gpu& H = *gpus_[h];
    for (std::size_t first = H.owned; first < H.size;) {
      const std::size_t g = owner(H.global[first]);
      std::size_t last = first;
      while (last < H.size && owner(H.global[last]) == g) ++last;
      Gpu& G = *gpus_[g];
      std::vector<std::int32_t> index;
      for (std::size_t l = first; l < last; ++l) index.push_back(local_of[g][static_cast<std::size_t>(H.global[l])]);
      Gpu::Send s{h, first, last - first, nullptr, nullptr};
      CUSH_CUDA_CHECK(cudaSetDevice(G.device));
      CUSH_CUDA_CHECK(cudaMalloc(&s.index, index.size() * sizeof(std::int32_t)));
      CUSH_CUDA_CHECK(cudaMemcpy(s.index, index.data(), index.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
      int peer = 1;
      if (G.device != H.device) {
        CUSH_CUDA_CHECK(cudaDeviceCanAccessPeer(&peer, G.device, H.device));
        if (peer != 0) {
          const cudaError_t e = cudaDeviceEnablePeerAccess(H.device, 0);
          if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
          else CUSH_CUDA_CHECK(e);
        }
      }
      if (peer == 0) CUSH_CUDA_CHECK(cudaMalloc(&s.buffer, s.count * sizeof(double)));
      G.sends.push_back(s);
      gpus_[h]->senders.push_back(g);
      first = last;
    }
  }
  for (const auto& G : gpus_) {  // the index lists came from pageable memory
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

MultiCuda::~MultiCuda() {
  if (step_ == nullptr) return;
  for (const auto& G : gpus_) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(G->main));
  }
  CUSH_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(step_));
}

void MultiCuda::upload(const double* u0) {
  for (const auto& G : gpus_) {
    for (std::size_t r = 0; r < G->owned; ++r) G->staging[r] = u0[G->global[r]];
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(G->u, G->staging, G->owned * sizeof(double), cudaMemcpyHostToDevice, G->main));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(G->x[current_], G->u, G->owned * sizeof(double), cudaMemcpyDeviceToDevice, G->main));
  }
  wait();  // the staging buffers are reused by download
}

void MultiCuda::exchange_start(std::size_t input) {
  for (const auto& G : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaEventRecord(G->ready, G->main));
  }
  for (const auto& G : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(G->side, G->ready, 0));
    for (const Gpu::Send& s : G->sends) {
      const Gpu& H = *gpus_[s.to];
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(G->side, H.ready, 0));
      double* ghosts = H.x[input] + s.at;
      launch_gather(G->x[input], s.index, s.count, s.buffer != nullptr ? s.buffer : ghosts, G->side);
      if (s.buffer != nullptr)
        CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(ghosts, H.device, s.buffer, G->device, s.count * sizeof(double), G->side));
    }
    CUSH_CUDA_CHECK(cudaEventRecord(G->sent, G->side));
  }
}

void MultiCuda::exchange_finish() {
  for (const auto& G : gpus_)
    for (std::size_t g : G->senders) CUSH_CUDA_CHECK(cudaStreamWaitEvent(G->main, gpus_[g]->sent, 0));
}

void MultiCuda::stage(int stage) {
  const auto rows = [&](const Gpu& G, std::size_t first, std::size_t count) {
    CUSH_CUDA_CHECK(cudaSetDevice(G.device));
    launch_stage(G.a->view(), first, count, G.x[current_], G.x[1 - current_], G.u, G.acc, stage, dt_, G.main);
  };
  const bool split = options_.schedule == Schedule::split;
  exchange_start(current_);
  if (options_.schedule != Schedule::bulk)
    for (const auto& G : gpus_) {
      rows(*G, 0, G->interior);
      if (split) launch_partial(G->own->view(), G->x[current_], G->partial, G->main);
    }
  exchange_finish();
  for (const auto& G : gpus_) {
    if (split) {
      CUSH_CUDA_CHECK(cudaSetDevice(G->device));
      launch_finish_stage(G->ghosts->view(), G->interior, G->x[current_], G->partial, G->x[1 - current_], G->u, G->acc, stage,
                          dt_, G->main);
      continue;
    }
    const std::size_t first = options_.schedule == Schedule::overlap ? G->interior : 0;
    rows(*G, first, G->owned - first);
  }
  current_ = 1 - current_;
}

// One step into a graph: the other GPUs' main streams join GPU 0's capture and join back.
void MultiCuda::capture() {
  const Gpu& first = *gpus_[0];
  CUSH_CUDA_CHECK(cudaSetDevice(first.device));
  CUSH_CUDA_CHECK(cudaStreamBeginCapture(first.main, cudaStreamCaptureModeRelaxed));
  CUSH_CUDA_CHECK(cudaEventRecord(first.fork, first.main));
  for (const auto& G : gpus_) CUSH_CUDA_CHECK(cudaStreamWaitEvent(G->main, first.fork, 0));
  for (int s = 0; s < 4; ++s) stage(s);
  for (const auto& G : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaEventRecord(G->join, G->main));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(first.main, G->join, 0));
  }
  CUSH_CUDA_CHECK(cudaSetDevice(first.device));
  cudaGraph_t graph = nullptr;
  CUSH_CUDA_CHECK(cudaStreamEndCapture(first.main, &graph));
  CUSH_CUDA_CHECK(cudaGraphInstantiate(&step_, graph, 0));
  CUSH_CUDA_CHECK(cudaGraphDestroy(graph));
}

// The graph after the work already on every main stream, and before what follows on them.
void MultiCuda::launch() {
  const Gpu& first = *gpus_[0];
  for (const auto& G : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaEventRecord(G->fork, G->main));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(first.main, G->fork, 0));
  }
  CUSH_CUDA_CHECK(cudaSetDevice(first.device));
  CUSH_CUDA_CHECK(cudaGraphLaunch(step_, first.main));
  CUSH_CUDA_CHECK(cudaEventRecord(first.join, first.main));
  for (const auto& G : gpus_) CUSH_CUDA_CHECK(cudaStreamWaitEvent(G->main, first.join, 0));
}

void MultiCuda::run(std::size_t steps) {
  if (options_.graph && step_ == nullptr) capture();
  for (std::size_t s = 0; s < steps; ++s) {
    if (options_.graph) {
      launch();
    } else {
      for (int k = 0; k < 4; ++k) stage(k);
    }
  }
}

void MultiCuda::exchange() {
  exchange_start(current_);
  exchange_finish();
}

void MultiCuda::wait() {
  for (const auto& G : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(G->main));
  }
}

void MultiCuda::download(double* u) {
  for (const auto& G : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(G->device));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(G->staging, G->u, G->owned * sizeof(double), cudaMemcpyDeviceToHost, G->main));
  }
  wait();
  for (const auto& G : gpus_)
    for (std::size_t r = 0; r < G->owned; ++r) u[G->global[r]] = G->staging[r];
}

}  // namespace rbffd
}  // namespace cases
