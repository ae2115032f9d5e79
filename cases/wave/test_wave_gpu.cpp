// Case "wave": the streaming kernel against column-kernel steps, byte for byte; every variant,
// schedule and number of fused steps against the host leapfrog, byte for byte, at every order on
// odd grids and every GPU count the host has (virtual GPUs too); the discrete mode after 200
// steps; bad input; DiamondTorre's sweep against its host model, bit for bit.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

#include "coefficients.hpp"
#include "diamond.hpp"
#include "diamond_kernel.hpp"
#include "diamond_variant.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"
#include "reference.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "wave.hpp"

namespace wave = cases::wave;

namespace {

struct Levels {
  std::vector<double> prev, cur;
};

Levels random_levels(std::size_t n) {
  Levels l{std::vector<double>(n * n * n), std::vector<double>(n * n * n)};
  cush_test::fill_random(std::span<double>(l.prev));
  cush_test::fill_random(std::span<double>(l.cur));
  return l;
}

// `steps` host steps in place over the older level, the roles swapped after each.
Levels host_steps(Levels l, const wave::Problem& p, std::size_t steps) {
  const double courant2 = p.courant * p.courant;
  for (std::size_t s = 0; s < steps; ++s) {
    wave::step_host(p.order, courant2, p.n, l.prev, l.cur, l.prev);
    std::swap(l.prev, l.cur);
  }
  return l;
}

// Runs `steps` steps as run(first) then run(steps - first): the roles carried between calls.
template <class V, class O = wave::Options>
Levels gpu_steps(const Levels& in, const wave::Problem& p, const cases::Devices& gpus, O o, std::size_t steps,
                 std::size_t first) {
  V v(p, gpus, o);
  v.upload(in.prev.data(), in.cur.data());
  v.run(first);
  v.run(steps - first);
  v.wait();
  Levels out{std::vector<double>(in.prev.size(), NAN), std::vector<double>(in.cur.size(), NAN)};
  v.download(out.prev.data(), out.cur.data());
  return out;
}

void expect_same(const Levels& got, const Levels& want, const std::string& what) {
  for (const auto& [g, w, level] : {std::tuple{&got.prev, &want.prev, "older"}, std::tuple{&got.cur, &want.cur, "current"}}) {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < w->size(); ++i)
      if (std::memcmp(&(*g)[i], &(*w)[i], sizeof(double)) != 0 && bad++ < 5)
        ADD_FAILURE() << what << ", " << level << " level: node " << i << " is " << (*g)[i] << ", expected " << (*w)[i];
    EXPECT_EQ(bad, 0U) << what << ", " << level << " level";
  }
}

wave::Problem problem(std::size_t n, int order) { return {n, order, 0.9 * wave::courant_limit(order)}; }

std::string name(const wave::Problem& p, std::size_t steps) {
  return "order " + std::to_string(p.order) + ", " + std::to_string(p.n) + "^3, " + std::to_string(steps) + " steps";
}

// The fused steps a launch worth testing at `order`: 1, and 2 up to the most.
std::vector<std::size_t> fused_steps(int order) {
  std::vector<std::size_t> out;
  for (std::size_t t = 1; t <= wave::max_fused_steps(order); ++t) out.push_back(t);
  return out;
}

