// Halo exchange of a Field against a hand-written raw exchange on the same buffers, 2 GPUs.
//
// Names: halo/<impl>/<axis>/<face>/d<depth>
//   impl  peer   the message's bytes copied each way between plain buffers (cudaMemcpyPeerAsync,
//                no packing, no events): the peer-copy bandwidth the exchange is measured against
//         raw    pack kernel + cudaMemcpyPeerAsync + unpack kernel per face (a contiguous face
//                is copied directly), events between the devices, written out by hand
//         cush   Field::exchange() (strided faces packed straight into the receiver's memory)
//         async  Field::exchange_start() + exchange_finish() (the exchange's own streams)
//         staged Field::exchange() with HaloTransport::staged (pack, copy, unpack as the raw twin)
//   axis  x: the grid {2T, F, F} is split along x, so a face is F x F cells that are strided in
//         memory (packed); z: {F, F, 2T} split along z, a face is whole planes (contiguous)
//   face  F x F FP64 cells per face; depth d ghost layers (a message is d faces)
// Counters: exch_us = time of one exchange (two messages, one each way, run concurrently),
// GB/s = bytes of both messages / time.
// Environment: CUSH_BENCH_MAX_FACE caps F (default 4096).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "harness.hpp"

namespace {

using cush::Extent3;

// The raw twin's kernels: a box of a buffer with `ax` x `ay` cells per plane <-> a dense array.
// 32-bit indices, as a careful hand-written exchange would use (64-bit division would make the
// strided pack division-bound); every buffer here has fewer than 2^32 cells.
__global__ void raw_pack(const double* __restrict__ in, double* __restrict__ out, unsigned ax, unsigned ay, unsigned x0,
                         unsigned y0, unsigned z0, unsigned sx, unsigned sy, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned z = i / (sx * sy), r = i - z * sx * sy, y = r / sx, x = r - y * sx;
    out[i] = in[((z0 + z) * ay + y0 + y) * ax + x0 + x];
  }
}

__global__ void raw_unpack(const double* __restrict__ in, double* __restrict__ out, unsigned ax, unsigned ay,
                           unsigned x0, unsigned y0, unsigned z0, unsigned sx, unsigned sy, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned z = i / (sx * sy), r = i - z * sx * sy, y = r / sx, x = r - y * sx;
    out[((z0 + z) * ay + y0 + y) * ax + x0 + x] = in[i];
  }
}

#define CHECK(call) CUSH_CUDA_CHECK(call)

unsigned u(std::size_t v) { return static_cast<unsigned>(v); }

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096)); }

struct Setup {
  std::unique_ptr<cush::Field<double>> field;
  std::vector<cudaStream_t> streams;
  std::vector<int> devices;
};

