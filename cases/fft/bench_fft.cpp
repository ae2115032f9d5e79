// Case "fft" in bench_cases: the variants of cases/fft, forward transforms.
//
// Names (time: wall clock of one forward transform on data already on the GPUs, unless e2e):
//   case/fft_<mode>/<variant>/<g>gpu/<e>        strong: N = 2^e in total (the seed's 10 .. 25, and 26 .. 30)
//   case/fft_weak_<mode>/<variant>/<g>gpu/<e>   weak: 2^e points per GPU, N = 2^e g
//   case/fft_e2e_<mode>/<variant>/<g>gpu/<e>    end to end: pinned host -> GPUs, forward, -> host
//   case/fft_<mode>/<variant>/<g>vgpu/<e>       g virtual GPUs on one GPU (only when the process runs
//                                               with CUSH_VIRTUAL_GPUS): the same algorithmic work as
//                                               g GPUs, on one GPU's memory; not a multi-GPU speed
//   case/fft_conv_<order>/<variant>/<g>gpu/<e>  a circular convolution (convolve(): forward, product,
//                                               inverse) of a signal kept in <order> (natural,
//                                               transposed) with a kernel spectrum made once; the
//                                               kernel is a unit impulse, so the data stays bounded
//   case/fft_<mode>_chunks<c>[_staged]/<variant>/<g>gpu/<e>  the multi-GPU variants with their row
//                                               FFTs and transposes pipelined in c chunks a GPU
//                                               (Options::chunks; the rows above take the automatic
//                                               count), staged: through copy engines (Options::staged);
//                                               <g>vgpu: on g virtual GPUs of one GPU (with CUSH_VIRTUAL_GPUS)
//   part/fft/<piece>/1gpu/<e>                   the pieces of the cush variant on one GPU:
//                                               rows_n1, rows_n2 (the two batched cuFFT stages),
//                                               transpose, transpose_twiddle (cush::transpose, N points),
//                                               cols_n1, rows_n2_out_t (the strided layouts, bench_fft_pieces.cu),
//                                               rows_len<l> (2^28 points as rows of length 2^l)
// mode: natural (natural in and out: 3 all-to-alls), transposed_out (2), transposed (1);
// variant: single (one cuFFT call, natural only, 1 GPU), multi_cuda, multi_cush, cufftxt (natural
// only, 2, 4, 8 GPUs). Counters: GFLOP/s (5 N log2 N / t), gpus. Rows whose buffers do not fit the
// GPUs' free memory are skipped. A row sets its variant up once (plans, data loaded) and keeps it
// for all its calls (cush_bench::kept): setting up 2^28 points took longer than the transforms.

#include <cuda_runtime.h>

#include <bit>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "cush/cush.hpp"
#include "cush/error.hpp"
#include "fft.hpp"
#include "harness.hpp"

void fft_pieces(benchmark::State& state, std::size_t n, int piece, std::size_t length);  // bench_fft_pieces.cu

