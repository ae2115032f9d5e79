#pragma once
// Case "wave": the cross stencil of the seed's wave solver (DiamondTorre) at orders N_O = 2, 4, 6
// and 8, and the time steps a leapfrog scheme with it may take.
//
// Along one axis, d2u/dx2 ~ h^-2 [2 C_0 u_i + sum_{k=1..N_O/2} C_k (u_{i+k} + u_{i-k})], with the
// seed's table of C_0 .. C_{N_O/2}. C_0 is half the centre's weight: only so do the rows sum to
// zero. In 3-D the leapfrog step is
//     u^{n+1} = (2 + 6 C_0 s^2) u^n - u^{n-1} + s^2 sum_k C_k (pair sums of the 3 axes at distance k),
// s = c dt / h the Courant number; stable for s^2 max |h^2 lambda| <= 4.

#include <array>
#include <cstddef>
#include <span>

namespace cases {
namespace wave {

/// The orders the seed's table gives.
inline constexpr std::array<int, 4> kOrders{2, 4, 6, 8};

/// C_0 .. C_{order/2} for order 2, 4, 6 or 8; std::invalid_argument for another order.
[[nodiscard]] std::span<const double> coefficients(int order);

/// The stencil's radius, order / 2.
[[nodiscard]] std::size_t radius(int order);

/// h^2 times the 1-D operator's symbol at angle theta (radians per cell):
/// 2 C_0 + 2 sum_k C_k cos(k theta).
[[nodiscard]] double symbol(int order, double theta);

/// The largest stable Courant number in 3-D: sqrt(4 / (3 max_theta |symbol|)).
[[nodiscard]] double courant_limit(int order);

/// Throws std::invalid_argument unless 0 < courant <= courant_limit(order).
void check_courant(int order, double courant);

}  // namespace wave
}  // namespace cases
