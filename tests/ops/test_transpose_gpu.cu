// cush::transpose (include/cush/transpose.hpp, transpose.cuh): random matrices of odd shapes on
// every device order, both paths (direct stores, staged copies), element sizes 1 to 16 bytes,
// uneven distributions, a device function on the way, stream ordering both ways, and the
// arguments it refuses. Every element is compared with a host transpose.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "cush/transpose.cuh"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/kernels.hpp"

namespace {

using cush::Distribution;
using cush::Plan;
using cush::TransposeOptions;
using Path = TransposeOptions::Path;

template <class T>
std::vector<T> random_matrix(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  auto* bytes = reinterpret_cast<unsigned char*>(v.data());
  for (std::size_t i = 0; i < n * sizeof(T); ++i) bytes[i] = static_cast<unsigned char>(rng());
  return v;
}

template <class T>
bool same(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

struct Shape {
  std::size_t rows, cols;
};
const Shape shapes[] = {{1, 1}, {1, 1000}, {1000, 1}, {37, 53}, {64, 32}, {257, 129}, {96, 4100}};

/// Splits `rows` whole rows of `row` elements over the devices with weights 1, 2, 3, ...
/// (some devices may get none), or uniformly.
Distribution rows_of(std::size_t row, bool weighted, std::size_t devices) {
  if (!weighted) return Distribution::uniform().with_granularity(row);
  std::vector<double> w;
  for (std::size_t i = 0; i < devices; ++i) w.push_back(static_cast<double>(i + 1));
  return Distribution::weighted(w).with_granularity(row);
}

/// dst (gathered) holds the transpose of `in`, a rows x cols matrix, bit for bit.
template <class T>
void expect_transposed(Plan<T>& dst, const std::vector<T>& in, Shape s, const std::string& what) {
  std::vector<T> out(in.size());
  dst.gather(out.data());
  dst.wait();
  for (std::size_t r = 0; r < s.rows; ++r)
    for (std::size_t c = 0; c < s.cols; ++c)
      ASSERT_TRUE(same(out[c * s.rows + r], in[r * s.cols + c]))
          << "element (" << r << ", " << c << ") of " << s.rows << " x " << s.cols << " " << what;
}

template <class T>
void check_transpose(const std::vector<int>& ids, Shape s, bool weighted, Path path, unsigned seed) {
  const cush::DeviceSet gpus(ids);
  const std::size_t n = s.rows * s.cols;
  Plan<T> src(gpus, n, rows_of(s.cols, weighted, ids.size()));
  // dst on the same devices in the opposite order: every piece crosses devices.
  std::vector<int> back(ids.rbegin(), ids.rend());
  Plan<T> dst(cush::DeviceSet(back), n, rows_of(s.rows, !weighted, ids.size()));
  const std::vector<T> in = random_matrix<T>(n, seed);
  src.scatter(in.data());
  cush::transpose(src, dst, s.rows, s.cols, TransposeOptions{path});
  expect_transposed(dst, in, s, "on " + cush_test::to_string(ids));
}

class Transpose : public ::testing::TestWithParam<Path> {};

TEST_P(Transpose, MatchesTheHostTransposeOnEveryDeviceOrder) {
  CUSH_REQUIRE_GPUS(1);
  unsigned seed = 1;
  for (const auto& ids : cush_test::device_orders())
    for (const Shape s : shapes)
      for (bool weighted : {false, true}) {
        SCOPED_TRACE(cush_test::to_string(ids) + " " + std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                     (weighted ? " weighted" : " uniform"));
        check_transpose<float>(ids, s, weighted, GetParam(), seed++);
        if (HasFatalFailure()) return;
      }
}

TEST_P(Transpose, EveryElementSize) {
  CUSH_REQUIRE_GPUS(1);
  const std::vector<int> ids = cush_test::device_orders().back();
  const Shape s{123, 77};
  check_transpose<std::uint8_t>(ids, s, true, GetParam(), 11);
  check_transpose<std::uint16_t>(ids, s, false, GetParam(), 12);
  check_transpose<float2>(ids, s, true, GetParam(), 13);
  check_transpose<double2>(ids, s, false, GetParam(), 14);
}

// A device function on the way, from the .cuh overload: f(v, r, c) sees the global row and column.
struct Stamp {
  std::size_t cols;
  __device__ double2 operator()(double2 v, std::size_t r, std::size_t c) const {
    return make_double2(v.x * 2.0 + static_cast<double>(r * cols + c), v.y);
  }
};

// A type the plain transpose does not take (12 bytes): the .cuh overload takes any.
struct Three {
  float a, b, c;
};
struct Swap {
  __device__ Three operator()(Three v, std::size_t, std::size_t) const { return Three{v.c, v.b, v.a}; }
};

__global__ void double_x(double2* v, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) v[i].x *= 2.0;
}

/// A 301 x 45 matrix of random double2 through cush::transpose with Stamp and `o`: dst (c, r) =
/// Stamp(src (r, c)) where src's x was first multiplied by `scale` (by o.produce, if any).
void check_stamp(const std::vector<int>& ids, const TransposeOptions& o, double scale, unsigned seed) {
  const cush::DeviceSet gpus(ids);
  const Shape s{301, 45};
  const std::size_t n = s.rows * s.cols;
  Plan<double2> src(gpus, n, rows_of(s.cols, true, ids.size()));
  Plan<double2> dst(gpus, n, rows_of(s.rows, false, ids.size()));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double2> in(n);
  for (auto& v : in) v = make_double2(u(rng), u(rng));
  src.scatter(in.data());
  cush::transpose(src, dst, s.rows, s.cols, Stamp{s.cols}, o);
  std::vector<double2> out(n);
  dst.gather(out.data());
  dst.wait();
  for (std::size_t r = 0; r < s.rows; ++r)
    for (std::size_t c = 0; c < s.cols; ++c) {
      const double2 want = in[r * s.cols + c];
      const double2 got = out[c * s.rows + r];
      ASSERT_EQ(got.x, (want.x * scale) * 2.0 + static_cast<double>(r * s.cols + c)) << r << ", " << c;
      ASSERT_EQ(got.y, want.y) << r << ", " << c;
    }
}

TEST_P(Transpose, AppliesAFunctionOnTheWay) {
  CUSH_REQUIRE_GPUS(1);
  for (const auto& ids : cush_test::device_orders()) {
    check_stamp(ids, TransposeOptions{GetParam()}, 1.0, 5);
    if (HasFatalFailure()) return;
    const cush::DeviceSet gpus(ids);
    const Shape s{301, 45};
    const std::size_t n = s.rows * s.cols;
    Plan<Three> a(gpus, n, rows_of(s.cols, false, ids.size()));
    Plan<Three> b(gpus, n, rows_of(s.rows, true, ids.size()));
    std::vector<Three> t(n);
    for (std::size_t i = 0; i < n; ++i) t[i] = Three{float(i), float(i) + 0.5f, -float(i)};
    a.scatter(t.data());
    EXPECT_THROW(cush::transpose(a, b, s.rows, s.cols, TransposeOptions{GetParam()}), cush::InvalidArgument);
    cush::transpose(a, b, s.rows, s.cols, Swap{}, TransposeOptions{GetParam()});
    std::vector<Three> back(n);
    b.gather(back.data());
    b.wait();
    for (std::size_t r = 0; r < s.rows; ++r)
      for (std::size_t c = 0; c < s.cols; ++c) {
        const Three& w = t[r * s.cols + c];
        const Three& g = back[c * s.rows + r];
        ASSERT_TRUE(g.a == w.c && g.b == w.b && g.c == w.a) << r << ", " << c;
      }
  }
}

// Ordering: the transpose waits for the earlier work of both plans on every device, and their
// later work waits for it.
TEST_P(Transpose, IsOrderedWithBothPlansStreams) {
  CUSH_REQUIRE_GPUS(1);
  const std::vector<int> ids = cush_test::device_orders().back();
  const cush::DeviceSet gpus(ids);
  const Shape s{64 * ids.size(), 96};
  const std::size_t n = s.rows * s.cols;
  Plan<float> src(gpus, n, rows_of(s.cols, false, ids.size()));
  Plan<float> dst(gpus, n, rows_of(s.rows, false, ids.size()));
  std::vector<float> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  src.scatter(in.data());
  src.wait();
  // A slow kernel on the first device, then a change of the source everywhere: every target must
  // see it.
  {
    cush::DeviceGuard guard(src.segment(0).device());
    cush_test::spin(src.stream(0), 100);
  }
  src.for_each([](cush::Segment<float> seg) { cush_test::affine(seg.data(), seg.size(), 2.0f, 1.0f, seg.stream()); });
  // A slow kernel, then a write of dst on the last device: it must land before the transpose.
  const std::size_t last = ids.size() - 1;
  {
    const cush::Segment<float> d = dst.segment(last);
    cush::DeviceGuard guard(d.device());
    cush_test::spin(d.stream(), 100);
    cush_test::affine(d.data(), d.size(), 0.0f, -7.0f, d.stream());
  }
  cush::transpose(src, dst, s.rows, s.cols, TransposeOptions{GetParam()});
  // Later work on dst sees the result; later work on src does not change it.
  src.for_each([](cush::Segment<float> seg) { cush_test::affine(seg.data(), seg.size(), 0.0f, 5.0f, seg.stream()); });
  std::vector<float> out(n);
  dst.gather(out.data());
  dst.wait();
  for (std::size_t r = 0; r < s.rows; ++r)
    for (std::size_t c = 0; c < s.cols; ++c)
      ASSERT_EQ(out[c * s.rows + r], 2.0f * in[r * s.cols + c] + 1.0f) << r << ", " << c;
}

// Pipelined: produce writes each chunk's rows (after a spin, so that a chunk moved before its
// rows are written reads the sentinel the source was filled with), and every chunk moves after
// its own producer. Each device's chunks cover its rows in order, with the count asked for.
struct Produced {
  std::size_t pos, row0, rows, index, count;
};

template <class T>
void check_pipelined(const std::vector<int>& ids, Shape s, bool weighted, Path path, std::size_t chunks, unsigned seed) {
  const cush::DeviceSet gpus(ids);
  const std::size_t n = s.rows * s.cols;
  Plan<T> truth(gpus, n, rows_of(s.cols, weighted, ids.size()));
  Plan<T> src(gpus, n, rows_of(s.cols, weighted, ids.size()));
  std::vector<int> back(ids.rbegin(), ids.rend());
  Plan<T> dst(cush::DeviceSet(back), n, rows_of(s.rows, !weighted, ids.size()));
  const std::vector<T> in = random_matrix<T>(n, seed);
  truth.scatter(in.data());
  const std::vector<T> sentinel(n, T{});
  src.scatter(sentinel.data());
  truth.wait();
  src.wait();

  std::vector<Produced> calls;
  TransposeOptions o{path};
  o.chunks = chunks;
  o.produce = [&](const cush::TransposeChunk& c) {
    int current = -1;
    CUSH_CUDA_CHECK(cudaGetDevice(&current));
    EXPECT_EQ(current, cush::physical_device(c.device)) << "produce runs with the chunk's device current";
    const cush::Segment<T> seg = src.segment(c.pos);
    EXPECT_EQ(c.device, seg.device());
    const std::size_t first_row = seg.offset() / s.cols;
    EXPECT_EQ(c.data, static_cast<void*>(seg.data() + (c.row0 - first_row) * s.cols));
    calls.push_back({c.pos, c.row0, c.rows, c.index, c.count});
    cush_test::spin(c.stream, 0.3);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(c.data, truth.segment(c.pos).data() + (c.row0 - first_row) * s.cols,
                                    c.rows * s.cols * sizeof(T), cudaMemcpyDeviceToDevice, c.stream));
  };
  cush::transpose(src, dst, s.rows, s.cols, o);
  expect_transposed(dst, in, s, "in " + std::to_string(chunks) + " chunks");
  if (::testing::Test::HasFatalFailure()) return;

