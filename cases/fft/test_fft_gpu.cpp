// Case "fft", GPU tests: every multi-GPU variant (raw CUDA, cush, and cufftXt where it runs) in
// every order, forward and inverse, against the single-GPU cuFFT result, on 1, 2, 4 and 8 GPUs
// (logical: run with CUSH_VIRTUAL_GPUS on a host with fewer) in both device orders; sizes 2^10 to
// 2^24 and one 2^28; bad sizes rejected before anything is allocated.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cush/cush.hpp"
#include "cush/error.hpp"
#include "fft.hpp"
#include "kernels.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"

namespace {

namespace fft = cases::fft;
using cases::Devices;
using fft::Complex;
using fft::Direction;
using fft::Domain;
using fft::Order;

constexpr double kTolerance = 1e-6;  // relative L2, float

std::vector<Complex> random_signal(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Complex> x(n);
  for (Complex& v : x) v = Complex{u(rng), u(rng)};
  return x;
}

double rel_l2(const std::vector<Complex>& got, const std::vector<Complex>& want, double scale = 1.0) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double wx = scale * want[i].x, wy = scale * want[i].y;
    num += (got[i].x - wx) * (got[i].x - wx) + (got[i].y - wy) * (got[i].y - wy);
    den += wx * wx + wy * wy;
  }
  return std::sqrt(num / den);
}

/// The single-GPU cuFFT result of x (forward) on logical device 0's GPU.
std::vector<Complex> reference(const std::vector<Complex>& x) {
  fft::Single single(x.size(), Devices::first(1));
  single.load(x.data());
  single.forward();
  std::vector<Complex> X(x.size());
  single.store(X.data());
  single.wait();
  return X;
}

/// Counts of GPUs to test with: 1, 2, 4, 8 up to the logical devices present.
std::vector<int> gpu_counts() {
  std::vector<int> counts;
  for (int k : {1, 2, 4, 8})
    if (k <= cush::DeviceSet::available()) counts.push_back(k);
  return counts;
}

/// Devices 0 .. k - 1, reversed when `reversed` ({1, 0}, ...).
Devices devices(int k, bool reversed) {
  std::vector<int> ids;
  for (int i = 0; i < k; ++i) ids.push_back(reversed ? k - 1 - i : i);
  return Devices::of(ids);
}

std::string name(Order o) { return o == Order::natural ? "natural" : "transposed"; }

/// Forward and inverse of variant V on x in the orders (in, out), against X = cuFFT(x).
template <class V>
void check_orders(const std::vector<Complex>& x, const std::vector<Complex>& X, const Devices& gpus, Order in,
                  Order out, fft::Options options = {}) {
  V v(x.size(), gpus, options);
  const fft::Shape& s = v.shape();
  const double n = static_cast<double>(x.size());
  std::vector<Complex> got(x.size());
  // Forward: X in `out`. (Host buffers live until wait(): loads may still read them.)
  const std::vector<Complex> x_in = fft::arrange(s, Domain::time, in, x);
  const std::vector<Complex> X_in = fft::arrange(s, Domain::frequency, in, X);
  v.load(x_in.data());
  v.forward(in, out);
  v.store(got.data());
  v.wait();
  EXPECT_LT(rel_l2(got, fft::arrange(s, Domain::frequency, out, X)), kTolerance) << "forward " << name(in) << " -> " << name(out);
  // Inverse of the reference spectrum: N x in `out`.
  v.load(X_in.data());
  v.inverse(in, out);
  v.store(got.data());
  v.wait();
  EXPECT_LT(rel_l2(got, fft::arrange(s, Domain::time, out, x), n), kTolerance) << "inverse " << name(in) << " -> " << name(out);
  // The round trip that stays in the transposed orders where asked: inverse(forward(x)) = N x.
  v.load(x_in.data());
  v.forward(in, Order::transposed);
  v.inverse(Order::transposed, out);
  v.store(got.data());
  v.wait();
  EXPECT_LT(rel_l2(got, fft::arrange(s, Domain::time, out, x), n), kTolerance) << "round trip " << name(in) << " -> " << name(out);
}

