// Case "lbm", GPU: every variant against the single-GPU reference, bit for bit (they share the
// kernels, so any difference is an exchange or ordering bug), on an odd duct that splits along z
// over 1, 2, 3, 4 and 8 GPUs (slabs of uneven thickness too); the reference against the physics:
// A-B pull equals esoteric pull, the steady duct matches White's series at second order, mass is
// conserved. Skips where the host has no GPU (tests/support/gpu.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cush/device_buffer.hpp"
#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/stream.hpp"
#include "cell.hpp"
#include "kernels.hpp"
#include "lbm.hpp"
#include "test_support.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"

namespace lbm = cases::lbm;

namespace {

using lbm_test::fluid_mass;
using lbm_test::same_bits;

// 19 x 23 x 24: no dimension fills a warp or a block; 24 layers split evenly over 1, 2, 3, 4, 8
// GPUs and unevenly over 5, 6, 7.
const lbm::Duct kDuct{19, 23, 24, 0.8, 2e-5};

template <class V>
constexpr bool kMultiGpu = !std::is_same_v<V, lbm::Single>;

const char* name(lbm::Pattern p) { return p == lbm::Pattern::ab ? "A-B" : "esoteric"; }
const char* name(lbm::Storage s) { return s == lbm::Storage::fp32 ? "fp32" : "fp16s"; }

// `steps` steps run as run(first), run(steps - first): state carried between calls (the current
// lattice, the parity) is tested too.
template <class V>
lbm::Moments moments_after(const lbm::Duct& d, const cases::Devices& gpus, lbm::Options o, std::size_t steps,
                           std::size_t first) {
  V v(d, gpus, o);
  v.run(first);
  v.run(steps - first);
  v.wait();
  return v.moments();
}


// The device lists a variant is tested on: one GPU for the reference; for the multi-GPU variants
// every count the host has up to 8, and two GPUs in reverse order.
template <class V>
std::vector<std::vector<int>> device_lists() {
  if (!kMultiGpu<V>) return {cush_test::first_devices(1)};
  const int n = std::min(8, cush::DeviceSet::available());
  std::vector<std::vector<int>> lists;
  for (int c = 1; c <= n; ++c) lists.push_back(cush_test::first_devices(c));
  if (n >= 2) lists.push_back({1, 0});
  return lists;
}


// The duct of `fluid` x `fluid` fluid cells run from rest to its steady state (1.2 M^2 / nu + 200
// steps), u_max = 0.05: the L2 error of u_z, the worst over the layers.
double steady_error(std::size_t fluid, double tau, lbm::Storage storage, std::size_t nz = 4) {
  lbm::Duct d{fluid + 2, fluid + 2, nz, tau, 0.0};
  d.force = lbm::force_for(d, 0.05);
  const auto steps = static_cast<std::size_t>(1.2 * static_cast<double>(fluid * fluid) / d.viscosity()) + 200;
  // Waits every kSyncEvery steps: compute-sanitizer's racecheck keeps host memory for every launch
  // until the host next synchronizes (megabytes each), and M = 64's 49,352 steps run unbroken
  // outgrew the 128 GiB host (docs/reliability.md, "Racecheck's host memory"). Waiting changes no
  // bit: a run split over calls equals one run (LbmVariant.MatchesTheSingleGpuReferenceBitForBit).
  constexpr std::size_t kSyncEvery = 1000;
  lbm::Single v(d, cases::Devices::first(1), {lbm::Pattern::esoteric, storage});
  for (std::size_t done = 0; done < steps; done += kSyncEvery) {
    v.run(std::min(kSyncEvery, steps - done));
    v.wait();
  }
  const lbm::Moments m = v.moments();
  double worst = 0;
  for (std::size_t z = 0; z < nz; ++z) worst = std::max(worst, lbm::l2_error(d, m, z));
  return worst;
}

}  // namespace

// --- every variant against the reference --------------------------------------------------------

template <class V>
class LbmVariant : public ::testing::Test {};

// The variants under test.
using Variants = ::testing::Types<lbm::Single, lbm::MultiCuda, lbm::MultiCush>;
TYPED_TEST_SUITE(LbmVariant, Variants);