// The hand-written exchange between the two blocks of `f` along `axis` (0 or 2), depth d.
class RawExchange {
 public:
  RawExchange(cush::Field<double>& f, std::size_t axis) : f_(f), axis_(axis) {
    d_ = f.grid().halo(axis);
    for (std::size_t k = 0; k < 2; ++k) {
      const cush::Block<double> b = f.block(k);
      // Face box of block k's message: owned cells along the other axes, (for z, with the x and
      // y ghosts, as cush sends them), d layers along `axis`.
      Extent3 size = b.owned().size;
      size[axis] = d_;
      if (axis == 2) {
        size[0] += 2 * b.halo()[0];
        size[1] += 2 * b.halo()[1];
      }
      size_[k] = size;
      cells_ = size[0] * size[1] * size[2];
      if (f.grid().allocated_cells(k) + 4096ULL * 256 > 0xFFFFFFFFULL) throw std::runtime_error("raw twin: block over 2^32 cells");
      events_.emplace_back(b.device());
      ready_.emplace_back(b.device());
      if (axis == 0) {
        const cush::DeviceGuard g(b.device());
        void* p = nullptr;
        CHECK(cudaMalloc(&p, cells_ * sizeof(double)));
        send_[k] = static_cast<double*>(p);
        CHECK(cudaMalloc(&p, cells_ * sizeof(double)));
        recv_[k] = static_cast<double*>(p);
      }
    }
  }
  ~RawExchange() {
    for (std::size_t k = 0; k < 2; ++k) {
      const cush::DeviceGuard g(f_.block(k).device());
      CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
      CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(send_[k]));
      CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(recv_[k]));
    }
  }
  RawExchange(const RawExchange&) = delete;
  RawExchange& operator=(const RawExchange&) = delete;

  void run() {
    const cush::Block<double> b[2] = {f_.block(0), f_.block(1)};
    // Each device's earlier work (which reads its ghosts and its receive buffer) comes first.
    for (std::size_t k = 0; k < 2; ++k) ready_[k].record(b[k].stream());
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t o = 1 - k;
      const cush::DeviceGuard g(b[k].device());
      ready_[o].wait_in(b[k].stream());
      // Block 0 sends its high face, block 1 its low face.
      const std::size_t src_layer = k == 0 ? b[k].owned().size[axis_] : d_;  // buffer coordinates
      const std::size_t dst_layer = k == 0 ? 0 : b[o].owned().size[axis_] + d_;
      if (axis_ == 0) {
        const std::size_t x0 = k == 0 ? src_layer : d_;
        raw_pack<<<blocks_for(cells_), 256, 0, b[k].stream()>>>(b[k].data(), send_[k], u(b[k].alloc()[0]), u(b[k].alloc()[1]),
                                                              u(x0), u(d_), u(d_), u(size_[k][0]), u(size_[k][1]),
                                                              u(cells_));
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyPeerAsync(recv_[o], b[o].device(), send_[k], b[k].device(), cells_ * sizeof(double), b[k].stream()));
      } else {
        const std::size_t plane = b[k].alloc()[0] * b[k].alloc()[1];
        CHECK(cudaMemcpyPeerAsync(b[o].data() + dst_layer * plane, b[o].device(), b[k].data() + src_layer * plane,
                                  b[k].device(), cells_ * sizeof(double), b[k].stream()));
      }
      events_[k].record(b[k].stream());
    }
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t o = 1 - k;  // the sender into k
      const cush::DeviceGuard g(b[k].device());
      events_[o].wait_in(b[k].stream());
      if (axis_ == 0) {
        const std::size_t x0 = k == 0 ? b[k].owned().size[0] + d_ : 0;
        raw_unpack<<<blocks_for(cells_), 256, 0, b[k].stream()>>>(recv_[k], b[k].data(), u(b[k].alloc()[0]),
                                                                u(b[k].alloc()[1]), u(x0), u(d_), u(d_), u(size_[o][0]),
                                                                u(size_[o][1]), u(cells_));
        CHECK(cudaGetLastError());
      }
    }
  }

 private:
  cush::Field<double>& f_;
  std::size_t axis_;
  std::size_t d_ = 1;
  std::size_t cells_ = 0;
  Extent3 size_[2]{};
  double* send_[2]{};
  double* recv_[2]{};
  std::vector<cush::Event> events_;
  std::vector<cush::Event> ready_;
};

std::size_t max_face() {
  return cush::detail::env::size("CUSH_BENCH_MAX_FACE");
}

enum class Impl { peer, raw, cush, async, staged };

const char* name(Impl impl) {
  switch (impl) {
    case Impl::peer: return "peer";
    case Impl::raw: return "raw";
    case Impl::cush: return "cush";
    case Impl::async: return "async";
    case Impl::staged: return "staged";
  }
  return "?";
}