// A device buffer of `cells` doubles, freed at the end of the scope.
struct DeviceBuffer {
  double* p = nullptr;
  std::size_t cells = 0;
  explicit DeviceBuffer(const std::vector<double>& from) : cells(from.size()) {
    CUSH_CUDA_CHECK(cudaMalloc(&p, cells * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMemcpy(p, from.data(), from.size() * sizeof(double), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(p)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] std::vector<double> read() const {
    std::vector<double> out(cells);
    CUSH_CUDA_CHECK(cudaMemcpy(out.data(), p, cells * sizeof(double), cudaMemcpyDeviceToHost));
    return out;
  }
};

// launch_steps(T) on `box` of two random levels (ghosts too, `offset` cells into the arrays)
// against T column-kernel steps in place on boxes shrinking by a radius a step: both new levels
// must have the same bytes on the box and nothing around the box may be written. One step also
// in place over the older level, as launch_step uses it.
void check_streaming(const wave::Leapfrog& l, wave::Box box, std::size_t steps, long offset) {
  const auto cells = static_cast<std::size_t>(offset + box.pitch_x * box.pitch_y * (box.z0 + box.nz + 9));
  std::vector<double> older(cells), current(cells);
  cush_test::fill_random(std::span<double>(older));
  cush_test::fill_random(std::span<double>(current));
  const std::vector<double> untouched(cells, NAN);
  DeviceBuffer a(older), b(current), c(untouched), d(untouched), ref_a(older), ref_b(current);
  const std::string what = "order " + std::to_string(2 * l.radius) + ", " + std::to_string(steps) + " steps on " +
                           std::to_string(box.nx) + "x" + std::to_string(box.ny) + "x" + std::to_string(box.nz) +
                           " at (" + std::to_string(box.x0) + ", " + std::to_string(box.y0) + ", " +
                           std::to_string(box.z0) + "), offset " + std::to_string(offset);
  wave::launch_steps(wave::WaveLevels{a.p + offset, b.p + offset, c.p + offset, d.p + offset}, box, l, steps, nullptr);
  double* ref_older = ref_a.p;
  double* ref_current = ref_b.p;
  for (std::size_t s = 0; s < steps; ++s) {
    wave::launch_column_step(ref_older + offset, ref_current + offset, ref_older + offset,
                             cases::grown(box, static_cast<long>(steps - 1 - s) * l.radius), l, nullptr);
    std::swap(ref_older, ref_current);
  }
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<double> want_older = (ref_older == ref_a.p ? ref_a : ref_b).read();
  const std::vector<double> want = (ref_current == ref_a.p ? ref_a : ref_b).read();
  auto compare = [&](const std::vector<double>& got, const std::vector<double>& expected, const std::string& level) {
    std::size_t bad = 0, outside = 0;
    for (long z = 0; z < box.z0 + box.nz + 9; ++z)
      for (long y = 0; y < box.pitch_y; ++y)
        for (long x = 0; x < box.pitch_x; ++x) {
          const auto i = static_cast<std::size_t>(offset + (z * box.pitch_y + y) * box.pitch_x + x);
          const bool inside = x >= box.x0 && x < box.x0 + box.nx && y >= box.y0 && y < box.y0 + box.ny &&
                              z >= box.z0 && z < box.z0 + box.nz;
          if (!inside) outside += std::isnan(got[i]) ? 0 : 1;
          else if (std::memcmp(&got[i], &expected[i], sizeof(double)) != 0 && bad++ < 5)
            ADD_FAILURE() << what << ", " << level << ": cell (" << x << ", " << y << ", " << z << ") is " << got[i]
                          << ", expected " << expected[i];
        }
    EXPECT_EQ(bad, 0U) << what << ", " << level;
    EXPECT_EQ(outside, 0U) << what << ", " << level << ": cells outside the box written";
  };
  compare(d.read(), want, "the newest level");
  compare(c.read(), want_older, "the level before");
  if (steps == 1) {  // in place: the new level over the older one, nothing else written
    wave::launch_steps(wave::WaveLevels{a.p + offset, b.p + offset, nullptr, a.p + offset}, box, l, 1, nullptr);
    std::vector<double> got = a.read();
    for (std::size_t i = 0; i < cells; ++i)
      if (std::memcmp(&got[i], &older[i], sizeof(double)) == 0) got[i] = NAN;  // unchanged: as if untouched
    compare(got, want, "in place");
  }
}

using OneStep = void (*)(const double*, const double*, double*, const wave::Box&, const wave::Leapfrog&, cudaStream_t);

// A one-step kernel (launch_queue_step by default) on `box` of two random levels against
// launch_column_step: the same bytes on the box, out of place and in place over the older level,
// and nothing outside the box written.
void check_queue(const wave::Leapfrog& l, wave::Box box, long offset, OneStep step = wave::launch_queue_step) {
  const auto cells = static_cast<std::size_t>(offset + box.pitch_x * box.pitch_y * (box.z0 + box.nz + 9));
  std::vector<double> older(cells), current(cells);
  cush_test::fill_random(std::span<double>(older));
  cush_test::fill_random(std::span<double>(current));
  const std::vector<double> untouched(cells, NAN);
  DeviceBuffer a(older), b(current), out(untouched), ref(untouched);
  step(a.p + offset, b.p + offset, out.p + offset, box, l, nullptr);
  wave::launch_column_step(a.p + offset, b.p + offset, ref.p + offset, box, l, nullptr);
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<double> want = ref.read();
  const auto same = [&](const std::vector<double>& got, const std::string& how) {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < cells; ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0 && bad++ < 5)
        ADD_FAILURE() << "order " << 2 * l.radius << ", " << box.nx << "x" << box.ny << "x" << box.nz << ", " << how
                      << ": cell " << i << " is " << got[i] << ", expected " << want[i];
    EXPECT_EQ(bad, 0U) << "order " << 2 * l.radius << ", " << how;
  };
  same(out.read(), "out of place");  // NaN outside the box on both sides: nothing else written
  step(a.p + offset, b.p + offset, a.p + offset, box, l, nullptr);
  std::vector<double> in_place = a.read();
  for (std::size_t i = 0; i < cells; ++i)
    if (std::memcmp(&in_place[i], &older[i], sizeof(double)) == 0) in_place[i] = NAN;  // unchanged: as if untouched
  same(in_place, "in place");
}

// f(leapfrog, steps, ghost layers) for every order and number of steps a launch fuses.
template <class F>
void for_each_launch(F&& f) {
  for (int order : wave::kOrders) {
    const wave::Leapfrog l = wave::leapfrog(order, 0.9 * wave::courant_limit(order));
    for (std::size_t steps : fused_steps(order)) f(l, steps, static_cast<long>(steps) * l.radius);
  }
}

}  // namespace

// The streaming kernel, at every order and number of fused steps, gives the bits of column-kernel
// steps on boxes that fill no tile and no z run, start anywhere in a row, are one cell thin, or
// are split into many z runs with a short last one.
TEST(CaseWave, StreamingKernelEqualsColumnKernelSteps) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for_each_launch([](const wave::Leapfrog& l, std::size_t steps, long h) {
    for (const auto& [nx, ny, nz, pitch_pad, offset] :
         std::vector<std::array<long, 5>>{{1, 1, 1, 16, 0}, {37, 19, 13, 16, 16 - h % 16}, {61, 29, 7, 0, 3},
                                          {130, 3, 5, 16, 5}, {2, 70, 9, 0, 0}}) {
      const long pitch_x = pitch_pad == 0 ? nx + 2 * h + 1 : (nx + 2 * h + 15) / 16 * 16;
      check_streaming(l, wave::Box{h, h, h, nx, ny, nz, pitch_x, ny + 2 * h}, steps, offset);
    }
    check_streaming(l, wave::Box{h + 3, h + 1, h + 2, 50, 21, 11, 80 + 2 * h, 30 + 2 * h}, steps, 7);  // not at the start
  });
}