namespace {

namespace fft = cases::fft;
using fft::Order;

struct Mode {
  const char* name;
  Order in, out;
};
const Mode kModes[] = {{"natural", Order::natural, Order::natural},
                       {"transposed_out", Order::natural, Order::transposed},
                       {"transposed", Order::transposed, Order::transposed}};

// Whether `buffers` times the data fits, spread over the physical GPUs the devices use (all on
// GPU 0 with virtual GPUs), with 1 GiB to spare on each.
bool fits(std::size_t n, const cases::Devices& gpus, double buffers) {
  const int physical = cush::virtual_gpus_active() ? 1 : gpus.count();
  const double per_gpu = buffers * static_cast<double>(n * sizeof(fft::Complex)) / physical;
  for (int g = 0; g < physical; ++g) {
    std::size_t free = 0, total = 0;
    CUSH_CUDA_CHECK(cudaSetDevice(g));
    CUSH_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (per_gpu + static_cast<double>(std::size_t{1} << 30) > static_cast<double>(free)) return false;
  }
  return true;
}

template <class V>
double buffers() {
  if constexpr (std::is_same_v<V, fft::Xt>) return 5.0;  // two descriptors and a work area of 3x the share
  return 3.0;                                             // two buffers and the work area (single: cuFFT's)
}

// A variant with its data loaded (and, end to end, the pinned host buffer), kept across the
// calls of one row (cush_bench::kept).
template <class V>
struct Loaded {
  std::unique_ptr<V> v;
  fft::Complex* host = nullptr;
  ~Loaded() {
    if (host != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(host));  // a destructor: reported, not thrown
  }
};

template <class V>
void transforms(benchmark::State& state, std::size_t n, cases::Devices gpus, Mode m, bool e2e, std::size_t chunks = 0,
                bool staged = false) {
  // CUSH_BENCH_FFT_LOG2_N1 picks the first factor where it suits N and the GPU count.
  const std::size_t log2_n1 = cush::detail::env::size("CUSH_BENCH_FFT_LOG2_N1");
  std::size_t n1 = 0;
  if (log2_n1 > 0 && log2_n1 < 40 && (std::size_t{1} << log2_n1) * 2 <= n) {
    n1 = std::size_t{1} << log2_n1;
    const auto k = static_cast<std::size_t>(gpus.count());
    if (n1 % k != 0 || (n / n1) % k != 0) n1 = 0;
  }
  const std::string key = std::string(typeid(V).name()) + " " + std::to_string(n) + " " + std::to_string(gpus.count()) +
                          " " + m.name + " " + std::to_string(e2e) + " " + std::to_string(n1) + " " + std::to_string(chunks) + " " + std::to_string(staged);
  Loaded<V>* loaded = cush_bench::kept<Loaded<V>>(key, [&]() -> std::unique_ptr<Loaded<V>> {
    if (!fits(n, gpus, buffers<V>())) return nullptr;
    auto made = std::make_unique<Loaded<V>>();
    made->v = std::make_unique<V>(n, gpus, fft::Options{n1, chunks, staged});
    if (e2e) CUSH_CUDA_CHECK(cudaMallocHost(&made->host, n * sizeof(fft::Complex)));
    std::vector<fft::Complex> x(e2e ? 0 : n);
    for (std::size_t i = 0; i < n; ++i) (e2e ? made->host : x.data())[i] = fft::Complex{static_cast<float>(i % 7), 0.5f};
    made->v->load(e2e ? made->host : x.data());
    // load() is asynchronous: it reads x (pageable memory, staged on host threads) after it returns,
    // so it must end before x does (without this wait the 1-GPU rows crashed on 4 x H200).
    made->v->wait();
    return made;
  });
  if (loaded == nullptr) {
    state.SkipWithError("skipped: the buffers do not fit the GPUs' free memory");
    return;
  }
  V& v = *loaded->v;
  fft::Complex* host = loaded->host;
  v.forward(m.in, m.out);  // warm-up
  v.wait();
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    if (e2e) v.load(host);
    v.forward(m.in, m.out);
    if (e2e) v.store(host);
    v.wait();
    const double s = timer.stop();
    state.SetIterationTime(s);
    seconds += s;
  }
  state.counters["GFLOP/s"] = fft::flops(n) * static_cast<double>(state.iterations()) / seconds / 1e9;
  state.counters["gpus"] = gpus.count();
}

// A variant and its kernel's spectrum, kept across the calls of one convolution row.
template <class V>
struct Convolving {
  std::unique_ptr<V> v, kernel;
};

