// Case "scale": the single-GPU reference, raw multi-GPU CUDA (seed Listing 2.1) and cush (Listing
// 2.2) do the same job on the same data, on every device order the host (or its virtual GPUs)
// offers, odd sizes.

#include <gtest/gtest.h>

#include <cmath>

#include "scale.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

TEST(CaseScale, AllVariantsAgreeWithTheHostReference) {
  CUSH_REQUIRE_GPUS(1);
  for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1'000'003}}) {
    std::vector<float> in(n), single(n, NAN);
    cush_test::fill_random(std::span<float>(in));
    cases::scale::single(in.data(), single.data(), n, cases::Devices::first(1));
    for (std::size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(single[i], 3.0F * in[i] - 1.0F) << i;
    for (const std::vector<int>& order : cush_test::device_orders()) {
      SCOPED_TRACE("devices " + cush_test::to_string(order) + " n=" + std::to_string(n));
      const cases::Devices gpus = cases::Devices::of(order);
      std::vector<float> raw(n, NAN), with_cush(n, NAN);
      cases::scale::multi_cuda(in.data(), raw.data(), n, gpus);
      cases::scale::multi_cush(in.data(), with_cush.data(), n, gpus);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(raw[i], single[i]) << i;
        ASSERT_EQ(with_cush[i], single[i]) << i;
      }
    }
  }
}

// Injected faults (support/faults.hpp): every checked CUDA call of the cush variant fails once;
// each failure is a cush error naming the call, and leaves no GPU memory behind.
TEST(CaseScale, CushVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  const std::size_t n = 100'003;
  std::vector<float> in(n);
  cush_test::fill_random(std::span<float>(in));
  const cases::Devices gpus = cases::Devices::first(cush::DeviceSet::available());
  cush_test::SameAsFirst<std::vector<float>> same("scale, cush");
  const auto scale = [&] {
    std::vector<float> out(n, NAN);
    cases::scale::multi_cush(in.data(), out.data(), n, gpus);
    same(out);
  };
  cush_test::walk_faults("scale, cush variant", scale, scale);
}