// 100 steps as 37 + 63, every pattern and storage, every device list, with and without overlap:
// the same bits as the single-GPU reference run as one call of 100 steps. The fluid starts with a
// density perturbation that differs in every cell, so an exchange that moved the wrong layer or
// population shows.
TYPED_TEST(LbmVariant, MatchesTheSingleGpuReferenceBitForBit) {
  using V = TypeParam;
  CUSH_REQUIRE_GPUS(1);
  for (lbm::Pattern pattern : {lbm::Pattern::ab, lbm::Pattern::esoteric})
    for (lbm::Storage storage : {lbm::Storage::fp32, lbm::Storage::fp16s}) {
      constexpr float kPerturbation = 1e-3f;
      const lbm::Moments want =
          moments_after<lbm::Single>(kDuct, cases::Devices::first(1), {pattern, storage, true, kPerturbation}, 100, 100);
      ASSERT_GT(std::fabs(want.uz[9 + kDuct.nx * 11]), 1e-6) << "the flow has not started";
      const std::size_t layer = kDuct.nx * kDuct.ny;
      ASSERT_NE(want.rho[9 + kDuct.nx * 11], want.rho[9 + kDuct.nx * 11 + 5 * layer]) << "z layers alike";
      for (const std::vector<int>& ids : device_lists<V>())
        for (bool overlap : {true, false}) {
          if (!kMultiGpu<V> && !overlap) continue;
          const lbm::Options o{pattern, storage, overlap, kPerturbation};
          EXPECT_TRUE(same_bits(moments_after<V>(kDuct, cases::Devices::of(ids), o, 100, 37), want))
              << name(pattern) << " " << name(storage) << (overlap ? ", overlap" : ", no overlap") << ", devices "
              << cush_test::to_string(ids);
        }
    }
}

// More GPUs than z layers: a slab thinner than one layer is rejected, before any device is used.
TYPED_TEST(LbmVariant, RejectsSlabsThinnerThanOneLayer) {
  using V = TypeParam;
  if constexpr (!kMultiGpu<V>) {
    GTEST_SKIP() << "the single-GPU variant has no slabs";
  } else {
    CUSH_REQUIRE_GPUS(1);
    const int n = std::min(8, cush::DeviceSet::available());
    if (n >= 2) {
      const lbm::Duct d{9, 9, static_cast<std::size_t>(n - 1), 0.8, 1e-5};
      // std::invalid_argument from the raw variant, cush::InvalidArgument from cush's decomposition.
      EXPECT_THROW(V(d, cases::Devices::first(n), {}), std::exception) << n << " GPUs, " << n - 1 << " layers";
    }
  }
}

// --- the reference ----------------------------------------------------------------------------

TEST(LbmGpu, StartsAtRest) {
  CUSH_REQUIRE_GPUS(1);
  for (lbm::Pattern pattern : {lbm::Pattern::ab, lbm::Pattern::esoteric})
    for (lbm::Storage storage : {lbm::Storage::fp32, lbm::Storage::fp16s}) {
      lbm::Single v(kDuct, cases::Devices::first(1), {pattern, storage});
      const lbm::Moments m = v.moments();
      const float half_force = 0.5f * static_cast<float>(kDuct.force);
      for (std::size_t n = 0; n < kDuct.cells(); ++n) {
        const std::size_t x = n % kDuct.nx, y = n / kDuct.nx % kDuct.ny;
        const bool fluid = x > 0 && x + 1 < kDuct.nx && y > 0 && y + 1 < kDuct.ny;
        ASSERT_EQ(m.rho[n], 1.0f) << n;
        ASSERT_EQ(m.ux[n], 0.0f) << n;
        ASSERT_EQ(m.uy[n], 0.0f) << n;
        ASSERT_EQ(m.uz[n], fluid ? half_force : 0.0f) << n;  // u = (sum f c + F / 2) / rho
      }
    }
}

// A-B pull and esoteric pull are the same scheme (cell.hpp): the same bits on the GPU too, also on
// a duct of one layer (z wraps onto itself).
TEST(LbmGpu, AbEqualsEsotericBitForBit) {
  CUSH_REQUIRE_GPUS(1);
  for (const lbm::Duct& d : {kDuct, lbm::Duct{34, 5, 1, 0.6, -3e-5}})
    for (lbm::Storage storage : {lbm::Storage::fp32, lbm::Storage::fp16s}) {
      const cases::Devices one = cases::Devices::first(1);
      const lbm::Moments ab = moments_after<lbm::Single>(d, one, {lbm::Pattern::ab, storage}, 100, 37);
      const lbm::Moments eso = moments_after<lbm::Single>(d, one, {lbm::Pattern::esoteric, storage}, 100, 37);
      EXPECT_TRUE(same_bits(eso, ab)) << name(storage) << ", " << d.nx << "x" << d.ny << "x" << d.nz;
    }
}