template <class V>
void convolutions(benchmark::State& state, std::size_t n, cases::Devices gpus, Order signal) {
  constexpr Order spectrum = std::is_same_v<V, fft::Single> ? Order::natural : Order::transposed;
  const std::string key = std::string("convolve ") + typeid(V).name() + " " + std::to_string(n) + " " +
                          std::to_string(gpus.count()) + " " + std::to_string(static_cast<int>(signal));
  Convolving<V>* kept = cush_bench::kept<Convolving<V>>(key, [&]() -> std::unique_ptr<Convolving<V>> {
    if (!fits(n, gpus, 2 * buffers<V>())) return nullptr;
    auto made = std::make_unique<Convolving<V>>();
    made->v = std::make_unique<V>(n, gpus);
    made->kernel = std::make_unique<V>(n, gpus);
    std::vector<fft::Complex> x(n, fft::Complex{0.0f, 0.0f});
    x[0] = fft::Complex{1.0f, 0.0f};  // the unit impulse: a spectrum of ones
    made->kernel->load(x.data());
    made->kernel->forward(Order::natural, spectrum);
    made->kernel->wait();  // load() reads x after it returns: done before x changes
    for (std::size_t i = 0; i < n; ++i) x[i] = fft::Complex{static_cast<float>(i % 7), 0.5f};
    made->v->load(x.data());
    made->v->wait();
    return made;
  });
  if (kept == nullptr) {
    state.SkipWithError("skipped: the buffers do not fit the GPUs' free memory");
    return;
  }
  V& v = *kept->v;
  v.convolve(*kept->kernel, signal);  // warm-up
  v.wait();
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    v.convolve(*kept->kernel, signal);
    v.wait();
    const double s = timer.stop();
    state.SetIterationTime(s);
    seconds += s;
  }
  state.counters["GFLOP/s"] = 2 * fft::flops(n) * static_cast<double>(state.iterations()) / seconds / 1e9;
  state.counters["gpus"] = gpus.count();
}

void add_convolutions(std::size_t n, int g) {
  const std::string tail = "/" + std::to_string(g) + "gpu/" + std::to_string(std::bit_width(n) - 1);
  const cases::Devices gpus = cases::Devices::first(g);
  if (g == 1)
    cush_bench::add_timed("case/fft_conv_natural/single" + tail,
                          [=](benchmark::State& s) { convolutions<fft::Single>(s, n, gpus, Order::natural); }, true);
  for (const Order o : {Order::natural, Order::transposed}) {
    const std::string base = std::string("case/fft_conv_") + (o == Order::natural ? "natural" : "transposed");
    cush_bench::add_timed(base + "/multi_cuda" + tail, [=](benchmark::State& s) { convolutions<fft::MultiCuda>(s, n, gpus, o); }, true);
    cush_bench::add_timed(base + "/multi_cush" + tail, [=](benchmark::State& s) { convolutions<fft::MultiCush>(s, n, gpus, o); }, true);
  }
}

void add(const std::string& family, const Mode& m, std::size_t n, int g, const std::string& on, bool e2e) {
  const std::string base = "case/" + family + "_" + m.name;
  // The row's size is log2 N, for the weak series log2 of the points per GPU (the report reads it so).
  const std::size_t labelled = family == "fft_weak" ? n / static_cast<std::size_t>(g) : n;
  const std::string tail = "/" + on + "/" + std::to_string(std::bit_width(labelled) - 1);
  const cases::Devices gpus = cases::Devices::first(g);
  if (g == 1 && m.in == Order::natural && m.out == Order::natural)
    cush_bench::add_timed(base + "/single" + tail, [=](benchmark::State& s) { transforms<fft::Single>(s, n, gpus, m, e2e); }, true);
  if (n / static_cast<std::size_t>(g) < 4 * static_cast<std::size_t>(g)) return;  // shape(): g must divide both factors
  cush_bench::add_timed(base + "/multi_cuda" + tail, [=](benchmark::State& s) { transforms<fft::MultiCuda>(s, n, gpus, m, e2e); }, true);
  cush_bench::add_timed(base + "/multi_cush" + tail, [=](benchmark::State& s) { transforms<fft::MultiCush>(s, n, gpus, m, e2e); }, true);
  if ((g == 2 || g == 4 || g == 8) && m.in == Order::natural && m.out == Order::natural)
    cush_bench::add_timed(base + "/cufftxt" + tail, [=](benchmark::State& s) { transforms<fft::Xt>(s, n, gpus, m, e2e); }, true);
}