void measure(benchmark::State& state, Impl impl, std::size_t axis, std::size_t face, std::size_t depth) {
  const bool raw = impl == Impl::raw;
  const std::vector<int> ids = cush_bench::all_devices();
  const std::vector<int> two{ids[0], ids[1]};
  const std::size_t thick = std::max<std::size_t>(2 * depth, 4);
  const Extent3 extent = axis == 0 ? Extent3{2 * thick, face, face} : Extent3{face, face, 2 * thick};
  cush::GridOptions o;
  o.halo = depth;
  o.blocks = axis == 0 ? Extent3{2, 1, 1} : Extent3{1, 1, 2};
  cush::Field<double> f(cush::DeviceSet(two), extent, 3, o);
  if (impl == Impl::staged) f.set_halo_transport(cush::HaloTransport::staged);
  std::unique_ptr<RawExchange> twin;
  if (raw) twin = std::make_unique<RawExchange>(f, axis);
  const std::size_t message_cells = axis == 0 ? depth * face * face : depth * (face + 2 * depth) * (face + 2 * depth);
  // peer: the message's bytes copied each way between two plain buffers, nothing else.
  std::vector<cush::DeviceBuffer> plain;
  if (impl == Impl::peer)
    for (int id : {two[0], two[1], two[0], two[1]}) plain.emplace_back(id, message_cells * sizeof(double));
  const auto once = [&] {
    if (impl == Impl::peer) {
      const std::size_t n = message_cells * sizeof(double);
      CHECK(cudaMemcpyPeerAsync(plain[1].data(), two[1], plain[0].data(), two[0], n, f.block(0).stream()));
      CHECK(cudaMemcpyPeerAsync(plain[2].data(), two[0], plain[3].data(), two[1], n, f.block(1).stream()));
    } else if (raw) {
      twin->run();
    } else if (impl == Impl::async) {
      f.exchange_start();
      f.exchange_finish();
    } else {
      f.exchange();
    }
  };
  std::vector<cudaStream_t> streams{f.block(0).stream(), f.block(1).stream()};
  const double bytes = 2.0 * static_cast<double>(message_cells * sizeof(double));
  const int batch = static_cast<int>(std::clamp<double>((256.0 * (1 << 20)) / bytes, 1, 100));
  once();
  cush_bench::synchronize(two);
  cush_bench::EventTimer timer(two);
  cush_bench::Throughput rate;
  double total = 0;
  double count = 0;
  for (auto _ : state) {
    timer.start(streams);
    for (int k = 0; k < batch; ++k) once();
    const double seconds = timer.stop(streams);
    state.SetIterationTime(seconds);
    rate.add(seconds, bytes * batch);
    total += seconds;
    count += batch;
  }
  rate.report(state, "GB/s");
  state.counters["exch_us"] = count > 0 ? total / count * 1e6 : 0.0;
  state.counters["message_bytes"] = static_cast<double>(message_cells * sizeof(double));
  state.counters["batch"] = batch;
}

void register_all() {
  if (cush_bench::all_devices().size() < 2) {
    std::printf("bench_halo: one GPU; the exchange benchmarks need two.\n");
    return;
  }
  for (std::size_t face : {std::size_t{420}, std::size_t{1024}, std::size_t{2048}, std::size_t{2896}, std::size_t{4096}}) {
    if (face > max_face()) continue;
    for (std::size_t depth : {std::size_t{1}, std::size_t{2}, std::size_t{4}})
      for (std::size_t axis : {std::size_t{0}, std::size_t{2}})
        for (Impl impl : {Impl::peer, Impl::raw, Impl::cush, Impl::async, Impl::staged}) {
          const std::string n = std::string("halo/") + name(impl) + "/" + (axis == 0 ? "x/" : "z/") +
                                std::to_string(face) + "/d" + std::to_string(depth);
          benchmark::RegisterBenchmark(n.c_str(), [=](benchmark::State& s) { measure(s, impl, axis, face, depth); })
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond)
              ->MinTime(cush_bench::min_time(0.2));
        }
  }
}

}  // namespace

int main(int argc, char** argv) { return cush_bench::run(argc, argv, "bench_halo", register_all); }