// The column kernel with its z neighbours in registers gives the column kernel's bits at every
// order, on boxes that start anywhere in a row, are one cell thin, or run over many z runs.
TEST(CaseWave, QueueKernelEqualsColumnKernel) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for (int order : wave::kOrders) {
    const wave::Leapfrog l = wave::leapfrog(order, 0.9 * wave::courant_limit(order));
    const long h = l.radius;
    check_queue(l, wave::Box{h, h, h, 1, 1, 1, 16, 1 + 2 * h}, 0);
    check_queue(l, wave::Box{h, h, h, 37, 19, 13, (37 + 2 * h + 15) / 16 * 16, 19 + 2 * h}, 3);
    check_queue(l, wave::Box{h + 3, h + 1, h + 2, 50, 21, 11, 80 + 2 * h, 30 + 2 * h}, 7);
    check_queue(l, wave::Box{h, h, h, 200, 90, 300, 208 + 2 * h, 90 + 2 * h}, 0);
  }
}

// The staged kernel (orders 4, 6 and 8) gives the column kernel's bits on boxes that fill no tile
// and no z run, are one cell thin, start off a row's first cell, or run over many z runs with a
// short last one; rows off 16-byte boundaries it refuses, and launch_step takes the streaming
// kernel there. At order 6 a staged row of u^n starts 4 cells before the box (16-byte copies) and
// its first copy moves the 8 bytes of x0 - 3 alone.
TEST(CaseWave, StagedKernelEqualsColumnKernel) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for (int order : {4, 6, 8}) {
    const wave::Leapfrog l = wave::leapfrog(order, 0.9 * wave::courant_limit(order));
    const long h = l.radius;
    // The offsets put u^n's first staged cell (x0 - radius rounded up to even) and u^{n-1}'s (x0)
    // of every row on a 16-byte boundary.
    const long e = h % 2;  // order 6: x0 = h + e even, with the offsets below
    check_queue(l, wave::Box{h + e, h, h, 1, 1, 1, 16, 1 + 2 * h}, 0, wave::launch_staged_step);
    check_queue(l, wave::Box{h + e, h, h, 37, 19, 13, 48, 19 + 2 * h}, 2, wave::launch_staged_step);
    check_queue(l, wave::Box{h + e, h, h, 130, 3, 5, 144, 3 + 2 * h}, 4, wave::launch_staged_step);
    check_queue(l, wave::Box{h + 2 + e, h + 1, h + 2, 50, 21, 11, 80 + 2 * h, 30 + 2 * h}, 6, wave::launch_staged_step);
    check_queue(l, wave::Box{h + e, h, h, 200, 90, 300, 208 + 2 * h, 90 + 2 * h}, 0, wave::launch_staged_step);
    // Off the boundary: refused, and the case's dispatch takes the streaming kernel with the same bits.
    const wave::Box odd{h + 1 - e, h, h, 37, 19, 13, 48, 19 + 2 * h};
    DeviceBuffer a(std::vector<double>(static_cast<std::size_t>(48 * (19 + 2 * h) * (h + 13 + 9)), 1.0));
    EXPECT_FALSE(wave::staged_step_fits(a.p, a.p, odd, l));
    EXPECT_THROW(wave::launch_staged_step(a.p, a.p, a.p, odd, l, nullptr), std::invalid_argument);
    check_queue(l, odd, 0, wave::launch_step);
    // Order 6 at an odd x0 (offset 1 aligns x0 - 4 and x0).
    if (e == 1) check_queue(l, wave::Box{3, h, h, 37, 19, 13, 48, 19 + 2 * h}, 1, wave::launch_staged_step);
  }
  for (int order : {2}) {  // order 2 has no staged kernel
    const wave::Leapfrog l = wave::leapfrog(order, 0.9 * wave::courant_limit(order));
    const long h = l.radius;
    DeviceBuffer a(std::vector<double>(static_cast<std::size_t>(16 * (1 + 2 * h) * (h + 1 + 9)), 1.0));
    const wave::Box box{h, h, h, 1, 1, 1, 16, 1 + 2 * h};
    EXPECT_FALSE(wave::staged_step_fits(a.p, a.p, box, l));
    EXPECT_THROW(wave::launch_staged_step(a.p, a.p, a.p, box, l, nullptr), std::invalid_argument);
  }
}