  // Every device's chunks, in order, cover its rows; chunk 0 of every device comes first.
  bool all_local = true;
  for (int id : ids) all_local = all_local && cush::physical_device(id) == cush::physical_device(ids.front());
  std::size_t seen_first = 0;
  for (std::size_t pos = 0; pos < ids.size(); ++pos) {
    const cush::Segment<T> seg = src.segment(pos);
    const std::size_t rows = seg.size() / s.cols;
    std::size_t next = seg.offset() / s.cols, index = 0;
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const Produced& c = calls[k];
      if (c.pos != pos) continue;
      if (c.index == 0) ASSERT_EQ(k, seen_first++) << "chunk 0 of every device before any chunk 1";
      ASSERT_EQ(c.index, index++);
      ASSERT_EQ(c.row0, next);
      ASSERT_GE(c.rows, 1u);
      next += c.rows;
      if (chunks != 0) ASSERT_EQ(c.count, std::min(chunks, rows));
      if (chunks == 0 && all_local) ASSERT_EQ(c.count, 1u) << "nothing to overlap on one GPU";
      ASSERT_LE(c.rows, rows / c.count + 1) << "chunks as even as whole rows allow";
    }
    ASSERT_EQ(next, seg.offset() / s.cols + rows) << "device " << pos << "'s rows covered";
    if (chunks != 0) ASSERT_EQ(index, std::min(chunks, rows)) << "device " << pos << "'s chunks";
  }
}

