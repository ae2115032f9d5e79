#pragma once
// Case "fft": the twiddle factor of the four-step algorithm's middle transpose, as a device
// function of the element's row and column in the source matrix (cush::transpose's f, and the raw
// variant's transpose kernel). Exact for any N up to 2^63: the exponent r * c is reduced modulo N
// in integers (N is a power of two), the angle 2 pi m / N is taken in double precision by
// sincospi, and only the result is rounded to float, so it carries no phase error from float
// angles (which lose phase bits beyond N = 2^24).

#include <cuda_runtime.h>

#include <cstddef>

#include "fft.hpp"

namespace cases {
namespace fft {

struct Twiddle {
  std::size_t n = 0;  ///< N, a power of two
  int sign = 0;       ///< multiply by exp(sign 2 pi i r c / N); 0: leave the value alone

  __device__ Complex operator()(Complex v, std::size_t r, std::size_t c) const {
    if (sign == 0) return v;
    const std::size_t m = (r * c) & (n - 1);
    double s, co;
    sincospi(static_cast<double>(sign) * 2.0 * static_cast<double>(m) / static_cast<double>(n), &s, &co);
    const float ws = static_cast<float>(s), wc = static_cast<float>(co);
    return Complex{v.x * wc - v.y * ws, v.x * ws + v.y * wc};
  }
};

}  // namespace fft
}  // namespace cases
