// Case "matmul" in bench_cases: C = A B, the three variants and cuBLASXt (cases/matmul).
//
// Names (time: wall clock around the call; counter GFLOP/s = 2 m n p / t):
//   case/matmul/<variant>/<g>gpu/<k>        FP32, end to end from pinned host memory (upload,
//   case/matmul_f64/<variant>/<g>gpu/<k>    FP64,  multiply, download, free); the seed's shapes:
//                                           A 400k x 800k, B 800k x 400k (seed 002 §2.6.3)
//   case/matmul_weak/<variant>/<g>gpu/<r>   FP32 end to end, A 1000r x 8000, B 8000 x 8000: the
//                                           work per GPU is fixed when r grows with the GPU count
//   resident/matmul/<variant>/<g>gpu/<k>    FP32, multiply() on data already on the GPUs (one row
//                                           block: one cuBLAS call per GPU)
//   xt/matmul/<block>/<g>gpu/<k>            cuBLASXt, FP32, tiles of block x block, end to end
// Environment: CUSH_BENCH_MATMUL_MAX_K caps k (default 40).

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "harness.hpp"
#include "matmul.hpp"

namespace {

using cases::matmul::Dims;

std::size_t max_k() {
  return cush::detail::env::size("CUSH_BENCH_MATMUL_MAX_K");
}

// Pinned A, B and C large enough for every registered shape of type T, filled once with small
// exact values (multiples of 1/8 in [-1, 1]) so that spot checks can demand tight agreement.
template <class T>
struct Buffers {
  cush::PinnedBuffer<T> a, b, c;
};

template <class T>
Buffers<T>& buffers(std::size_t a_elems, std::size_t b_elems, std::size_t c_elems) {
  static Buffers<T> buf;
  if (buf.a.size() < a_elems) {
    buf.a = cush::PinnedBuffer<T>(a_elems);
    for (std::size_t i = 0; i < a_elems; ++i) buf.a[i] = static_cast<T>(static_cast<int>(i % 17) - 8) / T(8);
  }
  if (buf.b.size() < b_elems) {
    buf.b = cush::PinnedBuffer<T>(b_elems);
    for (std::size_t i = 0; i < b_elems; ++i) buf.b[i] = static_cast<T>(static_cast<int>(i % 13) - 6) / T(8);
  }
  if (buf.c.size() < c_elems) buf.c = cush::PinnedBuffer<T>(c_elems);
  return buf;
}

template <class T>
Buffers<T>& buffers_for(Dims d) {
  return buffers<T>(d.m * d.n, d.n * d.p, d.m * d.p);
}

// A few elements of C against host dot products (relative error, FP32 accumulation in cuBLAS).
template <class T>
bool spot_check(const Buffers<T>& buf, Dims d) {
  for (std::size_t s = 0; s < 7; ++s) {
    const std::size_t i = (s * 7919) % d.m;
    const std::size_t j = (s * 104729) % d.p;
    double ref = 0;
    double mag = 0;
    for (std::size_t k = 0; k < d.n; ++k) {
      ref += static_cast<double>(buf.a[i * d.n + k]) * static_cast<double>(buf.b[k * d.p + j]);
      mag += std::fabs(static_cast<double>(buf.a[i * d.n + k]) * static_cast<double>(buf.b[k * d.p + j]));
    }
    const double eps = sizeof(T) == 4 ? 1.2e-7 : 2.3e-16;
    if (std::fabs(static_cast<double>(buf.c[i * d.p + j]) - ref) > 2.0 * static_cast<double>(d.n) * eps * mag + 1e-12)
      return false;
  }
  return true;
}

// Times `product` (after one untimed call), then checks C with `finish` done: GFLOP/s, gpus.
template <class T, class Product, class Finish>
void timed(benchmark::State& state, Dims d, int gpus, Buffers<T>& buf, Product product, Finish finish) {
  product();  // warm-up
  cush_bench::WallTimer timer;
  cush_bench::Throughput rate;
  for (auto _ : state) {
    timer.start();
    product();
    const double s = timer.stop();
    state.SetIterationTime(s);
    rate.add(s, cases::matmul::flops(d));
  }
  finish();
  if (!spot_check(buf, d)) state.SkipWithError("wrong result");
  rate.report(state, "GFLOP/s");
  state.counters["gpus"] = gpus;
}

template <template <class> class V, class T>
void end_to_end(benchmark::State& state, Dims d, int gpus) {
  const cases::Devices devices = cases::Devices::first(gpus);
  Buffers<T>& buf = buffers_for<T>(d);
  timed(
      state, d, gpus, buf, [&] { cases::matmul::multiply<V>(buf.a.data(), buf.b.data(), buf.c.data(), d, devices); },
      [] {});
}

template <template <class> class V>
void resident(benchmark::State& state, Dims d, int gpus) {
  Buffers<float>& buf = buffers_for<float>(d);
  V<float> v(d, cases::Devices::first(gpus), 1);  // one row block: one cuBLAS call per GPU
  v.run(buf.a.data(), buf.b.data(), buf.c.data());  // uploads A and B
  timed(
      state, d, gpus, buf,
      [&] {
        v.multiply();
        v.wait();
      },
      [&] { v.download(buf.c.data()); });
}

template <class T>
void xt(benchmark::State& state, Dims d, int gpus, int block) {
  Buffers<T>& buf = buffers_for<T>(d);
  cases::matmul::Xt<T> lib(cases::Devices::first(gpus), block);
  timed(state, d, gpus, buf, [&] { lib.multiply(buf.a.data(), buf.b.data(), buf.c.data(), d); }, [] {});
}

std::string gpu_part(int g) { return "/" + std::to_string(g) + "gpu/"; }

template <class T>
void add_variants(const std::string& family, int available, Dims d, const std::string& size) {
  cush_bench::add_timed("case/" + family + "/single" + gpu_part(1) + size,
      [d](benchmark::State& s) { end_to_end<cases::matmul::Single, T>(s, d, 1); });
  for (int g = 1; g <= available; ++g) {
    cush_bench::add_timed("case/" + family + "/multi_cuda" + gpu_part(g) + size,
        [d, g](benchmark::State& s) { end_to_end<cases::matmul::MultiCuda, T>(s, d, g); });
    cush_bench::add_timed("case/" + family + "/multi_cush" + gpu_part(g) + size,
        [d, g](benchmark::State& s) { end_to_end<cases::matmul::MultiCush, T>(s, d, g); });
  }
}

}  // namespace

