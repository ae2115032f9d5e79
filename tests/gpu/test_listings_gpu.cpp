// Seed Listings 2.1 (raw CUDA) and 2.2 (cush) do the same job on the same data.

#include <gtest/gtest.h>

#include <cmath>

#include "listings/listing_kernel.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

TEST(Listings, RawCudaAndCushAgreeWithTheHostReference) {
  CUSH_REQUIRE_GPUS(1);
  for (int gpu_n = 1; gpu_n <= cush::DeviceSet::available(); ++gpu_n) {
    for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1'000'003}}) {
      if (n < static_cast<std::size_t>(gpu_n)) continue;  // the raw listing allocates every GPU a part
      SCOPED_TRACE("gpu_n=" + std::to_string(gpu_n) + " n=" + std::to_string(n));
      std::vector<float> in(n), raw(n, NAN), with_cush(n, NAN);
      cush_test::fill_random(std::span<float>(in));
      listing::listing_cuda(in.data(), raw.data(), n, gpu_n);
      listing::listing_cush(in.data(), with_cush.data(), n, gpu_n);
      for (std::size_t i = 0; i < n; ++i) {
        const float expect = 3.0F * in[i] - 1.0F;
        ASSERT_FLOAT_EQ(raw[i], expect) << i;
        ASSERT_EQ(with_cush[i], raw[i]) << i;
      }
    }
  }
}
