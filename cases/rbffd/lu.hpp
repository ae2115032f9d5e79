#pragma once
// Case "rbffd": a small dense LU factorization with partial pivoting, for the per-stencil systems of
// weights.cpp (46 x 46 at n = 31, d = 4). Written out rather than taken from LAPACK so the case builds
// with no numerical library and every stencil's arithmetic is the same on every machine.

#include <cstddef>
#include <span>

namespace cases {
namespace rbffd {

/// Factors the k x k row-major matrix `a` in place as P a = L U (L unit lower, both stored in `a`),
/// row swaps in `pivots` (k entries: row i was swapped with pivots[i] at step i). Returns false, leaving
/// `a` partly factored, if a pivot's magnitude is at most `tolerance` (singular to working accuracy).
bool lu_factor(std::span<double> a, std::size_t k, std::span<std::size_t> pivots, double tolerance);

/// Solves a x = b for the `rhs` right-hand sides stored row-major in b (k x rhs), overwriting b with x,
/// from the factors of lu_factor.
void lu_solve(std::span<const double> a, std::size_t k, std::span<const std::size_t> pivots, std::span<double> b,
              std::size_t rhs);

}  // namespace rbffd
}  // namespace cases
