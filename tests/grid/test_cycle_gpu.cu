// Multi-step cycles on the GPUs (cush/cycle.hpp): cush::advance on cush::Fields, with two fields
// (unfused, fused, bulk and overlapped) and in place (a leapfrog over two components), over random
// grids, halo depths, radii, cycle lengths and periodicity, on every device order worth testing
// (virtual GPUs too). The stencil works on integers modulo a prime, exactly, so the result must
// equal one-step stepping of the global array on the host in every cell.

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "cush/cycle.hpp"
#include "support/gpu.hpp"
#include "support/grids.hpp"

namespace {

using cush::Box;
using cush::Decomposition;

constexpr double kModulus = 1009;  // values are integers 0 .. kModulus - 1
constexpr int kMaxRadius = 4;

// A cross stencil of radius r on the first `dims` axes: the centre, then per axis the offsets
// -r .. r but 0; small integer weights, the sum taken modulo kModulus.
struct Stencil {
  int r = 1;
  int dims = 1;
  double w[1 + 2 * kMaxRadius * 3] = {};
};

// Cells lo .. lo + n - 1 (local coordinates) of a block.
struct Region {
  long lo[3] = {};
  long n[3] = {};
  [[nodiscard]] __host__ __device__ long cells() const { return n[0] * n[1] * n[2]; }
};

// The same code on the host (the reference) and the GPU; `read` is host or device code as the caller.
#pragma nv_exec_check_disable
template <class Read>
__device__ __host__ inline double apply(const Stencil& st, long x, long y, long z, Read&& read) {
  double sum = st.w[0] * read(x, y, z);
  int k = 1;
  for (int a = 0; a < st.dims; ++a)
    for (int d = -st.r; d <= st.r; ++d) {
      if (d == 0) continue;
      sum += st.w[k++] * read(x + (a == 0 ? d : 0), y + (a == 1 ? d : 0), z + (a == 2 ? d : 0));
    }
  return sum;
}

// out = the stencil on `in` over `region`; with `older`, a leapfrog: out = stencil - older.
__global__ void cross_kernel(cush::Block<double> layout, const double* in, double* out, const double* older, Region region,
                             Stencil st) {
  for (long t = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; t < region.cells();
       t += static_cast<long>(gridDim.x) * blockDim.x) {
    const long x = region.lo[0] + t % region.n[0];
    const long y = region.lo[1] + t / region.n[0] % region.n[1];
    const long z = region.lo[2] + t / (region.n[0] * region.n[1]);
    const std::size_t at = layout.index(x, y, z);
    double sum = apply(st, x, y, z, [&](long i, long j, long k) { return in[layout.index(i, j, k)]; });
    if (older != nullptr) sum += kModulus - older[at];
    out[at] = fmod(sum, kModulus);
  }
}

void launch(const cush::Block<double>& layout, const double* in, double* out, const double* older, const Region& r,
            const Stencil& st) {
  if (r.cells() == 0) return;
  const auto blocks = static_cast<unsigned>(std::min<long>((r.cells() + 127) / 128, 1024));
  cross_kernel<<<blocks, 128, 0, layout.stream()>>>(layout, in, out, older, r, st);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

// `box` grown by `grow`, never past a non-periodic edge of the grid nor out of the block's buffer.
Region region_of(const Decomposition& g, std::size_t pos, const Box& box, std::size_t grow) {
  Region r;
  const Box owned = g.owned(pos);
  for (std::size_t a = 0; a < 3; ++a) {
    long lo = -static_cast<long>(g.halo(a)), hi = static_cast<long>(owned.size[a] + g.halo(a));
    if (!g.periodic(a)) {
      lo = std::max(lo, -static_cast<long>(owned.lo[a]));
      hi = std::min(hi, static_cast<long>(g.extent()[a]) - static_cast<long>(owned.lo[a]));
    }
    const long from = std::max(lo, static_cast<long>(box.lo[a]) - static_cast<long>(grow));
    const long to = std::min(hi, static_cast<long>(box.lo[a] + static_cast<std::ptrdiff_t>(box.size[a] + grow)));
    r.lo[a] = from;
    r.n[a] = std::max(to - from, 0L);
  }
  return r;
}

// The global array after `steps` steps, cells beyond a non-periodic edge 0; with `older`, the
// leapfrog (returns the current level; `older` ends as the level before it).
std::vector<double> reference(const Decomposition& g, std::vector<double> u, const Stencil& st, std::size_t steps,
                              std::vector<double>* older = nullptr) {
  const auto e = g.extent();
  auto at = [&](long x, long y, long z) { return static_cast<std::size_t>(x + static_cast<long>(e[0]) * (y + static_cast<long>(e[1]) * z)); };
  std::vector<double> next(u.size());
  for (std::size_t s = 0; s < steps; ++s) {
    for (long z = 0; z < static_cast<long>(e[2]); ++z)
      for (long y = 0; y < static_cast<long>(e[1]); ++y)
        for (long x = 0; x < static_cast<long>(e[0]); ++x) {
          double sum = apply(st, x, y, z, [&](long i, long j, long k) {
            long q[3] = {i, j, k};
            for (std::size_t a = 0; a < 3; ++a) {
              const auto n = static_cast<long>(e[a]);
              if (q[a] >= 0 && q[a] < n) continue;
              if (!g.periodic(a)) return 0.0;
              q[a] = (q[a] % n + n) % n;
            }
            return u[at(q[0], q[1], q[2])];
          });
          if (older != nullptr) sum += kModulus - (*older)[at(x, y, z)];
          next[at(x, y, z)] = std::fmod(sum, kModulus);
        }
    if (older != nullptr) *older = u;
    std::swap(u, next);
  }
  return u;
}

// A random decomposition into `parts` blocks with a halo of 1 .. 4, or none if the draw fails.
std::optional<Decomposition> random_grid(std::mt19937& rng, std::size_t parts) {
  const std::size_t dims = std::uniform_int_distribution<std::size_t>(1, 3)(rng);
  cush::Extent3 extent{1, 1, 1};
  for (std::size_t a = 0; a < dims; ++a) extent[a] = std::uniform_int_distribution<std::size_t>(1, dims == 3 ? 14 : 60)(rng);
  cush::GridOptions o;
  o.halo = std::uniform_int_distribution<std::size_t>(1, 4)(rng);
  for (std::size_t a = 0; a < dims; ++a) o.periodic[a] = (rng() & 1U) != 0;
  o.row_align = (rng() & 1U) != 0 ? 16 : 1;
  try {
    return Decomposition(extent, dims, parts, o);
  } catch (const cush::InvalidArgument&) {
    return std::nullopt;  // too thin for its halo
  }
}

Stencil random_stencil(const Decomposition& g, std::mt19937& rng) {
  Stencil st;
  st.dims = static_cast<int>(g.dims());
  st.r = std::uniform_int_distribution<int>(1, static_cast<int>(g.depth()))(rng);
  for (int k = 0; k < 1 + 2 * st.r * st.dims; ++k) st.w[k] = std::uniform_int_distribution<int>(1, 5)(rng);
  return st;
}

std::vector<double> random_values(std::size_t n, std::mt19937& rng) {
  std::vector<double> v(n);
  for (double& x : v) x = std::uniform_int_distribution<int>(0, static_cast<int>(kModulus) - 1)(rng);
  return v;
}

// Every cell of every block's buffer (all components) to 0: the ghosts beyond non-periodic edges.
void zero(const cush::Field<double>& f) {
  f.for_each([&](const cush::Block<double>& b) {
    const std::size_t cells = (b.components() - 1) * b.component_stride() + f.grid().allocated_cells(b.pos());
    ASSERT_EQ(cudaMemsetAsync(b.data(), 0, cells * sizeof(double), b.stream()), cudaSuccess);
  });
}

// A fused update, as a fused kernel computes it: the intermediate levels on the box grown by
// (substeps - 1 - k) r, in two scratch buffers per block (zero beyond non-periodic edges).
struct FusedUpdate {
  const Decomposition& g;
  const Stencil& st;
  std::vector<double*> scratch;  // two per block
  FusedUpdate(const cush::Field<double>& f, const Stencil& s) : g(f.grid()), st(s) {
    f.for_each([&](const cush::Block<double>& b) {
      for (int k = 0; k < 2; ++k) {
        double* p = nullptr;
        EXPECT_EQ(cudaMalloc(&p, g.allocated_cells(b.pos()) * sizeof(double)), cudaSuccess);
        EXPECT_EQ(cudaMemsetAsync(p, 0, g.allocated_cells(b.pos()) * sizeof(double), b.stream()), cudaSuccess);
        scratch.push_back(p);
      }
    });
  }
  ~FusedUpdate() {
    for (double* p : scratch) EXPECT_EQ(cudaFree(p), cudaSuccess);
  }
  FusedUpdate(const FusedUpdate&) = delete;
  FusedUpdate& operator=(const FusedUpdate&) = delete;
  void operator()(const cush::Block<double>& in, const cush::Block<double>& out, const Box& box, std::size_t substeps) {
    const double* from = in.data();
    for (std::size_t k = 0; k + 1 < substeps; ++k) {
      double* to = scratch[2 * in.pos() + k % 2];
      launch(in, from, to, nullptr, region_of(g, in.pos(), box, (substeps - 1 - k) * static_cast<std::size_t>(st.r)), st);
      from = to;
    }
    launch(in, from, out.data(), nullptr, region_of(g, in.pos(), box, 0), st);
  }
};

std::string describe(const Decomposition& g, const Stencil& st, const cush::CycleOptions& o, std::size_t first,
                     std::size_t second) {
  return cush_test::describe(g) + ", radius " + std::to_string(st.r) + ", length " + std::to_string(o.length) +
         (o.fused ? ", fused" : "") + (o.overlap ? ", overlapped" : "") + ", " + std::to_string(first) + " + " +
         std::to_string(second) + " steps";
}

}  // namespace

// Two fields, steps run in two calls (a cycle cut at the end of the first).
TEST(CycleGpu, AdvanceOnFieldsEqualsOneStepStepping) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937 rng(5);
  for (const std::vector<int>& ids : cush_test::device_orders()) {
    for (int trial = 0; trial < 12; ++trial) {
      const std::optional<Decomposition> drawn = random_grid(rng, ids.size());
      if (!drawn) {
        --trial;
        continue;
      }
      const Decomposition& g = *drawn;
      const Stencil st = random_stencil(g, rng);
      const std::size_t most = g.depth() / static_cast<std::size_t>(st.r);
      cush::CycleOptions o;
      o.radius = static_cast<std::size_t>(st.r);
      o.length = std::uniform_int_distribution<std::size_t>(0, most)(rng);
      o.fused = (rng() & 1U) != 0;
      o.overlap = (o.fused || o.length == 1 || (o.length == 0 && most == 1)) && (rng() & 1U) != 0;
      const std::size_t first = std::uniform_int_distribution<std::size_t>(0, 5)(rng);
      const std::size_t second = std::uniform_int_distribution<std::size_t>(0, 5)(rng);
      SCOPED_TRACE(describe(g, st, o, first, second) + " on " + cush_test::to_string(ids));
      const std::vector<double> u0 = random_values(g.extent()[0] * g.extent()[1] * g.extent()[2], rng);
      cush::Field<double> a(cush::DeviceSet(ids), g);
      cush::Field<double> b = cush::Field<double>::alike(a);
      zero(a);
      zero(b);
      a.scatter(u0.data());
      FusedUpdate update(a, st);
      cush::Field<double>& mid = cush::advance(a, b, first, o, std::ref(update));
      cush::Field<double>& result = cush::advance(mid, &mid == &a ? b : a, second, o, std::ref(update));
      std::vector<double> got(u0.size(), -1);
      result.gather(got.data());
      result.wait();
      b.wait();
      const std::vector<double> want = reference(g, u0, st, first + second);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ < 5) ADD_FAILURE() << "cell " << i << " is " << got[i] << ", expected " << want[i];
      ASSERT_EQ(bad, 0U);
    }
  }
}

