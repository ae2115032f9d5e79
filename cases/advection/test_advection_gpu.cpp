// Case "advection": the fused kernel against one-step launches bit for bit, and every variant and
// schedule against the host reference step, on odd grids (sizes that fill no thread block and no
// z run exactly), on every GPU count the host has.

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <cstring>

#include "advection.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace adv = cases::advection;

namespace {

std::vector<double> host_steps(std::vector<double> u, adv::Grid g, const std::array<double, 27>& a, std::size_t steps) {
  std::vector<double> next(u.size());
  for (std::size_t s = 0; s < steps; ++s) {
    adv::step_host(u, next, g, a);
    u.swap(next);
  }
  return u;
}

// Runs `steps` steps as run(first) then run(steps - first), so that state carried between calls
// (the current buffer, a deep halo's cycle) is tested too.
template <class V>
std::vector<double> gpu_steps(const std::vector<double>& in, adv::Grid g, const std::array<double, 27>& a,
                              const cases::Devices& gpus, adv::Options o, std::size_t steps, std::size_t first) {
  V v(g, a, gpus, o);
  v.upload(in.data());
  v.run(first);
  v.run(steps - first);
  v.wait();
  std::vector<double> out(in.size(), NAN);
  v.download(out.data());
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << ": point " << i << " is " << got[i] << ", expected " << want[i];
  EXPECT_EQ(bad, 0U) << what;
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0 && bad++ < 5)
      ADD_FAILURE() << what << ": point " << i << " is " << got[i] << ", expected the bits of " << want[i];
  EXPECT_EQ(bad, 0U) << what;
}

const std::array<double, 27> kCoefficients = adv::coefficients({1.0, -0.7, 0.4}, {0.9, 0.9, 0.9});