TEST_P(Transpose, PipelinedWithAProducerOnEveryDeviceOrder) {
  CUSH_REQUIRE_GPUS(1);
  unsigned seed = 100;
  const Shape pipelined[] = {{1, 1000}, {37, 53}, {257, 129}, {96, 4100}};
  for (const auto& ids : cush_test::device_orders())
    for (const Shape s : pipelined)
      for (std::size_t chunks : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}, std::size_t{0}}) {
        const bool weighted = (seed & 1) != 0;
        SCOPED_TRACE(cush_test::to_string(ids) + " " + std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                     ", " + std::to_string(chunks) + " chunks" + (weighted ? ", weighted" : ", uniform"));
        check_pipelined<float>(ids, s, weighted, GetParam(), chunks, seed++);
        if (HasFatalFailure()) return;
      }
  const std::vector<int> ids = cush_test::device_orders().back();
  check_pipelined<double2>(ids, Shape{123, 77}, true, GetParam(), 5, 7);
  check_pipelined<std::uint8_t>(ids, Shape{301, 45}, false, GetParam(), 4, 8);
}

TEST_P(Transpose, PipelinedAppliesAFunctionOnTheWay) {
  CUSH_REQUIRE_GPUS(1);
  const std::size_t cols = 45;  // check_stamp's matrix
  TransposeOptions o{GetParam()};
  o.chunks = 3;
  o.produce = [&](const cush::TransposeChunk& c) {  // the chunk's rows in place: x = 2 x
    const std::size_t count = c.rows * cols;
    double_x<<<static_cast<unsigned>((count + 127) / 128), 128, 0, c.stream>>>(static_cast<double2*>(c.data), count);
    CUSH_CUDA_CHECK(cudaGetLastError());
  };
  check_stamp(cush_test::device_orders().back(), o, 2.0, 9);
}