// In place: a leapfrog keeping two levels as components, the older overwritten by parity.
TEST(CycleGpu, AdvanceInPlaceEqualsOneStepLeapfrog) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937 rng(9);
  for (const std::vector<int>& ids : cush_test::device_orders()) {
    for (int trial = 0; trial < 8; ++trial) {
      const std::optional<Decomposition> drawn = random_grid(rng, ids.size());
      if (!drawn) {
        --trial;
        continue;
      }
      const Decomposition& g = *drawn;
      const Stencil st = random_stencil(g, rng);
      cush::CycleOptions o;
      o.radius = static_cast<std::size_t>(st.r);
      o.length = std::uniform_int_distribution<std::size_t>(0, g.depth() / o.radius)(rng);
      const std::size_t steps = std::uniform_int_distribution<std::size_t>(0, 9)(rng);
      SCOPED_TRACE(describe(g, st, o, steps, 0) + ", in place, on " + cush_test::to_string(ids));
      const std::size_t n = g.extent()[0] * g.extent()[1] * g.extent()[2];
      std::vector<double> older = random_values(n, rng);
      const std::vector<double> current = random_values(n, rng);
      std::vector<double> levels = older;  // component 0: the older level, 1: the current
      levels.insert(levels.end(), current.begin(), current.end());
      cush::Field<double> u(cush::DeviceSet(ids), g, 2);
      zero(u);
      u.scatter(levels.data());
      cush::advance(u, steps, o, [&](const cush::Block<double>& b, const Box& box, std::size_t step) {
        double* target = b.data(step % 2);  // the older level, overwritten
        launch(b, b.data((step + 1) % 2), target, target, region_of(g, b.pos(), box, 0), st);
      });
      std::vector<double> got(2 * n, -1);
      u.gather(got.data());
      u.wait();
      const std::vector<double> want = reference(g, current, st, steps, &older);
      // After `steps` steps the current level is in component steps % 2 == 0 ? 1 : 0.
      const std::size_t now = steps % 2 == 0 ? 1 : 0;
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (got[now * n + i] != want[i] && bad++ < 5) ADD_FAILURE() << "current, cell " << i << " is " << got[now * n + i] << ", expected " << want[i];
        if (got[(1 - now) * n + i] != older[i] && bad++ < 5) ADD_FAILURE() << "older, cell " << i << " is " << got[(1 - now) * n + i] << ", expected " << older[i];
      }
      ASSERT_EQ(bad, 0U);
    }
  }
}