// The steady duct of 32 x 32 fluid cells against White's series (spec §2): FP32 within
// 2 C(tau) / M^2 (C = 0.95 at tau = 0.8), FP16S within 3% (tau = 0.6, where FP16S is most
// accurate for this slow flow).
TEST(LbmGpu, SteadyDuctMatchesTheAnalyticProfile) {
  CUSH_REQUIRE_GPUS(1);
  const double fp32 = steady_error(32, 0.8, lbm::Storage::fp32);
  EXPECT_LT(fp32, 2 * 0.95 / (32.0 * 32.0));
  const double fp16s = steady_error(32, 0.6, lbm::Storage::fp16s);
  EXPECT_LT(fp16s, 0.03);
  std::printf("steady duct L2, M = 32: fp32 tau 0.8 %.3e, fp16s tau 0.6 %.3e\n", fp32, fp16s);
}

// Second order: the error falls about fourfold from M = 16 to 32 to 64 (FP32, tau = 0.8).
TEST(LbmGpu, SteadyDuctConvergesAtSecondOrder) {
  CUSH_REQUIRE_GPUS(1);
  const double e16 = steady_error(16, 0.8, lbm::Storage::fp32, 2);
  const double e32 = steady_error(32, 0.8, lbm::Storage::fp32, 2);
  const double e64 = steady_error(64, 0.8, lbm::Storage::fp32, 2);
  EXPECT_GT(e16 / e32, 3.0) << e16 << ", " << e32;
  EXPECT_GT(e32 / e64, 3.0) << e32 << ", " << e64;
  EXPECT_LT(e64, 2 * 0.95 / (64.0 * 64.0));
  std::printf("steady duct L2, tau 0.8: M = 16 %.3e, 32 %.3e, 64 %.3e\n", e16, e32, e64);
}

// Mass: the sum of rho over the fluid cells drifts by less than 1e-5 (relative) over 2000 steps,
// FP32, both patterns.
TEST(LbmGpu, MassIsConserved) {
  CUSH_REQUIRE_GPUS(1);
  for (lbm::Pattern pattern : {lbm::Pattern::ab, lbm::Pattern::esoteric}) {
    lbm::Single v(kDuct, cases::Devices::first(1), {pattern, lbm::Storage::fp32});
    const double m0 = fluid_mass(kDuct, v.moments());
    v.run(2000);
    const lbm::Moments m = v.moments();
    EXPECT_NEAR(fluid_mass(kDuct, m) / m0, 1.0, 1e-5) << name(pattern);
    EXPECT_GT(m.uz[9 + kDuct.nx * 11], 1e-3f) << name(pattern) << ": the flow has not developed";
  }
}

