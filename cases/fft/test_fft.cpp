// Case "fft", host tests: shapes and their errors, the orders, and the four-step program itself,
// run on the host in double precision (naive DFTs along the rows, transposes with the twiddles)
// against a direct DFT, for both directions and every pair of orders.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "fft.hpp"

namespace {

namespace fft = cases::fft;
using fft::Direction;
using fft::Domain;
using fft::Order;
using C = std::complex<double>;

TEST(FftShape, SplitsIntoBalancedPowersOfTwo) {
  EXPECT_EQ(fft::shape(1024, 1).n1, 32U);
  EXPECT_EQ(fft::shape(1024, 1).n2, 32U);
  EXPECT_EQ(fft::shape(2048, 2).n1, 32U);
  EXPECT_EQ(fft::shape(2048, 2).n2, 64U);
  EXPECT_EQ(fft::shape(std::size_t{1} << 28, 8).n1, std::size_t{1} << 14);
  EXPECT_EQ(fft::shape(std::size_t{1} << 33, 1).n2, std::size_t{1} << 17);
  EXPECT_EQ(fft::shape(1 << 20, 4, 256).n2, std::size_t{1} << 12);
}

TEST(FftShape, RejectsBadSizesWithTheReason) {
  const auto message = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([] { (void)fft::shape(1000, 1); }).find("not a power of two"), std::string::npos);
  EXPECT_NE(message([] { (void)fft::shape(2, 1); }).find("not a power of two >= 4"), std::string::npos);
  EXPECT_NE(message([] { (void)fft::shape(1024, 3); }).find("must divide both factors"), std::string::npos);
  EXPECT_NE(message([] { (void)fft::shape(64, 16); }).find("must divide both factors"), std::string::npos);
  EXPECT_NE(message([] { (void)fft::shape(1024, 2, 48); }).find("N1 = 48"), std::string::npos);
  EXPECT_NE(message([] { (void)fft::shape(1024, 2, 1024); }).find("N1 = 1024"), std::string::npos);
  EXPECT_NE(message([] { (void)fft::shape(1024, 0); }).find("no GPU"), std::string::npos);
  EXPECT_NO_THROW((void)fft::shape(64, 8));
}

TEST(FftOrder, PositionsArePermutations) {
  for (std::size_t n : {16U, 32U, 1024U, 2048U}) {
    const fft::Shape s = fft::shape(n, 1);
    for (Domain d : {Domain::time, Domain::frequency})
      for (Order o : {Order::natural, Order::transposed}) {
        std::set<std::size_t> seen;
        for (std::size_t j = 0; j < n; ++j) seen.insert(fft::position(s, d, o, j));
        EXPECT_EQ(seen.size(), n);
        EXPECT_EQ(*seen.rbegin(), n - 1);
      }
    // The transposed orders of the documentation: x[N2 a + b] at b * N1 + a, X[k1 + N1 k2] at k1 * N2 + k2.
    EXPECT_EQ(fft::position(s, Domain::time, Order::transposed, s.n2 * 1 + 2), 2 * s.n1 + 1);
    EXPECT_EQ(fft::position(s, Domain::frequency, Order::transposed, 3 + s.n1 * 1), 3 * s.n2 + 1);
  }
}

TEST(FftProgram, CountsItsAllToAlls) {
  const fft::Shape s = fft::shape(4096, 4);
  for (Direction d : {Direction::forward, Direction::inverse})
    for (Order in : {Order::natural, Order::transposed})
      for (Order out : {Order::natural, Order::transposed}) {
        int transposes = 0;
        for (const fft::Step& st : fft::program(s, d, in, out)) {
          if (st.kind == fft::Step::transpose) ++transposes;
          EXPECT_EQ(st.rows * st.cols, s.n);
          EXPECT_EQ(st.rows % 4, 0U);
          EXPECT_EQ(st.cols % 4, 0U);
        }
        EXPECT_EQ(transposes, fft::all_to_alls(d, in, out));
      }
  EXPECT_EQ(fft::all_to_alls(Direction::forward, Order::natural, Order::natural), 3);
  EXPECT_EQ(fft::all_to_alls(Direction::forward, Order::natural, Order::transposed), 2);
  EXPECT_EQ(fft::all_to_alls(Direction::inverse, Order::transposed, Order::transposed), 1);
}

// The program on the host, in double precision: what the GPUs do, minus the distribution.
std::vector<C> run_program(const fft::Shape& s, Direction d, Order in, Order out, std::vector<C> a) {
  for (const fft::Step& st : fft::program(s, d, in, out)) {
    std::vector<C> b(s.n);
    if (st.kind == fft::Step::transpose) {
      for (std::size_t r = 0; r < st.rows; ++r)
        for (std::size_t c = 0; c < st.cols; ++c) {
          const double angle = 2.0 * std::numbers::pi * static_cast<double>(st.twiddle) *
                               static_cast<double>((r * c) % s.n) / static_cast<double>(s.n);
          b[c * st.rows + r] = a[r * st.cols + c] * std::polar(1.0, angle);
        }
    } else {
      const double sign = st.direction == Direction::forward ? -1.0 : 1.0;
      for (std::size_t r = 0; r < st.rows; ++r)
        for (std::size_t k = 0; k < st.cols; ++k) {
          C sum = 0;
          for (std::size_t j = 0; j < st.cols; ++j)
            sum += a[r * st.cols + j] *
                   std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % st.cols) /
                                       static_cast<double>(st.cols));
          b[r * st.cols + k] = sum;
        }
    }
    a = std::move(b);
  }
  return a;
}

