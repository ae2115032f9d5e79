// Case "matmul": the single-GPU reference, raw multi-GPU CUDA, cush and cuBLASXt against a host
// product, for float and double, awkward shapes (odd, prime, fewer rows than GPUs), on 1 and 2
// GPUs.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "matmul.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace {

using cases::matmul::Dims;

// C = A B on the host in long double, with sum |a||b| per element for the error bound.
struct Reference {
  std::vector<long double> c, magnitude;
};

template <class T>
Reference host_product(const std::vector<T>& a, const std::vector<T>& b, Dims d) {
  Reference r{std::vector<long double>(d.m * d.p), std::vector<long double>(d.m * d.p)};
  for (std::size_t i = 0; i < d.m; ++i)
    for (std::size_t k = 0; k < d.n; ++k) {
      const long double aik = a[i * d.n + k];
      for (std::size_t j = 0; j < d.p; ++j) {
        r.c[i * d.p + j] += aik * b[k * d.p + j];
        r.magnitude[i * d.p + j] += std::fabs(aik * b[k * d.p + j]);
      }
    }
  return r;
}

// Every element within the bound of a length-n dot product in T (with a safety factor of 2).
template <class T>
void expect_product(const std::vector<T>& c, const Reference& r, Dims d, const std::string& what) {
  const long double eps = std::numeric_limits<T>::epsilon();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const long double bound = 2.0L * static_cast<long double>(d.n) * eps * r.magnitude[i] + 1e-30L;
    if (!(std::fabs(static_cast<long double>(c[i]) - r.c[i]) <= bound) && bad++ < 5)
      ADD_FAILURE() << what << ": C[" << i / d.p << "][" << i % d.p << "] = " << c[i] << ", expected "
                    << static_cast<double>(r.c[i]) << " within " << static_cast<double>(bound);
  }
  EXPECT_EQ(bad, 0U) << what;
}

template <class T>
void check_all_variants() {
  const std::vector<Dims> shapes = {{1, 1, 1}, {1, 7, 3}, {3, 1, 5}, {7, 13, 5}, {97, 61, 103}, {257, 131, 199},
                                    {1031, 263, 517}};
  for (const Dims d : shapes) {
    SCOPED_TRACE("m=" + std::to_string(d.m) + " n=" + std::to_string(d.n) + " p=" + std::to_string(d.p));
    std::vector<T> a(d.m * d.n), b(d.n * d.p);
    cush_test::fill_random(std::span<T>(a));
    cush_test::fill_random(std::span<T>(b));
    const Reference ref = host_product(a, b, d);
    std::vector<T> c(d.m * d.p, std::numeric_limits<T>::quiet_NaN());
    cases::matmul::multiply<cases::matmul::Single>(a.data(), b.data(), c.data(), d, cases::Devices::first(1));
    expect_product(c, ref, d, "single");
    for (const std::vector<int>& order : cush_test::device_orders()) {
      SCOPED_TRACE("devices " + cush_test::to_string(order));
      const cases::Devices gpus = cases::Devices::of(order);
      // The rule's row blocks (one block at these sizes), then several: the pipelined path, also
      // with more blocks than a GPU has rows.
      for (std::size_t blocks : {std::size_t{0}, std::size_t{3}}) {
        SCOPED_TRACE("blocks=" + std::to_string(blocks));
        std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());
        cases::matmul::MultiCuda<T>(d, gpus, blocks).run(a.data(), b.data(), c.data());
        expect_product(c, ref, d, "multi_cuda");
        std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());
        cases::matmul::MultiCush<T>(d, gpus, blocks).run(a.data(), b.data(), c.data());
        expect_product(c, ref, d, "multi_cush");
      }
      std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());
      cases::matmul::multiply<cases::matmul::MultiCush>(a.data(), b.data(), c.data(), d, gpus);
      expect_product(c, ref, d, "multi_cush, end to end");
      // cuBLASXt takes no GPU twice: not on virtual GPUs that share one.
      if (std::set<int>(gpus.cuda.begin(), gpus.cuda.end()).size() < gpus.cuda.size()) continue;
      std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());
      cases::matmul::Xt<T>(gpus, 128).multiply(a.data(), b.data(), c.data(), d);
      expect_product(c, ref, d, "cublasxt");
    }
  }
}

// The cuBLAS handles live until the end of the program; release them then, as an application
// would (compute-sanitizer's leak check counts what is left).
class ReleaseHandles : public ::testing::Environment {
 public:
  void TearDown() override { cases::matmul::release_blas_handles(); }
};
[[maybe_unused]] ::testing::Environment* const release_handles =
    ::testing::AddGlobalTestEnvironment(new ReleaseHandles);

}  // namespace

TEST(CaseMatmul, FloatVariantsAgreeWithTheHostProduct) {
  CUSH_REQUIRE_GPUS(1);
  check_all_variants<float>();
}

TEST(CaseMatmul, DoubleVariantsAgreeWithTheHostProduct) {
  CUSH_REQUIRE_GPUS(1);
  check_all_variants<double>();
}