// The tensor-copy kernel (orders 4, 6 and 8, compute capability 9.0 or later) gives the column
// kernel's bits on the staged kernel's boxes: no full tile or z run (the copy engine fills the
// overhang with zeros), one cell thin, off a row's first cell, many z runs with a short last one,
// and at order 6 an odd x0. Rows off 16-byte boundaries it refuses, and launch_step then takes
// another kernel with the same bits.
TEST(CaseWave, TensorKernelEqualsColumnKernel) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  if (!wave::device_has_tensor_copies())
    GTEST_SKIP() << "the tensor-copy kernel needs a GPU of compute capability 9.0 or later (Hopper)";
  for (int order : {4, 6, 8}) {
    const wave::Leapfrog l = wave::leapfrog(order, 0.9 * wave::courant_limit(order));
    const long h = l.radius;
    const long e = h % 2;
    check_queue(l, wave::Box{h + e, h, h, 1, 1, 1, 16, 1 + 2 * h}, 0, wave::launch_tensor_step);
    check_queue(l, wave::Box{h + e, h, h, 37, 19, 13, 48, 19 + 2 * h}, 2, wave::launch_tensor_step);
    check_queue(l, wave::Box{h + e, h, h, 130, 3, 5, 144, 3 + 2 * h}, 4, wave::launch_tensor_step);
    check_queue(l, wave::Box{h + 2 + e, h + 1, h + 2, 50, 21, 11, 80 + 2 * h, 30 + 2 * h}, 6, wave::launch_tensor_step);
    check_queue(l, wave::Box{h + e, h, h, 200, 90, 300, 208 + 2 * h, 90 + 2 * h}, 0, wave::launch_tensor_step);
    if (e == 1) check_queue(l, wave::Box{3, h, h, 37, 19, 13, 48, 19 + 2 * h}, 1, wave::launch_tensor_step);
    const wave::Box odd{h + 1 - e, h, h, 37, 19, 13, 48, 19 + 2 * h};
    DeviceBuffer a(std::vector<double>(static_cast<std::size_t>(48 * (19 + 2 * h) * (h + 13 + 9)), 1.0));
    EXPECT_FALSE(wave::tensor_step_fits(a.p, a.p, odd, l));
    EXPECT_THROW(wave::launch_tensor_step(a.p, a.p, a.p, odd, l, nullptr), std::invalid_argument);
    check_queue(l, odd, 0, wave::launch_step);
  }
  const wave::Leapfrog l2 = wave::leapfrog(2, 0.9 * wave::courant_limit(2));  // order 2 has no tensor-copy kernel
  DeviceBuffer a(std::vector<double>(static_cast<std::size_t>(16 * 3 * 11), 1.0));
  EXPECT_FALSE(wave::tensor_step_fits(a.p, a.p, wave::Box{1, 1, 1, 1, 1, 1, 16, 3}, l2));
  EXPECT_THROW(wave::launch_tensor_step(a.p, a.p, a.p, wave::Box{1, 1, 1, 1, 1, 1, 16, 3}, l2, nullptr),
               std::invalid_argument);
}