// A device buffer of `cells` doubles, freed at the end of the scope.
struct DeviceBuffer {
  double* p = nullptr;
  explicit DeviceBuffer(std::size_t cells) { CUSH_CUDA_CHECK(cudaMalloc(&p, cells * sizeof(double))); }
  ~DeviceBuffer() { CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(p)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// launch_stencil_steps(T) on `box` of an array of random values (ghosts too) against T
// launch_stencil calls on boxes shrinking by a cell a step, both in the 27-term or both in the
// factorized form; the box's cells must have the same bytes, and the cells around it must be left
// alone.
void check_fused(adv::Box box, std::size_t steps, long offset, adv::FusedSchedule schedule, bool factorized) {
  const std::size_t cells = static_cast<std::size_t>(offset + box.pitch_x * box.pitch_y * (box.z0 + box.nz + 8));
  std::vector<double> in(cells), out(cells, NAN), want(cells, NAN);
  cush_test::fill_random(std::span<double>(in));
  DeviceBuffer a(cells), b(cells), d(cells), c(cells), fused(cells);  // b, d: the levels between
  CUSH_CUDA_CHECK(cudaMemcpy(a.p, in.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
  CUSH_CUDA_CHECK(cudaMemcpy(fused.p, out.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
  CUSH_CUDA_CHECK(cudaMemcpy(c.p, out.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
  const adv::Coefficients k = adv::kernel_coefficients(kCoefficients, factorized);
  adv::launch_stencil_steps(a.p + offset, fused.p + offset, box, k, steps, nullptr, schedule);
  const double* from = a.p;
  for (std::size_t s = 0; s < steps; ++s) {
    double* to = s + 1 == steps ? c.p : (s % 2 == 0 ? b.p : d.p);
    adv::launch_stencil(from + offset, to + offset, cases::grown(box, static_cast<long>(steps - 1 - s)), k, nullptr);
    from = to;
  }
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  CUSH_CUDA_CHECK(cudaMemcpy(out.data(), fused.p, cells * sizeof(double), cudaMemcpyDeviceToHost));
  CUSH_CUDA_CHECK(cudaMemcpy(want.data(), c.p, cells * sizeof(double), cudaMemcpyDeviceToHost));
  const std::string what = std::string(factorized ? "factorized, " : "") +
                           (schedule == adv::FusedSchedule::staged ? "staged, " : "skewed, ") +
                           std::to_string(steps) + " steps on " + std::to_string(box.nx) + "x" + std::to_string(box.ny) +
                           "x" + std::to_string(box.nz) + " at (" + std::to_string(box.x0) + ", " +
                           std::to_string(box.y0) + ", " + std::to_string(box.z0) + "), offset " + std::to_string(offset);
  std::size_t bad = 0, outside = 0;
  for (long z = 0; z < box.z0 + box.nz + 8; ++z)
    for (long y = 0; y < box.pitch_y; ++y)
      for (long x = 0; x < box.pitch_x; ++x) {
        const std::size_t i = static_cast<std::size_t>(offset + (z * box.pitch_y + y) * box.pitch_x + x);
        const bool inside = x >= box.x0 && x < box.x0 + box.nx && y >= box.y0 && y < box.y0 + box.ny && z >= box.z0 &&
                            z < box.z0 + box.nz;
        if (!inside) {
          outside += std::isnan(out[i]) ? 0 : 1;
        } else if (std::memcmp(&out[i], &want[i], sizeof(double)) != 0 && bad++ < 5) {
          ADD_FAILURE() << what << ": cell (" << x << ", " << y << ", " << z << ") is " << out[i] << ", expected "
                        << want[i];
        }
      }
  EXPECT_EQ(bad, 0U) << what;
  EXPECT_EQ(outside, 0U) << what << ": cells outside the box written";
}

}  // namespace

// The fused kernel, in both schedules, gives the bits of one-step launches for every T, on boxes
// that fill no tile, no strip and no z run, start anywhere in a row (aligned or not), are one cell
// thin, or are split into many z runs with a short last one.
TEST(CaseAdvection, FusedKernelEqualsOneStepLaunchesBitForBit) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for (const bool factorized : {false, true})
  for (const adv::FusedSchedule schedule : {adv::FusedSchedule::staged, adv::FusedSchedule::skewed})
  for (std::size_t steps = 1; steps <= adv::kMaxFusedSteps; ++steps) {
    const long h = static_cast<long>(steps);
    // pitch: padded to 16 cells (aligned tiles) or odd; offset: the first ghost cell's place.
    for (const auto& [nx, ny, nz, pitch_pad, offset] :
         std::vector<std::array<long, 5>>{{1, 1, 1, 16, 0}, {37, 19, 13, 16, 16 - 4}, {37, 19, 13, 0, 3},
                                          {130, 3, 5, 16, 5}, {2, 70, 9, 0, 0}, {65, 17, 1, 16, 16 - h}}) {
      const long pitch_x = pitch_pad == 0 ? nx + 2 * h + 1 : (nx + 2 * h + 15) / 16 * 16;
      check_fused(adv::Box{h, h, h, nx, ny, nz, pitch_x, ny + 2 * h}, steps, offset, schedule, factorized);
    }
    // A box inside a larger array, not at its start.
    check_fused(adv::Box{h + 3, h + 1, h + 2, 50, 21, 11, 80, 30}, steps, 16 - h, schedule, factorized);
  }
}

// Many z runs (over 2048 blocks of 16 planes or fewer), the last one shorter. (Apart from the small
// boxes so that the sanitizers can take those alone.)
TEST(CaseAdvection, FusedKernelOverManyZRunsEqualsOneStepLaunches) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for (const bool factorized : {false, true})
    for (const adv::FusedSchedule schedule : {adv::FusedSchedule::staged, adv::FusedSchedule::skewed})
      for (std::size_t steps = 2; steps <= adv::kMaxFusedSteps; ++steps) {
        const long h = static_cast<long>(steps);
        check_fused(adv::Box{h, h, h, 520, 520, 100, 528, 520 + 2 * h}, steps, 16 - h, schedule, factorized);
      }
}

TEST(CaseAdvection, SingleGpuMatchesTheHostStep) {
  CUSH_REQUIRE_GPUS(1);
  for (const adv::Grid g : {adv::Grid{1, 1, 1}, adv::Grid{3, 5, 2}, adv::Grid{17, 9, 23}, adv::Grid{33, 31, 20}}) {
    std::vector<double> in(g.points());
    cush_test::fill_random(std::span<double>(in));
    for (std::size_t steps : {0U, 1U, 4U, 7U})
      for (std::size_t fused = 1; fused <= adv::kMaxFusedSteps; ++fused)
        for (const bool factorized : {false, true}) {
          const std::string what = "single " + std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" +
                                   std::to_string(g.nz) + ", " + std::to_string(steps) + " steps, " +
                                   std::to_string(fused) + " fused" + (factorized ? ", factorized" : "");
          adv::Options o{adv::Schedule::bulk, 1, fused};
          o.factorized = factorized;
          expect_near(gpu_steps<adv::Single>(in, g, kCoefficients, cases::Devices::first(1), o, steps, steps / 2),
                      host_steps(in, g, kCoefficients, steps), what);
        }
  }
}

namespace {

// Every multi-GPU variant, schedule and depth on `gpus` GPUs; combinations the grid is too thin
// for (fewer z planes per GPU than ghost layers) are left out.
void check_multi_gpu(adv::Grid g, const cases::Devices& gpus, std::size_t steps, std::size_t first) {
  std::vector<double> in(g.points());
  cush_test::fill_random(std::span<double>(in));
  const std::vector<double> want = host_steps(in, g, kCoefficients, steps);
  const std::string on = std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) +
                         " on devices " + cush_test::to_string(gpus.cush) + ", " + std::to_string(steps) + " steps";
  const std::size_t planes = g.nz / static_cast<std::size_t>(gpus.count());
  for (adv::Schedule s : {adv::Schedule::bulk, adv::Schedule::overlap}) {
    const std::string name = s == adv::Schedule::bulk ? "bulk " : "overlap ";
    expect_near(gpu_steps<adv::MultiCuda>(in, g, kCoefficients, gpus, {s, 1}, steps, first), want, "raw " + name + on);
    expect_near(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, {s, 1}, steps, first), want, "cush " + name + on);
  }
  for (std::size_t depth : {2U, 3U}) {
    if (planes < depth || g.nx < depth || g.ny < depth) continue;
    expect_near(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, {adv::Schedule::bulk, depth}, steps, first), want,
                "cush depth " + std::to_string(depth) + " " + on);
  }
  for (std::size_t fused : {2U, 3U})
    for (adv::Schedule s : {adv::Schedule::bulk, adv::Schedule::overlap}) {
      if (planes < fused || g.nx < fused || g.ny < fused) continue;
      const std::string name = std::string(s == adv::Schedule::bulk ? "bulk" : "overlap") + ", " + std::to_string(fused) + " steps fused, ";
      const adv::Options o{s, 1, fused};
      expect_near(gpu_steps<adv::MultiCuda>(in, g, kCoefficients, gpus, o, steps, first), want, "raw " + name + on);
      expect_near(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, o, steps, first), want, "cush " + name + on);
    }
  // The factorized form: near the 27-term chain, and every variant, schedule and T gives the bits
  // of the single variant's one-step launches.
  adv::Options f{adv::Schedule::bulk, 1};
  f.factorized = true;
  const std::vector<double> single = gpu_steps<adv::Single>(in, g, kCoefficients, cases::Devices::first(1), f, steps, first);
  expect_near(single, want, "single factorized " + on);
  for (std::size_t fused : {1U, 2U})
    for (adv::Schedule s : {adv::Schedule::bulk, adv::Schedule::overlap}) {
      if (planes < fused || g.nx < fused || g.ny < fused) continue;
      const std::string name = std::string(s == adv::Schedule::bulk ? "bulk" : "overlap") + ", " + std::to_string(fused) +
                               " steps a launch, factorized, ";
      adv::Options o{s, 1, fused};
      o.factorized = true;
      expect_same(gpu_steps<adv::MultiCuda>(in, g, kCoefficients, gpus, o, steps, first), single, "raw " + name + on);
      expect_same(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, o, steps, first), single, "cush " + name + on);
    }
}

}  // namespace