INSTANTIATE_TEST_SUITE_P(Paths, Transpose, ::testing::Values(Path::automatic, Path::direct, Path::staged),
                         [](const ::testing::TestParamInfo<Path>& info) {
                           return std::string(info.param == Path::automatic ? "automatic"
                                              : info.param == Path::direct  ? "direct"
                                                                            : "staged");
                         });

TEST(TransposeErrors, BadArgumentsAreRejectedBeforeAnythingMoves) {  // and bad pipelines
  CUSH_REQUIRE_GPUS(1);
  const cush::DeviceSet gpus = cush::DeviceSet::all();
  const std::size_t k = gpus.size();
  const std::size_t rows = 8 * k, cols = 16;
  Plan<float> a(gpus, rows * cols, rows_of(cols, false, k));
  Plan<float> b(gpus, rows * cols, rows_of(rows, false, k));
  std::vector<float> ones(rows * cols, 1.0f);
  b.scatter(ones.data());
  EXPECT_THROW(cush::transpose(a, a, rows, cols), cush::InvalidArgument);            // one plan
  EXPECT_THROW(cush::transpose(a, b, rows + 1, cols), cush::InvalidArgument);        // wrong shape
  EXPECT_THROW(cush::transpose(a, b, 0, cols), cush::InvalidArgument);               // empty
  Plan<float> longer(gpus, rows * cols + cols, rows_of(rows, false, k));
  EXPECT_THROW(cush::transpose(a, longer, rows, cols), cush::InvalidArgument);       // sizes differ
  Plan<float> rep(gpus, rows * cols, Distribution::replicated());
  EXPECT_THROW(cush::transpose(a, rep, rows, cols), cush::InvalidArgument);          // replicated
  if (k > 1) {
    // Segments that cut rows: a split at an element that is not a row boundary.
    std::vector<double> w(k, 1.0);
    w[0] = 1.5;
    Plan<float> cut(gpus, rows * cols, Distribution::weighted(w));
    EXPECT_THROW(cush::transpose(cut, b, rows, cols), cush::InvalidArgument);
  }
  try {
    cush::transpose(a, b, rows + 1, cols);
    ADD_FAILURE() << "no exception";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rows * cols"), std::string::npos) << e.what();
  }
  // Nothing moved: b still holds its ones.
  std::vector<float> out(rows * cols);
  b.gather(out.data());
  b.wait();
  for (float v : out) ASSERT_EQ(v, 1.0f);

  // The pipeline's arguments, and a producer that throws.
  std::vector<float> in(rows * cols);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  a.scatter(in.data());
  TransposeOptions o;
  o.chunks = 4;  // without produce
  try {
    cush::transpose(a, b, rows, cols, o);
    ADD_FAILURE() << "no exception";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("without produce"), std::string::npos) << e.what();
  }
  // A producer that throws at its third call: the exception comes out, and the plans work after.
  int calls = 0;
  o.produce = [&](const cush::TransposeChunk&) {
    if (++calls == 3) throw std::runtime_error("producer failed");
  };
  EXPECT_THROW(cush::transpose(a, b, rows, cols, o), std::runtime_error);
  EXPECT_EQ(calls, 3);
  o.produce = [](const cush::TransposeChunk&) {};
  cush::transpose(a, b, rows, cols, o);
  b.gather(out.data());
  b.wait();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]) << r << ", " << c;
}