// Many z runs (over 2048 blocks of 8 planes or fewer), the last one shorter. (Apart from the small
// boxes so that the sanitizers can take those alone.)
TEST(CaseWave, StreamingKernelOverManyZRunsEqualsColumnKernelSteps) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for_each_launch([](const wave::Leapfrog& l, std::size_t steps, long h) {
    check_streaming(l, wave::Box{h, h, h, 200, 90, 300, 208 + 2 * h, 90 + 2 * h}, steps, 0);
  });
}

TEST(CaseWave, SingleGpuEqualsTheHostLeapfrog) {
  CUSH_REQUIRE_GPUS(1);
  for (int order : wave::kOrders)
    for (std::size_t n : {9U, 17U}) {
      const wave::Problem p = problem(n, order);
      const Levels in = random_levels(n);
      for (std::size_t fused : fused_steps(order))
        for (std::size_t steps : {0U, 1U, 4U, 7U})
          expect_same(gpu_steps<wave::Single>(in, p, cases::Devices::first(1), {.steps = fused}, steps, steps / 2),
                      host_steps(in, p, steps), "single, " + name(p, steps) + ", " + std::to_string(fused) + " a launch");
    }
}

// 5 steps as 2 + 3 on every GPU count the grid has planes for and every device order worth testing.
TEST(CaseWave, MultiGpuVariantsEqualTheHostLeapfrog) {
  CUSH_REQUIRE_GPUS(1);
  std::vector<std::vector<int>> orders = cush_test::device_orders();
  for (int count = 2; count < cush::DeviceSet::available(); ++count) orders.push_back(cush_test::first_devices(count));
  for (int order : wave::kOrders)
    for (std::size_t n : {9U, 20U}) {
      const wave::Problem p = problem(n, order);
      const Levels in = random_levels(n);
      const Levels want = host_steps(in, p, 5);
      for (const std::vector<int>& ids : orders)
        for (std::size_t fused : fused_steps(order)) {
          if (n < ids.size() * fused * wave::radius(order)) continue;  // slabs thinner than the halo
          const cases::Devices gpus = cases::Devices::of(ids);
          for (wave::Schedule s : {wave::Schedule::bulk, wave::Schedule::overlap}) {
            const std::string what = std::string(s == wave::Schedule::bulk ? "bulk, " : "overlap, ") + name(p, 5) +
                                     ", " + std::to_string(fused) + " a launch on devices " + cush_test::to_string(ids);
            expect_same(gpu_steps<wave::MultiCuda>(in, p, gpus, {s, fused}, 5, 2), want, "raw, " + what);
            expect_same(gpu_steps<wave::MultiCush>(in, p, gpus, {s, fused}, 5, 2), want, "cush, " + what);
          }
        }
    }
}