template <class V>
void check_natural(const std::vector<Complex>& x, const std::vector<Complex>& X, const Devices& gpus) {
  V v(x.size(), gpus);
  std::vector<Complex> got(x.size());
  v.load(x.data());
  v.forward();
  v.store(got.data());
  v.wait();
  EXPECT_LT(rel_l2(got, X), kTolerance) << "forward";
  v.inverse();
  v.store(got.data());
  v.wait();
  EXPECT_LT(rel_l2(got, x, static_cast<double>(x.size())), kTolerance) << "inverse(forward(x))";
}

// The circular convolution y[j] = sum_i x[i] h[(j - i) mod N], in double on the host.
std::vector<Complex> direct_convolution(const std::vector<Complex>& x, const std::vector<Complex>& h) {
  const std::size_t n = x.size();
  std::vector<Complex> y(n);
  for (std::size_t j = 0; j < n; ++j) {
    double re = 0, im = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Complex a = x[i], b = h[(j + n - i) % n];
      re += static_cast<double>(a.x) * b.x - static_cast<double>(a.y) * b.y;
      im += static_cast<double>(a.x) * b.y + static_cast<double>(a.y) * b.x;
    }
    y[j] = Complex{static_cast<float>(re), static_cast<float>(im)};
  }
  return y;
}