// With CUDA's lazy loading a kernel is loaded at its first launch, and loading may wait for all
// work on the device. cush::transpose loads its kernel on every source device before anything is
// enqueued, so the first call of a new instantiation does not wait for its producer's work: here
// a 600 ms spin that the producer enqueues ahead of chunk 0 (the call returns long before it
// ends; without the preload it returned after it, so this fails). The function type is this
// test's own, so no earlier test loaded its kernel.
struct NegateOnce {
  __device__ float operator()(float v, std::size_t, std::size_t) const { return -v; }
};

TEST(TransposeLoading, FirstCallDoesNotWaitForItsProducersWork) {
  CUSH_REQUIRE_GPUS(1);
  if (const char* mode = std::getenv("CUDA_MODULE_LOADING"); mode != nullptr && std::string(mode) == "EAGER")
    GTEST_SKIP() << "CUDA_MODULE_LOADING=EAGER: every kernel is loaded when the program starts";
  if (cush_test::under_cuda_tool()) GTEST_SKIP() << "a timing bound, and the tool slows every launch";
  const cush::DeviceSet gpus = cush::DeviceSet::all();
  const std::size_t k = gpus.size();
  const std::size_t rows = 6 * k, cols = 40;
  Plan<float> a(gpus, rows * cols, rows_of(cols, false, k));
  Plan<float> b(gpus, rows * cols, rows_of(rows, false, k));
  std::vector<float> in(rows * cols);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 997) + 0.5f;
  a.scatter(in.data());
  a.wait();
  cush_test::spin(a.segment(0).stream(), 0.0);  // the spin kernel itself loaded beforehand
  CUSH_CUDA_CHECK(cudaStreamSynchronize(a.segment(0).stream()));
  TransposeOptions o;
  o.chunks = 2;
  // Untimed first: a pipelined transpose of the plain kernel, so that what the first one sets up
  // (peer access between the GPUs, the auxiliary streams) is not in the timed call.
  o.produce = [](const cush::TransposeChunk&) {};
  cush::transpose(a, b, rows, cols, o);
  b.wait();
  o.produce = [](const cush::TransposeChunk& c) {
    if (c.pos == 0 && c.index == 0) cush_test::spin_current(c.stream, 600.0);
  };
  const auto start = std::chrono::steady_clock::now();
  cush::transpose(a, b, rows, cols, NegateOnce{}, o);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 300.0) << "the first transpose of a new kernel waited for the producer's spin";
  std::vector<float> out(rows * cols);
  b.gather(out.data());
  b.wait();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], -in[r * cols + c]) << r << ", " << c;
}