// 5 steps run as 2 + 3: a deep-halo cycle of 2 or 3 cut at the end of a call. Every GPU count the
// grid has planes for, and every device order worth testing.
TEST(CaseAdvection, MultiGpuVariantsMatchTheHostStep) {
  CUSH_REQUIRE_GPUS(1);
  std::vector<std::vector<int>> orders = cush_test::device_orders();
  for (int count = 2; count < cush::DeviceSet::available(); ++count) orders.push_back(cush_test::first_devices(count));
  for (const adv::Grid g : {adv::Grid{3, 5, 6}, adv::Grid{17, 9, 23}, adv::Grid{33, 31, 20}})
    for (const std::vector<int>& order : orders)
      if (g.nz >= order.size()) check_multi_gpu(g, cases::Devices::of(order), 5, 2);
}

// Two GPUs, kernels large enough and enough steps for an ordering bug between the GPUs to show.
TEST(CaseAdvection, TwoGpusOverManySteps) {
  CUSH_REQUIRE_GPUS(2);
  check_multi_gpu(adv::Grid{96, 80, 72}, cases::Devices::of({1, 0}), 30, 13);
}

// The factorized form rounds differently from the 27-term chain; after 100 steps (25 fused
// launches of 4) it is still within 1e-12 of the host's 27-term steps.
TEST(CaseAdvection, FactorizedStaysWithinRoundingOfThe27TermChain) {
  CUSH_REQUIRE_GPUS(1);
  const adv::Grid g{33, 31, 20};
  std::vector<double> in(g.points());
  cush_test::fill_random(std::span<double>(in));
  const std::vector<double> want = host_steps(in, g, kCoefficients, 100);
  for (std::size_t fused : {1U, 4U}) {
    adv::Options o{adv::Schedule::bulk, 1, fused};
    o.factorized = true;
    const std::vector<double> got = gpu_steps<adv::Single>(in, g, kCoefficients, cases::Devices::first(1), o, 100, 37);
    expect_near(got, want, "factorized, 100 steps, " + std::to_string(fused) + " a launch");
    std::size_t differing = 0;  // and it is another order of rounding: some points differ
    for (std::size_t i = 0; i < got.size(); ++i) differing += std::memcmp(&got[i], &want[i], sizeof(double)) != 0;
    EXPECT_GT(differing, 0U) << "the factorized form gave the 27-term chain's bits everywhere";
  }
}