// The pipelined rows: chunk counts forced (2 or more GPUs).
void add_chunked(const Mode& m, std::size_t n, int g, const std::string& label) {
  for (std::size_t c : {1, 2, 4, 8})
    for (bool staged : {false, true}) {
      const std::string base = std::string("case/fft_") + m.name + "_chunks" + std::to_string(c) + (staged ? "_staged" : "");
      const std::string tail = "/" + std::to_string(g) + label + "/" + std::to_string(std::bit_width(n) - 1);
      const cases::Devices gpus = cases::Devices::first(g);
      cush_bench::add_timed(base + "/multi_cuda" + tail,
                            [=](benchmark::State& s) { transforms<fft::MultiCuda>(s, n, gpus, m, false, c, staged); }, true);
      cush_bench::add_timed(base + "/multi_cush" + tail,
                            [=](benchmark::State& s) { transforms<fft::MultiCush>(s, n, gpus, m, false, c, staged); }, true);
    }
}

}  // namespace

void register_fft() {
  const int available = cush_bench::gpus_for_rows();
  if (available == 0) return;
  for (const Mode& m : kModes) {
    for (int e = 10; e <= 30; ++e)
      for (int g = 1; g <= available; g *= 2) add("fft", m, std::size_t{1} << e, g, std::to_string(g) + "gpu", false);
    for (int e = 10; e <= 28; e += 2)
      for (int g = 1; g <= available; g *= 2)
        add("fft_weak", m, (std::size_t{1} << e) * static_cast<std::size_t>(g), g, std::to_string(g) + "gpu", false);
    for (int e : {24, 26, 28}) add("fft_e2e", m, std::size_t{1} << e, 1, "1gpu", true);
  }
  for (int e : {20, 24, 26, 28, 30})
    for (int g = 1; g <= available; g *= 2) add_convolutions(std::size_t{1} << e, g);
  for (const Mode& m : kModes)
    for (int e : {26, 28, 30})
      for (int g = 2; g <= available; g *= 2) add_chunked(m, std::size_t{1} << e, g, "gpu");
  // Virtual GPUs: the process's logical devices on GPU 0 (see the top of the file).
  if (cush::virtual_gpus_active())
    for (const Mode& m : kModes)
      for (int e : {20, 24, 26, 28})
        for (int g = 2; g <= cush::DeviceSet::available(); g *= 2) {
          add("fft", m, std::size_t{1} << e, g, std::to_string(g) + "vgpu", false);
          if (e >= 26) add_chunked(m, std::size_t{1} << e, g, "vgpu");
        }
  for (int piece = 0; piece < 6; ++piece) {
    static const char* names[] = {"rows_n1", "rows_n2", "transpose", "transpose_twiddle", "cols_n1", "rows_n2_out_t"};
    for (int e : {24, 26, 28, 30}) {
      const std::size_t n = std::size_t{1} << e;
      cush_bench::add_timed(std::string("part/fft/") + names[piece] + "/1gpu/" + std::to_string(e),
                            [=](benchmark::State& s) { fft_pieces(s, n, piece, 0); });
    }
  }
  // Row FFTs of other lengths at 2^28 points: which split N1 x N2 the batched cuFFT favours.
  for (int l = 8; l <= 20; ++l)
    cush_bench::add_timed("part/fft/rows_len" + std::to_string(l) + "/1gpu/28", [=](benchmark::State& s) {
      fft_pieces(s, std::size_t{1} << 28, 0, std::size_t{1} << l);
    });
}