// V's convolution of x with h, the signal loaded and stored in `order`, the result back in natural
// order. The kernel's spectrum is not waited for: convolve() orders itself after it.
template <class V>
std::vector<Complex> convolved(const std::vector<Complex>& x, const std::vector<Complex>& h, const Devices& gpus,
                               Order order, fft::Options options = {}) {
  constexpr Order spectrum = std::is_same_v<V, fft::Single> ? Order::natural : Order::transposed;
  V k(x.size(), gpus, options);
  k.load(h.data());
  k.forward(Order::natural, spectrum);
  V v(x.size(), gpus, options);
  const fft::Shape& s = v.shape();
  const std::vector<Complex> x_in = fft::arrange(s, Domain::time, order, x);
  std::vector<Complex> got(x.size());
  v.load(x_in.data());
  v.convolve(k, order);
  v.store(got.data());
  v.wait();
  k.wait();
  std::vector<Complex> y(x.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = got[fft::position(s, Domain::time, order, i)];
  return y;
}

constexpr double kConvolutionTolerance = 2e-6;  // relative L2: two transforms, each within kTolerance

bool xt_takes(int k, std::size_t n) { return (k == 2 || k == 4 || k == 8) && n >= (k == 8 ? 128U : 64U); }

class Fft : public ::testing::TestWithParam<int> {};  // log2 N

// Natural orders: every variant, every GPU count, both device orders.
TEST_P(Fft, NaturalOrderMatchesCufftOnEveryGpuCount) {
  CUSH_REQUIRE_GPUS(1);
  const std::size_t n = std::size_t{1} << GetParam();
  const std::vector<Complex> x = random_signal(n, static_cast<unsigned>(GetParam()));
  const std::vector<Complex> X = reference(x);
  for (int k : gpu_counts())
    for (bool reversed : {false, true}) {
      if (k == 1 && reversed) continue;
      SCOPED_TRACE("N = 2^" + std::to_string(GetParam()) + " on " + std::to_string(k) + " GPUs" + (reversed ? " reversed" : ""));
      check_natural<fft::MultiCuda>(x, X, devices(k, reversed));
      check_natural<fft::MultiCush>(x, X, devices(k, reversed));
      if (xt_takes(k, n)) check_natural<fft::Xt>(x, X, devices(k, reversed));
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Fft, ::testing::Range(10, 25), [](const ::testing::TestParamInfo<int>& i) {
  return "N2e" + std::to_string(i.param);
});

class FftOrders : public ::testing::TestWithParam<int> {};  // log2 N

// Every pair of orders, forward, inverse and round trips, for the multi-GPU variants.
TEST_P(FftOrders, EveryOrderMatchesCufft) {
  CUSH_REQUIRE_GPUS(1);
  const int e = GetParam();
  const std::size_t n = std::size_t{1} << e;
  const std::vector<Complex> x = random_signal(n, static_cast<unsigned>(100 + e));
  const std::vector<Complex> X = reference(x);
  for (int k : gpu_counts())
    for (Order in : {Order::natural, Order::transposed})
      for (Order out : {Order::natural, Order::transposed}) {
        SCOPED_TRACE("N = 2^" + std::to_string(e) + " on " + std::to_string(k) + " GPUs");
        check_orders<fft::MultiCuda>(x, X, devices(k, e % 2 == 1), in, out);
        check_orders<fft::MultiCush>(x, X, devices(k, e % 2 == 0), in, out);
      }
}

// Odd and even exponents (square and 2:1 splits), small and large.
INSTANTIATE_TEST_SUITE_P(Sizes, FftOrders, ::testing::Values(10, 11, 13, 16, 19, 24),
                         [](const ::testing::TestParamInfo<int>& i) { return "N2e" + std::to_string(i.param); });

// Pipelined transposes (Options::chunks), direct and staged: every pair of orders, forward, inverse
// and round trips, chunk counts that divide the rows and one that does not (3), and more chunks
// than a GPU has rows (2^10 on 8 GPUs: 4 rows each); at 2^24, 2 and 8 chunks.
TEST(FftChunks, EveryOrderAndChunkCountMatchesCufft) {
  CUSH_REQUIRE_GPUS(1);
  for (int e : {10, 13, 19, 24}) {
    const std::size_t n = std::size_t{1} << e;
    const std::vector<Complex> x = random_signal(n, static_cast<unsigned>(200 + e));
    const std::vector<Complex> X = reference(x);
    for (int k : gpu_counts())
      for (std::size_t chunks : {1, 2, 3, 8}) {
        if (e == 24 && (chunks == 1 || chunks == 3)) continue;  // the largest size: 2 and 8 chunks
        for (Order in : {Order::natural, Order::transposed})
          for (Order out : {Order::natural, Order::transposed}) {
            const bool staged = (chunks + e + (in == out ? 1 : 0)) % 2 == 0;  // half of the cases, every chunk count
            SCOPED_TRACE("N = 2^" + std::to_string(e) + " on " + std::to_string(k) + " GPUs, " + std::to_string(chunks) +
                         " chunks" + (staged ? ", staged" : ""));
            const fft::Options o{0, chunks, staged};
            check_orders<fft::MultiCuda>(x, X, devices(k, chunks % 2 == 1), in, out, o);
            check_orders<fft::MultiCush>(x, X, devices(k, chunks % 2 == 0), in, out, o);
            if (HasFatalFailure()) return;
          }
      }
  }
}

TEST(FftChunks, ConvolutionMatchesOneGpu) {
  CUSH_REQUIRE_GPUS(1);
  const std::size_t n = std::size_t{1} << 16;
  const std::vector<Complex> x = random_signal(n, 31), h = random_signal(n, 32);
  const std::vector<Complex> want = convolved<fft::Single>(x, h, Devices::first(1), Order::natural);
  for (int k : gpu_counts())
    for (Order order : {Order::natural, Order::transposed}) {
      SCOPED_TRACE(std::to_string(k) + " GPUs, signal " + name(order));
      const fft::Options o{0, 4, order == Order::natural};
      EXPECT_LT(rel_l2(convolved<fft::MultiCuda>(x, h, devices(k, true), order, o), want), kConvolutionTolerance);
      EXPECT_LT(rel_l2(convolved<fft::MultiCush>(x, h, devices(k, false), order, o), want), kConvolutionTolerance);
    }
}

// One large transform: 2^28 (2 GiB of data), natural orders, every GPU count, raw and cush.
TEST(FftLarge, TwoToThe28) {
  CUSH_REQUIRE_GPUS(1);
  const std::size_t n = std::size_t{1} << 28;
  std::size_t free = 0, total = 0;
  cudaSetDevice(cush::physical_device(0));
  if (cudaMemGetInfo(&free, &total) != cudaSuccess || free < (std::size_t{12} << 30))
    GTEST_SKIP() << "needs 12 GiB free on the GPU";
  const std::vector<Complex> x = random_signal(n, 28);
  const std::vector<Complex> X = reference(x);
  for (int k : gpu_counts()) {
    SCOPED_TRACE(std::to_string(k) + " GPUs");
    check_natural<fft::MultiCush>(x, X, devices(k, true));
    check_natural<fft::MultiCuda>(x, X, devices(k, false));
  }
}

// What the benchmark row case/fft_natural/multi_cush/1gpu/24 does, which ended with a
// segmentation fault on 4 x H200 (1, 2 or 4 GPUs visible) while the tests above passed: one
// transform object kept across many forward transforms without a store between them, on one GPU
// and then on every GPU count; the last forward is checked against cuFFT.
TEST(FftGpu, ManyForwardTransformsOfOneObjectAsTheBenchmarkRuns) {
  CUSH_REQUIRE_GPUS(1);
  const std::size_t n = std::size_t{1} << 24;
  const std::vector<Complex> x = random_signal(n, 24);
  const std::vector<Complex> X = reference(x);
  for (int k : gpu_counts()) {
    SCOPED_TRACE(std::to_string(k) + " GPUs");
    fft::MultiCush v(n, Devices::first(k), fft::Options{0});
    v.load(x.data());
    v.forward(Order::natural, Order::natural);  // the benchmark's warm-up
    v.wait();
    for (int i = 0; i < 20; ++i) {  // as the timed loop: forward and wait, nothing loaded between
      v.forward(Order::natural, Order::natural);
      v.wait();
    }
    v.load(x.data());
    v.forward(Order::natural, Order::natural);
    std::vector<Complex> got(n);
    v.store(got.data());
    v.wait();
    EXPECT_LT(rel_l2(got, X), kTolerance);
  }
}

// Circular convolution (a forward transform into the transposed order, the pointwise product, the
// inverse back) against the direct sum in double: one cuFFT call, and raw and cush on every GPU
// count, with the signal in natural and in transposed order.
TEST(FftConvolution, MatchesTheDirectSum) {
  CUSH_REQUIRE_GPUS(1);
  for (int e : {10, 11, 12}) {
    const std::size_t n = std::size_t{1} << e;
    const std::vector<Complex> x = random_signal(n, static_cast<unsigned>(200 + e)), h = random_signal(n, 300U + e);
    const std::vector<Complex> want = direct_convolution(x, h);
    SCOPED_TRACE("N = 2^" + std::to_string(e));
    EXPECT_LT(rel_l2(convolved<fft::Single>(x, h, Devices::first(1), Order::natural), want), kConvolutionTolerance)
        << "single";
    for (int k : gpu_counts())
      for (Order order : {Order::natural, Order::transposed}) {
        SCOPED_TRACE(std::to_string(k) + " GPUs, the signal in " + name(order) + " order");
        EXPECT_LT(rel_l2(convolved<fft::MultiCuda>(x, h, devices(k, e % 2 == 1), order), want), kConvolutionTolerance) << "raw";
        EXPECT_LT(rel_l2(convolved<fft::MultiCush>(x, h, devices(k, e % 2 == 0), order), want), kConvolutionTolerance) << "cush";
      }
  }
}

// At sizes beyond the direct sum: raw and cush against one cuFFT call's convolution.
TEST(FftConvolution, MatchesOneGpuAtLargerSizes) {
  CUSH_REQUIRE_GPUS(1);
  for (int e : {16, 21}) {
    const std::size_t n = std::size_t{1} << e;
    const std::vector<Complex> x = random_signal(n, static_cast<unsigned>(400 + e)), h = random_signal(n, 500U + e);
    const std::vector<Complex> want = convolved<fft::Single>(x, h, Devices::first(1), Order::natural);
    for (int k : gpu_counts())
      for (Order order : {Order::natural, Order::transposed}) {
        SCOPED_TRACE("N = 2^" + std::to_string(e) + " on " + std::to_string(k) + " GPUs, the signal in " + name(order) + " order");
        EXPECT_LT(rel_l2(convolved<fft::MultiCuda>(x, h, devices(k, true), order), want), kConvolutionTolerance) << "raw";
        EXPECT_LT(rel_l2(convolved<fft::MultiCush>(x, h, devices(k, false), order), want), kConvolutionTolerance) << "cush";
      }
  }
}

// A kernel of another size, split or GPUs, or the transform itself, is refused before any work.
TEST(FftConvolution, BadKernelsAreRejected) {
  CUSH_REQUIRE_GPUS(1);
  const Devices one = Devices::first(1);
  fft::Single single(1024, one), single_other(2048, one), single_kernel(1024, one);
  EXPECT_THROW(single.convolve(single), std::invalid_argument);
  EXPECT_THROW(single.convolve(single_other), std::invalid_argument);
  EXPECT_THROW(single.convolve(single_kernel, Order::transposed), std::invalid_argument);
  fft::MultiCush cush(1024, one), cush_other(2048, one), cush_split(1024, one, fft::Options{64});
  EXPECT_THROW(cush.convolve(cush), std::invalid_argument);
  EXPECT_THROW(cush.convolve(cush_other), std::invalid_argument);
  EXPECT_THROW(cush.convolve(cush_split), std::invalid_argument);
  fft::MultiCuda raw(1024, one), raw_other(2048, one), raw_split(1024, one, fft::Options{64});
  EXPECT_THROW(raw.convolve(raw), std::invalid_argument);
  EXPECT_THROW(raw.convolve(raw_other), std::invalid_argument);
  EXPECT_THROW(raw.convolve(raw_split), std::invalid_argument);
  if (cush::DeviceSet::available() >= 2) {
    const Devices two = Devices::first(2), swapped = Devices::of({1, 0});
    fft::MultiCush cush2(1024, two), cush2_swapped(1024, swapped);
    EXPECT_THROW(cush2.convolve(cush2_swapped), std::invalid_argument);
    fft::MultiCuda raw2(1024, two), raw2_swapped(1024, swapped);
    if (cush::physical_device(0) != cush::physical_device(1))
      EXPECT_THROW(raw2.convolve(raw2_swapped), std::invalid_argument);
    else  // virtual GPUs on one: the raw variant knows CUDA devices only, and every part is on that one
      EXPECT_NO_THROW(raw2.convolve(raw2_swapped));
    fft::MultiCush cush_on_one(1024, one);
    EXPECT_THROW(cush2.convolve(cush_on_one), std::invalid_argument);
  }
}

// The twiddles are exact to float rounding for large N (where a float angle would not be): every
// one within 3 float ulps of exp(sign 2 pi i r c / N) computed in long double.
TEST(FftTwiddle, ExactToFloatRoundingForLargeN) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(cush::physical_device(0)));
  std::mt19937_64 rng(7);
  for (int e : {10, 20, 24, 25, 28, 30, 32, 36, 40}) {
    const std::size_t n = std::size_t{1} << e;
    std::vector<std::size_t> r, c;
    for (int k = 0; k < 4096; ++k) {
      r.push_back(rng() & (n - 1));
      c.push_back(rng() & (n - 1));
    }
    for (int sign : {-1, 1}) {
      const std::vector<Complex> w = cases::fft::twiddles(n, sign, r, c);
      double worst = 0;
      for (std::size_t k = 0; k < r.size(); ++k) {
        const auto m = static_cast<long double>((r[k] * c[k]) & (n - 1));
        const long double a = sign * 2.0L * 3.141592653589793238462643383279502884L * m / static_cast<long double>(n);
        const double dx = w[k].x - static_cast<double>(std::cos(a)), dy = w[k].y - static_cast<double>(std::sin(a));
        worst = std::max(worst, std::sqrt(dx * dx + dy * dy));
      }
      EXPECT_LT(worst, 3.0 * 5.96e-8) << "N = 2^" << e << ", sign " << sign;
    }
  }
}

