// Case "fft": the shape of a transform, the orders, and the steps of the four-step algorithm that
// both multi-GPU variants run (host code; the host test runs these steps with a naive DFT).
//
// Forward, N = N1 N2, x in natural order seen as the N1 x N2 matrix x[a][b] = x[N2 a + b]:
//   X[k1 + N1 k2] = sum_b W_N2^(b k2) W_N^(b k1) sum_a W_N1^(a k1) x[N2 a + b]     (W_M = e^(-2 pi i / M))
//   1. transpose to N2 x N1 (rows b):          the transposed time order
//   2. N2 FFTs of length N1 along the rows:    [b][k1]
//   3. twiddle W_N^(b k1), transpose to N1 x N2 (rows k1)
//   4. N1 FFTs of length N2 along the rows:    [k1][k2] = X[k1 + N1 k2], the transposed spectrum
//   5. transpose to N2 x N1:                   [k2][k1] = X[N1 k2 + k1], natural order
// The inverse runs the same steps backwards with conjugate twiddles: (transpose N2 x N1 ->
// N1 x N2), N1 inverse FFTs of length N2, twiddle W_N^(-k1 b) and transpose, N2 inverse FFTs of
// length N1, (transpose N2 x N1 -> N1 x N2). Steps 1 and 5 are skipped for transposed orders.

#include <bit>
#include <stdexcept>
#include <string>

#include "fft.hpp"

namespace cases {
namespace fft {

namespace {
bool power_of_two(std::size_t v) { return v != 0 && (v & (v - 1)) == 0; }
}  // namespace

Shape shape(std::size_t n, int gpus, std::size_t n1) {
  const std::string where = "cases::fft: N = " + std::to_string(n);
  if (!power_of_two(n) || n < 4) throw std::invalid_argument(where + " is not a power of two >= 4");
  if (gpus < 1) throw std::invalid_argument(where + ": no GPU given");
  if (n1 == 0) n1 = std::size_t{1} << (std::bit_width(n) - 1) / 2;
  if (!power_of_two(n1) || n1 < 2 || n / n1 < 2 || n % n1 != 0)
    throw std::invalid_argument(where + ": N1 = " + std::to_string(n1) + " is not a power of two with 2 <= N1 <= N / 2");
  Shape s{n, n1, n / n1};
  const auto k = static_cast<std::size_t>(gpus);
  if (s.n1 % k != 0 || s.n2 % k != 0)
    throw std::invalid_argument(where + " = " + std::to_string(s.n1) + " x " + std::to_string(s.n2) + " over " +
                                std::to_string(gpus) + " GPUs: the GPU count must divide both factors "
                                "(a power of two up to " + std::to_string(std::min(s.n1, s.n2)) + ")");
  return s;
}

std::size_t position(const Shape& s, Domain domain, Order order, std::size_t index) {
  if (order == Order::natural) return index;
  if (domain == Domain::time) return (index % s.n2) * s.n1 + index / s.n2;  // x[N2 a + b] at [b][a]
  return (index % s.n1) * s.n2 + index / s.n1;                              // X[k1 + N1 k2] at [k1][k2]
}

std::vector<Complex> arrange(const Shape& s, Domain domain, Order order, const std::vector<Complex>& natural) {
  if (natural.size() != s.n) throw std::invalid_argument("cases::fft::arrange: the signal has the wrong length");
  std::vector<Complex> out(s.n);
  for (std::size_t j = 0; j < s.n; ++j) out[position(s, domain, order, j)] = natural[j];
  return out;
}

std::vector<Step> program(const Shape& s, Direction d, Order in, Order out) {
  const bool fwd = d == Direction::forward;
  // Forward goes N1 x N2 -> N2 x N1 -> ... ; the inverse walks the same matrices from the other end.
  const std::size_t p = fwd ? s.n1 : s.n2, q = fwd ? s.n2 : s.n1;
  std::vector<Step> steps;
  if (in == Order::natural) steps.push_back({Step::transpose, p, q, 0, d});
  steps.push_back({Step::fft, q, p, 0, d});
  steps.push_back({Step::transpose, q, p, fwd ? -1 : 1, d});
  steps.push_back({Step::fft, p, q, 0, d});
  if (out == Order::natural) steps.push_back({Step::transpose, p, q, 0, d});
  return steps;
}

int all_to_alls(Direction, Order in, Order out) {
  return 1 + (in == Order::natural ? 1 : 0) + (out == Order::natural ? 1 : 0);
}

double flops(std::size_t n) {
  return 5.0 * static_cast<double>(n) * static_cast<double>(std::bit_width(n) - 1);
}

}  // namespace fft
}  // namespace cases