std::vector<C> dft(const std::vector<C>& x, double sign) {
  const std::size_t n = x.size();
  std::vector<C> y(n);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < n; ++j)
      y[k] += x[j] * std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n));
  return y;
}

std::vector<C> arranged(const fft::Shape& s, Domain d, Order o, const std::vector<C>& v) {
  std::vector<C> out(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) out[fft::position(s, d, o, j)] = v[j];
  return out;
}

double rel_l2(const std::vector<C>& got, const std::vector<C>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += std::norm(got[i] - want[i]);
    den += std::norm(want[i]);
  }
  return std::sqrt(num / den);
}

TEST(FftProgram, ComputesTheDftInEveryOrder) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t n : {8U, 32U, 128U, 512U}) {
    for (std::size_t n1 : {std::size_t{0}, std::size_t{2}, n / 2}) {
      const fft::Shape s = fft::shape(n, 1, n1);
      std::vector<C> x(n);
      for (C& v : x) v = C(u(rng), u(rng));
      const std::vector<C> X = dft(x, -1.0);
      const std::vector<C> back = dft(X, 1.0);  // N x
      for (Order in : {Order::natural, Order::transposed})
        for (Order out : {Order::natural, Order::transposed}) {
          SCOPED_TRACE("N = " + std::to_string(n) + " = " + std::to_string(s.n1) + " x " + std::to_string(s.n2));
          const auto fwd = run_program(s, Direction::forward, in, out, arranged(s, Domain::time, in, x));
          EXPECT_LT(rel_l2(fwd, arranged(s, Domain::frequency, out, X)), 1e-12);
          const auto inv = run_program(s, Direction::inverse, in, out, arranged(s, Domain::frequency, in, X));
          EXPECT_LT(rel_l2(inv, arranged(s, Domain::time, out, back)), 1e-12);
        }
    }
  }
}

// A wrong sign or a wrong factor in the twiddle is caught: the test above is not vacuous.
TEST(FftProgram, AWrongTwiddleIsCaught) {
  const fft::Shape s = fft::shape(64, 1);
  std::vector<C> x(64);
  for (std::size_t i = 0; i < 64; ++i) x[i] = C(std::sin(0.3 * i), std::cos(0.7 * i));
  std::vector<fft::Step> steps = fft::program(s, Direction::forward, Order::natural, Order::natural);
  const auto X = dft(x, -1.0);
  EXPECT_LT(rel_l2(run_program(s, Direction::forward, Order::natural, Order::natural, x), X), 1e-12);
  // The same steps with the twiddle's sign flipped, run by hand.
  std::vector<C> a = x;
  for (fft::Step st : steps) {
    if (st.kind == fft::Step::transpose) st.twiddle = -st.twiddle;
    std::vector<C> b(64);
    if (st.kind == fft::Step::transpose) {
      for (std::size_t r = 0; r < st.rows; ++r)
        for (std::size_t c = 0; c < st.cols; ++c)
          b[c * st.rows + r] = a[r * st.cols + c] * std::polar(1.0, 2.0 * std::numbers::pi * st.twiddle *
                                                                         static_cast<double>(r * c) / 64.0);
    } else {
      for (std::size_t r = 0; r < st.rows; ++r) {
        std::vector<C> row(a.begin() + r * st.cols, a.begin() + (r + 1) * st.cols);
        const auto y = dft(row, -1.0);
        std::copy(y.begin(), y.end(), b.begin() + r * st.cols);
      }
    }
    a = std::move(b);
  }
  EXPECT_GT(rel_l2(a, X), 0.1);
}

// What convolve() does, on the host: the forward program into the transposed order, the pointwise
// product with the kernel's spectrum in the same order (scaled by 1 / N), the inverse program
// back, for a signal in either order, equals the direct circular sum; the product of spectra in
// different orders does not (so the orders matter and the check can fail).
TEST(FftProgram, ConvolutionThroughTransposedSpectraIsTheDirectSum) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t n : {8U, 32U, 128U, 512U})
    for (std::size_t n1 : {std::size_t{0}, std::size_t{2}, n / 2}) {
      const fft::Shape s = fft::shape(n, 1, n1);
      std::vector<C> x(n), h(n), want(n);
      for (C& v : x) v = C(u(rng), u(rng));
      for (C& v : h) v = C(u(rng), u(rng));
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) want[j] += x[i] * h[(j + n - i) % n];
      const std::vector<C> kernel = run_program(s, Direction::forward, Order::natural, Order::transposed, h);
      const std::vector<C> natural_kernel = run_program(s, Direction::forward, Order::natural, Order::natural, h);
      for (Order order : {Order::natural, Order::transposed}) {
        SCOPED_TRACE("N = " + std::to_string(n) + " = " + std::to_string(s.n1) + " x " + std::to_string(s.n2) +
                     (order == Order::natural ? ", natural signal" : ", transposed signal"));
        const auto convolve = [&](const std::vector<C>& spectrum) {
          std::vector<C> y = run_program(s, Direction::forward, order, Order::transposed, arranged(s, Domain::time, order, x));
          for (std::size_t i = 0; i < n; ++i) y[i] *= spectrum[i] / static_cast<double>(n);
          return run_program(s, Direction::inverse, Order::transposed, order, y);
        };
        EXPECT_LT(rel_l2(convolve(kernel), arranged(s, Domain::time, order, want)), 1e-12);
        EXPECT_GT(rel_l2(convolve(natural_kernel), arranged(s, Domain::time, order, want)), 0.1);
      }
    }
}

TEST(FftFlops, FiveNLogN) { EXPECT_DOUBLE_EQ(fft::flops(1024), 5.0 * 1024 * 10); }

}  // namespace