// Bad sizes and GPU counts are refused with std::invalid_argument before any allocation.
TEST(FftErrors, BadSizesAreRejected) {
  CUSH_REQUIRE_GPUS(1);
  const Devices one = Devices::first(1);
  EXPECT_THROW(fft::Single(1000, one), std::invalid_argument);
  EXPECT_THROW(fft::MultiCush(1000, one), std::invalid_argument);
  EXPECT_THROW(fft::MultiCuda(3, one), std::invalid_argument);
  EXPECT_THROW(fft::Xt(1024, one), std::invalid_argument);  // cufftXt needs 2 or more GPUs
  EXPECT_THROW(fft::Single(1024, Devices{}), std::invalid_argument);
  fft::Single single(1024, one);
  EXPECT_THROW(single.forward(Order::natural, Order::transposed), std::invalid_argument);
  if (cush::DeviceSet::available() >= 3) {
    EXPECT_THROW(fft::MultiCush(1024, Devices::first(3)), std::invalid_argument);
    EXPECT_THROW(fft::MultiCuda(1024, Devices::first(3)), std::invalid_argument);
    EXPECT_THROW(fft::Xt(1024, Devices::first(3)), std::invalid_argument);
  }
  if (cush::DeviceSet::available() >= 2) {
    EXPECT_THROW(fft::Xt(32, Devices::first(2)), std::invalid_argument);  // below cufftXt's 64
    fft::Xt xt(1024, Devices::first(2));
    EXPECT_THROW(xt.forward(Order::natural, Order::transposed), std::invalid_argument);
  }
}

}  // namespace