// A staged transpose's scratch buffer comes from cush's pool on the source device, which keeps the
// memory when the buffer is freed: the next staged transpose reuses it instead of mapping it
// again (about 3 us a MiB); cush::release_staging_memory() and destroying the last plan give it
// back, and a plan destroyed while others live leaves it.
// With the pool's default release threshold (0) the memory went back at the first
// synchronization, so this fails there. It compares free GPU memory: suites run it alone unless
// each process's memory is counted (gpu_script.sh).
TEST(TransposeScratch, KeptForTheNextStagedTransposeAndFreedWithThePlans) {
  CUSH_REQUIRE_GPUS(2);
  constexpr bool trim_staging = false;  // free memory with what cush's staging pools keep
  const cush::DeviceSet gpus = cush::DeviceSet::all();
  const std::size_t k = gpus.size();
  const std::size_t rows = 512 * k, cols = 2048;  // 4 MiB of floats a device
  std::vector<float> in(rows * cols);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 8191) - 0.25f;
  // Each device's rows bound for the k - 1 others: (k - 1) / k of its 4 MiB, on its GPU.
  std::vector<std::size_t> scratch(cush_test::gpu_free_memory(trim_staging).size(), 0);
  for (std::size_t pos = 0; pos < k; ++pos)
    scratch[static_cast<std::size_t>(cush::physical_device(gpus.ids()[pos]))] +=
        (rows / k) * (cols - cols / k) * sizeof(float);
  const auto plans_and_transposes = [&](bool measured) {
    const bool check = measured && !cush_test::under_cuda_tool();  // the tool's allocations move free memory
    Plan<float> a(gpus, rows * cols, rows_of(cols, false, k));
    Plan<float> b(gpus, rows * cols, rows_of(rows, false, k));
    a.scatter(in.data());
    a.wait();
    const std::vector<std::size_t> made = cush_test::gpu_free_memory(trim_staging);
    const TransposeOptions staged{Path::staged};
    cush::transpose(a, b, rows, cols, staged);
    b.wait();
    const std::vector<std::size_t> once = cush_test::gpu_free_memory(trim_staging);
    for (std::size_t g = 0; check && g < once.size(); ++g)
      EXPECT_GE(made[g] - std::min(made[g], once[g]), scratch[g]) << "GPU " << g << ": the scratch memory was released";
    for (int again = 0; again < 3; ++again) {
      cush::transpose(a, b, rows, cols, staged);
      b.wait();
    }
    if (check) EXPECT_EQ(cush_test::gpu_free_memory(trim_staging), once) << "later staged transposes reuse the memory kept";
    {
      Plan<float> short_lived(gpus, rows * cols, rows_of(cols, false, k));
      short_lived.scatter(in.data());
      short_lived.wait();
    }
    if (check)
      EXPECT_EQ(cush_test::gpu_free_memory(trim_staging), once) << "a plan destroyed while others live trimmed the pools";
    cush::release_staging_memory();  // with the plans alive
    if (check) EXPECT_EQ(cush_test::gpu_free_memory(trim_staging), made) << "release_staging_memory() gives the memory back";
    cush::transpose(a, b, rows, cols, staged);  // and a staged transpose after it takes it again
    b.wait();
    if (check) EXPECT_EQ(cush_test::gpu_free_memory(trim_staging), once) << "a staged transpose after the release";
    std::vector<float> out(rows * cols);
    b.gather(out.data());
    b.wait();
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]) << r << ", " << c;
  };
  // Once unmeasured: what the process keeps from its first staged transpose (kernels, peer access
  // between GPUs that have it, the pools themselves) is made before `before`.
  cush_test::load_process_caches();
  plans_and_transposes(false);
  const std::vector<std::size_t> before = cush_test::gpu_free_memory(trim_staging);
  plans_and_transposes(true);
  if (cush_test::under_cuda_tool()) return;  // the tool's allocations move free memory
  EXPECT_EQ(cush_test::gpu_free_memory(trim_staging), before) << "destroying the plans gives the kept memory back";
}

}  // namespace
