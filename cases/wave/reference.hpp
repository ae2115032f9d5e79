#pragma once
// Case "wave": the host leapfrog step on the periodic unit cube (n^3 nodes x = i / n, x fastest)
// and the discrete mode every variant is checked against.

#include <cstddef>
#include <span>
#include <vector>

namespace cases {
namespace wave {

/// One leapfrog step: next = (2 + 6 C_0 s^2) cur - prev + s^2 (pair sums), s^2 = `courant2`,
/// periodic wrap. Per node, in this order (the GPU kernels keep it, so every variant computes the
/// same bits): sum = 0; for k = 1 .. order/2, for the axes x, y, z: sum = fma(C_k, u[+k] + u[-k],
/// sum); next = fma(courant2, sum, fma(2 + 6 C_0 courant2, cur, -prev)). `next` may alias `prev`
/// (the seed's in-place update of the older level), not `cur`. std::invalid_argument for arrays
/// that are not n^3, n <= order (a stencil as wide as the grid), or an unknown order.
void step_host(int order, double courant2, std::size_t n, std::span<const double> prev, std::span<const double> cur,
               std::span<double> next);

/// sin(2 pi x) sin(2 pi y) sin(2 pi z) on the n^3 nodes.
[[nodiscard]] std::vector<double> mode(std::size_t n);

/// h^2 lambda_h of that mode under the discrete operator: 3 symbol(order, 2 pi / n).
[[nodiscard]] double mode_eigenvalue(int order, std::size_t n);

/// The angle theta per step of the mode: cos theta = 1 + courant^2 h^2 lambda_h / 2. Started with
/// u^{-1} = cos(theta) u^0, the leapfrog gives u^n = cos(n theta) u^0 exactly.
[[nodiscard]] double mode_angle(int order, double courant, std::size_t n);

}  // namespace wave
}  // namespace cases