namespace {

// Injected faults (support/faults.hpp) over a multi-GPU variant, whole (1 chunk, direct stores)
// and pipelined (2 chunks a step) and staged: every checked CUDA and cuFFT call fails once; each
// failure throws a cush error naming the call, nothing leaks, and a transform that outlived a
// failure part way through a transpose gives the same bits again (a failed transpose drains
// every GPU's streams before it throws, so no chunk still in flight stores into a buffer the next
// transform fills).
template <class Variant>
void walk_variant(const std::string& name, unsigned seed) {
  int k = 1;
  while (2 * k <= std::min(8, cush::DeviceSet::available())) k *= 2;
  const std::size_t n = std::size_t{1} << 12;
  const std::vector<Complex> x = random_signal(n, seed);
  for (const fft::Options options : {fft::Options{0, 1, false}, fft::Options{0, 2, true}}) {
    const std::string what = "fft, " + name + ", " + std::to_string(k) + " GPUs" +
                             (options.staged ? ", 2 chunks, staged" : ", 1 chunk");
    cush_test::SameAsFirst<std::vector<Complex>> same(what, [](const std::vector<Complex>& a, const std::vector<Complex>& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Complex)) == 0;
    });
    const auto run = [&](Variant& v) {
      std::vector<Complex> got(n);
      v.load(x.data());
      v.forward();
      v.inverse(Order::natural, Order::natural);
      v.store(got.data());
      v.wait();
      same(got);
    };
    Variant kept(n, Devices::first(k), options);  // outlives every failure, used again after it
    const auto action = [&] {
      {
        Variant fresh(n, Devices::first(k), options);
        run(fresh);
      }
      run(kept);
    };
    cush_test::walk_faults(what, action, [&] { run(kept); });
  }
}

}  // namespace

TEST(FftGpu, CushVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  walk_variant<fft::MultiCush>("cush variant", 12);
}

TEST(FftGpu, RawVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  walk_variant<fft::MultiCuda>("raw variant", 13);
}
