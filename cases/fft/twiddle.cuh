#pragma once
// Case "fft": the twiddle factor of the four-step algorithm's middle transpose, as a device
// function of the element's row and column in the source matrix (cush::transpose's f, and the raw
// variant's transpose kernel).
//
// Exact to float rounding for any N up to 2^46, with one float sincospi per element. The exponent
// m = r c mod N is reduced in integers (N is a power of two). Then m = hi 2^s + lo with
// s = max(0, log2 N - 23):
//   - W^(hi 2^s) = sincospi(2 hi / 2^(log2 N - s)): hi < 2^23, so the argument is exact in float
//     (hi becomes a float by the exponent trick, not by a conversion instruction) and sincospif's
//     result is correctly rounded to about an ulp;
//   - W^lo has the angle t = 2 pi lo / N < 2 pi 2^-23, where cos t = 1 and sin t = t to float
//     precision (the next terms, t^2 / 2 and t^3 / 6, are below 2^-40 and 2^-64),
// so W^m = W^(hi 2^s) (1 + i t): two fused multiply-adds. A float angle 2 pi m / N would instead
// lose phase bits once N passes 2^24; sincospi in double costs more than the transpose's memory
// traffic hides (README, "Twiddles").

#include <cuda_runtime.h>

#include <bit>
#include <cstddef>

#include "fft.hpp"

namespace cases {
namespace fft {

struct Twiddle {
  Twiddle() = default;
  /// exp(sign 2 pi i r c / n); sign 0 leaves the values alone.
  Twiddle(std::size_t n_, int sign_) : n(n_), sign(sign_) {
    const int bits = std::bit_width(n_) - 1;
    shift = bits > 23 ? bits - 23 : 0;
    high_scale = static_cast<float>(sign_) * 2.0f / static_cast<float>(std::size_t{1} << (bits - shift));
    low_scale = static_cast<float>(sign_) * 6.283185307179586f / static_cast<float>(n_);
  }
  std::size_t n = 0;
  int sign = 0;
  int shift = 0;
  float high_scale = 0, low_scale = 0;

  /// An integer below 2^23 as a float, exactly, without a conversion instruction.
  __device__ static float exact(unsigned v) { return __uint_as_float(0x4B000000u | v) - 8388608.0f; }

  __device__ Complex operator()(Complex v, std::size_t r, std::size_t c) const {
    if (sign == 0) return v;
    const std::size_t m = (r * c) & (n - 1);
    float s, co;
    sincospif(high_scale * exact(static_cast<unsigned>(m >> shift)), &s, &co);
    const float t = low_scale * exact(static_cast<unsigned>(m) & ((1u << shift) - 1u));
    const float wr = __fmaf_rn(-s, t, co), wi = __fmaf_rn(co, t, s);
    return Complex{v.x * wr - v.y * wi, v.x * wi + v.y * wr};
  }
};

}  // namespace fft
}  // namespace cases