// multiply() on resident data runs again and again; the result stays the product (beta = 0).
// The C that run() brought back is overwritten first, so download() must bring it again.
TEST(CaseMatmul, RepeatedMultipliesOnResidentData) {
  CUSH_REQUIRE_GPUS(1);
  const Dims d{211, 89, 67};
  std::vector<float> a(d.m * d.n), b(d.n * d.p);
  cush_test::fill_random(std::span<float>(a));
  cush_test::fill_random(std::span<float>(b));
  const Reference ref = host_product(a, b, d);
  const cases::Devices gpus = cases::Devices::first(cush::DeviceSet::available());
  cases::matmul::MultiCush<float> with_cush(d, gpus, 4);
  cases::matmul::MultiCuda<float> raw(d, gpus, 4);
  cases::matmul::Single<float> single(d, gpus);
  std::vector<float> c(d.m * d.p, NAN);
  with_cush.run(a.data(), b.data(), c.data());
  expect_product(c, ref, d, "multi_cush, run");
  raw.run(a.data(), b.data(), c.data());
  expect_product(c, ref, d, "multi_cuda, run");
  single.run(a.data(), b.data(), c.data());
  expect_product(c, ref, d, "single, run");
  for (int rep = 0; rep < 3; ++rep) {
    single.multiply();
    with_cush.multiply();
    raw.multiply();
  }
  with_cush.wait();
  raw.wait();
  single.wait();
  std::fill(c.begin(), c.end(), NAN);
  single.download(c.data());
  expect_product(c, ref, d, "single");
  std::fill(c.begin(), c.end(), NAN);
  with_cush.download(c.data());
  expect_product(c, ref, d, "multi_cush");
  std::fill(c.begin(), c.end(), NAN);
  raw.download(c.data());
  expect_product(c, ref, d, "multi_cuda");
}

// Shapes are checked before anything touches a GPU, so this runs everywhere.
TEST(CaseMatmul, RejectsEmptyAndOversizedShapes) {
  const cases::Devices gpu0{{0}, {0}};  // named, not looked up: nothing is touched
  EXPECT_THROW(cases::matmul::MultiCush<float>(Dims{0, 1, 1}, gpu0), cush::InvalidArgument);
  EXPECT_THROW(cases::matmul::MultiCuda<float>(Dims{1, 0, 1}, gpu0), cush::InvalidArgument);
  EXPECT_THROW(cases::matmul::Single<float>(Dims{1, 1, 0}, gpu0), cush::InvalidArgument);
  EXPECT_THROW(cases::matmul::Single<float>(Dims{std::size_t{1} << 31, 1, 1}, gpu0), cush::InvalidArgument);
  EXPECT_EQ(cases::matmul::flops(cases::matmul::seed_dims(2)), 2.0 * 800 * 1600 * 800);
}

// The block rule: one block for small products, never more than 8 or more than a GPU has rows,
// at least 16 MiB of A per GPU in each block. Host only.
TEST(CaseMatmul, BlockCountFollowsTheRule) {
  using cases::matmul::block_count;
  for (int gpus : {1, 2, 3, 8}) {
    for (const Dims d : {Dims{1, 1, 1}, Dims{7, 3, 5}, Dims{400, 800, 400}, cases::matmul::seed_dims(8),
                         cases::matmul::seed_dims(20), Dims{5, std::size_t{1} << 28, 1}}) {
      SCOPED_TRACE("gpus=" + std::to_string(gpus) + " m=" + std::to_string(d.m) + " n=" + std::to_string(d.n));
      const std::size_t blocks = block_count(d, gpus, sizeof(float));
      const std::size_t rows = d.m / gpus;
      EXPECT_GE(blocks, 1U);
      EXPECT_LE(blocks, 8U);
      if (rows > 0) EXPECT_LE(blocks, rows);
      if (blocks > 1) EXPECT_GE(rows / blocks * d.n * sizeof(float), std::size_t{16} << 20);
    }
  }
  EXPECT_EQ(block_count(Dims{400, 800, 400}, 1, sizeof(float)), 1U);
  EXPECT_EQ(block_count(cases::matmul::seed_dims(20), 1, sizeof(float)), 8U);
  EXPECT_EQ(block_count(cases::matmul::seed_dims(8), 1, sizeof(float)), 4U);
  EXPECT_EQ(block_count(cases::matmul::seed_dims(8), 2, sizeof(float)), 2U);
}


// Injected faults (support/faults.hpp): every checked CUDA and cuBLAS call of the cush variant,
// pipelined in 3 blocks, fails once; each failure is a cush error naming the call, and leaves no
// GPU memory behind.
TEST(CaseMatmul, CushVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices gpus = cases::Devices::first(cush::DeviceSet::available());
  const Dims d{48 * static_cast<std::size_t>(gpus.count()) + 5, 33, 41};
  std::vector<float> a(d.m * d.n), b(d.n * d.p);
  cush_test::fill_random(std::span<float>(a));
  cush_test::fill_random(std::span<float>(b));
  cush_test::SameAsFirst<std::vector<float>> same("matmul, cush");
  const auto multiply = [&] {
    std::vector<float> c(d.m * d.p);
    cases::matmul::MultiCush<float>(d, gpus, 3).run(a.data(), b.data(), c.data());
    same(c);
  };
  cush_test::walk_faults("matmul, cush variant", multiply, multiply);
}