TEST(CaseAdvection, BadOptionsAreRejected) {
  CUSH_REQUIRE_GPUS(1);
  const adv::Grid g{8, 8, 8};
  const cases::Devices one = cases::Devices::first(1);
  EXPECT_THROW(adv::MultiCush(g, kCoefficients, one, {adv::Schedule::overlap, 2}), std::invalid_argument);
  EXPECT_THROW(adv::MultiCush(g, kCoefficients, one, {adv::Schedule::bulk, 0}), std::invalid_argument);
  for (std::size_t steps : {std::size_t{0}, adv::kMaxFusedSteps + 1}) {
    const adv::Options o{adv::Schedule::bulk, 1, steps};
    EXPECT_THROW(adv::Single(g, kCoefficients, one, o), std::invalid_argument);
    EXPECT_THROW(adv::MultiCuda(g, kCoefficients, one, o), std::invalid_argument);
    EXPECT_THROW(adv::MultiCush(g, kCoefficients, one, o), std::invalid_argument);
  }
  EXPECT_THROW(adv::MultiCush(g, kCoefficients, one, {adv::Schedule::bulk, 2, 2}), std::invalid_argument);
  EXPECT_THROW(adv::MultiCuda(adv::Grid{8, 8, 3}, kCoefficients, one, {adv::Schedule::bulk, 1, 4}), std::invalid_argument);
  std::array<double, 27> skewed = kCoefficients;  // no longer a product of per-axis weights
  skewed[5] += 1e-3;
  adv::Options factorized;
  factorized.factorized = true;
  EXPECT_THROW(adv::Single(g, skewed, one, factorized), std::invalid_argument);
  EXPECT_THROW(adv::MultiCuda(g, skewed, one, factorized), std::invalid_argument);
  EXPECT_THROW(adv::MultiCush(g, skewed, one, factorized), std::invalid_argument);
  EXPECT_NO_THROW(adv::Single(g, skewed, one, {}));  // the 27-term chain takes any coefficients
  const cases::Devices two{{0, 0}, {0, 0}};  // rejected before any device is used
  EXPECT_THROW(adv::MultiCuda(adv::Grid{8, 8, 1}, kCoefficients, two, {}), std::invalid_argument);
}

// Injected faults (support/faults.hpp): every checked CUDA call of the cush variant fails once,
// with the bulk and the overlapped schedule and a deep halo; each failure is a cush error naming
// the call, and leaves no GPU memory behind.
TEST(CaseAdvection, CushVariantFailsCleanlyAtEveryCheckedCall) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices gpus = cases::Devices::first(cush::DeviceSet::available());
  const adv::Grid g{13, 11, 3 * static_cast<std::size_t>(gpus.count()) + 1};
  std::vector<double> in(g.points());
  cush_test::fill_random(std::span<double>(in));
  for (const adv::Options o : {adv::Options{adv::Schedule::bulk, 1}, adv::Options{adv::Schedule::overlap, 1},
                               adv::Options{adv::Schedule::bulk, 2}, adv::Options{adv::Schedule::overlap, 1, 2}}) {
    cush_test::SameAsFirst<std::vector<double>> same("advection, cush");
    const auto steps = [&] { same(gpu_steps<adv::MultiCush>(in, g, kCoefficients, gpus, o, 3, 1)); };
    cush_test::walk_faults(std::string("advection, cush variant, ") +
                               (o.schedule == adv::Schedule::bulk ? "bulk" : "overlap") + ", depth " + std::to_string(o.depth) +
                               ", " + std::to_string(o.steps) + " steps fused",
                           steps, steps);
  }
}