void register_matmul() {
  const int available = cush_bench::gpus_for_rows();
  const std::vector<std::size_t> ks = {1, 2, 4, 8, 12, 16, 20, 32, 40};
  for (std::size_t k : ks)
    if (k <= max_k()) add_variants<float>("matmul", available, cases::matmul::seed_dims(k), std::to_string(k));
  for (std::size_t k : {4, 12, 20, 40})
    if (k <= max_k()) add_variants<double>("matmul_f64", available, cases::matmul::seed_dims(k), std::to_string(k));
  for (std::size_t r : {2, 4, 8, 16})
    if (r <= max_k()) add_variants<float>("matmul_weak", available, Dims{1000 * r, 8000, 8000}, std::to_string(r));
  for (std::size_t k : ks) {
    if (k > max_k()) continue;
    const Dims d = cases::matmul::seed_dims(k);
    const std::string size = std::to_string(k);
    cush_bench::add_timed("resident/matmul/single" + gpu_part(1) + size,
        [d](benchmark::State& s) { resident<cases::matmul::Single>(s, d, 1); });
    for (int g = 1; g <= available; ++g) {
      cush_bench::add_timed("resident/matmul/multi_cuda" + gpu_part(g) + size,
          [d, g](benchmark::State& s) { resident<cases::matmul::MultiCuda>(s, d, g); });
      cush_bench::add_timed("resident/matmul/multi_cush" + gpu_part(g) + size,
          [d, g](benchmark::State& s) { resident<cases::matmul::MultiCush>(s, d, g); });
    }
  }
  // cuBLASXt: the tile size sweep at k = 20, then the usual tuned tile (docs/results/peers.md) at every k.
  for (int g = 1; g <= available; ++g) {
    for (int block : {1024, 2048, 4096, 8192})
      if (20 <= max_k())
        cush_bench::add_timed("xt/matmul/" + std::to_string(block) + gpu_part(g) + "20",
            [g, block](benchmark::State& s) { xt<float>(s, cases::matmul::seed_dims(20), g, block); });
    for (std::size_t k : ks)
      if (k <= max_k() && k != 20)
        cush_bench::add_timed("xt/matmul/4096" + gpu_part(g) + std::to_string(k),
            [g, k](benchmark::State& s) { xt<float>(s, cases::matmul::seed_dims(k), g, 4096); });
    // FP64 at the goal's k (the matmul_f64 rows above), tiles 2048 and 4096.
    for (std::size_t k : {20, 40})
      for (int block : {2048, 4096})
        if (k <= max_k())
          cush_bench::add_timed("xt/matmul_f64/" + std::to_string(block) + gpu_part(g) + std::to_string(k),
              [g, k, block](benchmark::State& s) { xt<double>(s, cases::matmul::seed_dims(k), g, block); });
  }
}