// The esoteric kernel adds 32-bit slot offsets where they fit and 64-bit ones where they do not
// (cell.hpp, esoteric_offsets_fit_32): the same duct in a slab whose populations are 2^27
// elements apart (18 of them pass 2^31) takes the 64-bit path and must give the same bits as the
// 32-bit one, over 10 steps of both parities from a perturbed state, for both storages. FP16S
// takes a different shape on each (kernels.cu, Cells): pairs of cells on the 32-bit slab, one
// cell on the 64-bit one, and two rows on a third slab whose odd population stride does not suit
// pairs (cell::esoteric_pairs_fit); it must give the same bits too.
TEST(LbmGpu, EsotericStepWith64BitOffsetsEqualsThe32BitOne) {
  CUSH_REQUIRE_GPUS(1);
  const lbm::Physics physics = lbm::physics(kDuct);
  for (lbm::Storage storage : {lbm::Storage::fp32, lbm::Storage::fp16s}) {
    const std::size_t bytes = lbm::storage_bytes(storage);
    lbm::Slab small;
    small.nx = static_cast<int>(kDuct.nx);
    small.ny = static_cast<int>(kDuct.ny);
    small.nz = static_cast<int>(kDuct.nz);
    small.pitch = lbm::padded_pitch(kDuct.nx);
    const std::size_t stored = small.pitch * kDuct.ny * kDuct.nz;
    small.stride = (stored + 63) / 64 * 64;
    lbm::Slab big = small, odd = small;
    big.stride = std::size_t{1} << 27;
    odd.stride = small.stride + 1;
    ASSERT_TRUE(cases::lbm::cell::esoteric_offsets_fit_32(small));
    ASSERT_FALSE(cases::lbm::cell::esoteric_offsets_fit_32(big));
    std::size_t free = 0, total = 0;
    CUSH_CUDA_CHECK(cudaSetDevice(0));
    CUSH_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (free < lbm::kQ * big.stride * bytes + (std::size_t{1} << 30))
      GTEST_SKIP() << "needs " << (lbm::kQ * big.stride * bytes >> 20) << " MiB free on GPU 0";
    cush::DeviceBuffer a(0, lbm::kQ * small.stride * bytes), b(0, lbm::kQ * big.stride * bytes),
        c(0, lbm::kQ * odd.stride * bytes);
    small.f = a.data();
    big.f = b.data();
    odd.f = c.data();
    ASSERT_TRUE(cases::lbm::cell::esoteric_pairs_fit(small));
    ASSERT_FALSE(cases::lbm::cell::esoteric_pairs_fit(odd));
    cush::Stream stream(0);
    for (lbm::Slab* slab : {&small, &big, &odd}) {
      lbm::launch_rest(*slab, storage, stream.get());
      lbm::launch_perturb(*slab, 0, slab->nz, 1e-3f, storage, stream.get());
      for (int t = 1; t <= 10; ++t) lbm::launch_esoteric_step(*slab, 0, slab->nz, t % 2, storage, physics, stream.get());
    }
    // The stored cells of every population, packed.
    const auto download = [&](const lbm::Slab& slab) {
      std::vector<unsigned char> host(lbm::kQ * stored * bytes);
      for (int i = 0; i < lbm::kQ; ++i)
        CUSH_CUDA_CHECK(cudaMemcpyAsync(host.data() + static_cast<std::size_t>(i) * stored * bytes,
                                        static_cast<char*>(slab.f) + i * slab.stride * bytes, stored * bytes,
                                        cudaMemcpyDeviceToHost, stream.get()));
      stream.synchronize();
      return host;
    };
    const std::vector<unsigned char> from_small = download(small);
    EXPECT_TRUE(download(big) == from_small) << name(storage) << ": 64-bit offsets";
    EXPECT_TRUE(download(odd) == from_small) << name(storage) << ": odd stride";
    EXPECT_NE(std::count(from_small.begin(), from_small.end(), 0), static_cast<std::ptrdiff_t>(from_small.size()))
        << name(storage) << ": the state did not move";
  }
}

TEST(LbmGpu, BadDuctsAreRejected) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices one = cases::Devices::first(1);
  EXPECT_THROW(lbm::Single(lbm::Duct{2, 9, 4, 0.8, 0}, one), std::invalid_argument);
  EXPECT_THROW(lbm::Single(lbm::Duct{9, 9, 0, 0.8, 0}, one), std::invalid_argument);
  EXPECT_THROW(lbm::Single(lbm::Duct{9, 9, 4, 0.5, 0}, one), std::invalid_argument);
  EXPECT_THROW(lbm::Single(kDuct, cases::Devices{}), std::invalid_argument);
}

// Injected faults (support/faults.hpp): every checked CUDA call of the cush variant fails once,
// with and without overlap, both patterns and storages; each failure is a cush error naming the
// call, and leaves no GPU memory behind.
TEST(LbmGpu, CushVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices gpus = cases::Devices::first(std::min(8, cush::DeviceSet::available()));
  for (const lbm::Options o : {lbm::Options{lbm::Pattern::esoteric, lbm::Storage::fp16s, true, 1e-3f},
                               lbm::Options{lbm::Pattern::ab, lbm::Storage::fp32, false, 1e-3f}}) {
    cush_test::SameAsFirst<lbm::Moments> same("lbm, cush", [](const lbm::Moments& a, const lbm::Moments& b) {
      return static_cast<bool>(same_bits(a, b));
    });
    const auto steps = [&] { same(moments_after<lbm::MultiCush>(kDuct, gpus, o, 3, 1)); };
    cush_test::walk_faults(std::string("lbm, cush variant, ") + name(o.pattern) + " " + name(o.storage) +
                               (o.overlap ? ", overlap" : ""),
                           steps, steps);
  }
}