// The physics: started with u^{-1} = cos(theta) u^0 the mode sin 2 pi x sin 2 pi y sin 2 pi z
// evolves as cos(n theta) u^0 (reference.hpp); 200 steps of the cush variant on every GPU.
TEST(CaseWave, TheDiscreteModeEvolvesExactly) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices gpus = cases::Devices::first(std::min(cush::DeviceSet::available(), 4));
  for (int order : {2, 8}) {
    const wave::Problem p = problem(16, order);
    const double theta = wave::mode_angle(order, p.courant, p.n);
    Levels in{wave::mode(p.n), wave::mode(p.n)};
    for (double& u : in.prev) u *= std::cos(theta);
    const Levels got = gpu_steps<wave::MultiCush>(in, p, gpus, {wave::Schedule::overlap}, 200, 100);
    const std::vector<double> u0 = wave::mode(p.n);
    double worst = 0;
    for (std::size_t i = 0; i < u0.size(); ++i) worst = std::max(worst, std::fabs(got.cur[i] - std::cos(200 * theta) * u0[i]));
    EXPECT_LE(worst, 1e-10) << "order " << order;
  }
}

TEST(CaseWave, BadInputIsRejected) {
  CUSH_REQUIRE_GPUS(1);
  const cases::Devices one = cases::Devices::first(1);
  EXPECT_THROW(wave::Single({16, 3, 0.3}, one), std::invalid_argument);                              // no such order
  EXPECT_THROW(wave::Single({16, 2, 1.01 * wave::courant_limit(2)}, one), std::invalid_argument);  // unstable
  EXPECT_THROW(wave::MultiCush({16, 2, 0.0}, one), std::invalid_argument);                          // no time step
  EXPECT_THROW(wave::MultiCuda({8, 8, 0.3}, one), std::invalid_argument);                           // narrower than the stencil
  const cases::Devices three{{0, 0, 0}, {0, 0, 0}};  // rejected before any device is used
  EXPECT_THROW(wave::MultiCuda({9, 8, 0.3}, three), std::invalid_argument);  // 3 planes a GPU, radius 4
  EXPECT_THROW(wave::MultiCuda({9, 2, 0.3}, three, {.steps = 4}), std::invalid_argument);  // 3 planes, 4 ghost layers
  EXPECT_THROW(wave::Single({16, 2, 0.3}, one, {.steps = 0}), std::invalid_argument);      // no step a launch
  EXPECT_THROW(wave::Single({16, 2, 0.3}, one, {.steps = 5}), std::invalid_argument);      // beyond the kernel
  EXPECT_THROW(wave::MultiCush({16, 8, 0.3}, one, {.steps = 2}), std::invalid_argument);   // order 8 fuses no steps
}

// DiamondTorre's sweep (diamond_kernel.hpp) against the host model's (diamond.hpp) on random
// blocks at radius 1-3, odd sizes and z depths up to the kernel's 256, with the vertices'
// neighbours read in the step and a step ahead: every node of both levels bit for bit (NaN, at the
// block's edges, against NaN), and the inside, past the T ghost columns, finite.
TEST(CaseWave, DiamondSweepEqualsTheHostModel) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937_64 rng(2611);
  std::uniform_int_distribution<int> side(1, 40), steps_of(1, 9);
  std::uniform_real_distribution<double> courant(0.05, 0.57);
  const int depths[] = {3, 7, 32, 37, 64, 130, 256};
  for (int radius = 1; radius <= 3; ++radius)
    for (int trial = 0; trial < 5; ++trial) {
      const int steps = steps_of(rng), nx = side(rng) + 2 * steps, ny = side(rng) + 2 * steps;
      const int nz = depths[(radius * 5 + trial) % 7];
      const double c = courant(rng);
      const unsigned long long seed = rng();
      for (auto reads : wave::kDiamondReads) {
        SCOPED_TRACE(testing::Message() << "radius " << radius << ", " << nx << " x " << ny << " x " << nz << ", " << steps
                                        << " steps, reads " << wave::name(reads));
        const wave::BlockComparison cmp = wave::DiamondSweep(radius, nx, ny, nz, steps, reads).check_against_model(c, seed);
        EXPECT_EQ(cmp.differing, 0);
        EXPECT_EQ(cmp.inside_not_finite, 0);
      }
    }
}

// The DiamondTorre variant (diamond_variant.hpp) against the host leapfrog, bit for bit at both
// levels: odd and even sides, radius 1-3, sweeps of 1-6 steps, every DiamondReads, runs that end in
// a shorter sweep and runs split between two calls; on GPUs of compute capability 9.0 also columns
// split over clusters of 3 and 4 blocks.
TEST(CaseWave, DiamondVariantEqualsTheHostLeapfrog) {
  CUSH_REQUIRE_GPUS(1);
  int major = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  const cases::Devices one = cases::Devices::first(1);
  struct Run {
    std::size_t n;
    int radius;
    std::size_t sweep, steps, first, chunks;
    wave::DiamondReads reads;
  };
  constexpr auto in_step = wave::DiamondReads::in_step, ahead = wave::DiamondReads::step_ahead,
                 prefetched = wave::DiamondReads::prefetched;
  const Run runs[] = {{17, 1, 3, 7, 7, 0, in_step},   {24, 2, 4, 9, 5, 0, ahead},     {19, 3, 5, 5, 2, 0, prefetched},
                      {12, 3, 1, 3, 3, 0, in_step},   {21, 2, 2, 5, 5, 0, prefetched}, {24, 3, 3, 7, 4, 3, in_step},
                      {20, 1, 6, 13, 6, 4, prefetched}};
  for (const Run& r : runs) {
    if (r.chunks > 1 && major < 9) continue;  // clusters need compute capability 9.0
    const wave::Problem p{r.n, 2, 0.45};
    SCOPED_TRACE(testing::Message() << r.n << "^3, radius " << r.radius << ", sweeps of " << r.sweep << ", " << r.steps
                                    << " steps (" << r.first << " then the rest), " << r.chunks << " blocks a tower, reads "
                                    << wave::name(r.reads));
    const Levels in = random_levels(r.n);
    const wave::DiamondOptions o{.radius = r.radius, .steps = r.sweep, .reads = r.reads, .chunks = r.chunks};
    expect_same(gpu_steps<wave::Diamond>(in, p, one, o, r.steps, r.first), host_steps(in, p, r.steps), "DiamondTorre variant");
  }
  EXPECT_THROW(wave::Diamond({24, 4, 0.45}, one), std::invalid_argument);  // order 2 only
}

// A column taller than a block, or split on request: each tower's column in a thread-block
// cluster of 2-8 blocks (diamond_chunks), the z neighbours at the blocks' ends through the other
// blocks' shared memory. Needs compute capability 9.0 (clusters).
TEST(CaseWave, DiamondSweepInClustersEqualsTheHostModel) {
  CUSH_REQUIRE_GPUS(1);
  int major = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  if (major < 9) GTEST_SKIP() << "thread-block clusters need compute capability 9.0; GPU 0 has " << major << ".x";
  std::mt19937_64 rng(2612);
  std::uniform_int_distribution<int> side(1, 24), steps_of(1, 9);
  std::uniform_real_distribution<double> courant(0.05, 0.57);
  // (nz, blocks a tower): blocks of one node, odd splits, and the columns the 1024^3 grid needs.
  const std::pair<int, int> columns[] = {{3, 3}, {12, 4}, {35, 5}, {48, 8}, {300, 0}, {1024, 0}};
  for (int radius = 1; radius <= 3; ++radius)
    for (const auto& [nz, chunks] : columns) {
      const int steps = steps_of(rng), nx = side(rng) + 2 * steps, ny = side(rng) + 2 * steps;
      const double c = courant(rng);
      const unsigned long long seed = rng();
      for (auto reads : wave::kDiamondReads) {
        const wave::DiamondSweep sweep(radius, nx, ny, nz, steps, reads, chunks);
        SCOPED_TRACE(testing::Message() << "radius " << radius << ", " << nx << " x " << ny << " x " << nz << ", " << steps
                                        << " steps, " << sweep.chunks().chunks << " blocks of " << sweep.chunks().lanes
                                        << ", reads " << wave::name(reads));
        EXPECT_GT(sweep.chunks().chunks, 1);
        const wave::BlockComparison cmp = sweep.check_against_model(c, seed);
        EXPECT_EQ(cmp.differing, 0);
        EXPECT_EQ(cmp.inside_not_finite, 0);
      }
    }
}
