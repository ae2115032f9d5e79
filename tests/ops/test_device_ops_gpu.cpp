// GPU<->GPU operations on real GPUs: every operation over every transport, device subsets and
// orders, uneven sizes and empty segments, random data compared element by element with a host
// reference.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "support/kernels.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

using cush::CommOptions;
using cush::DeviceSet;
using cush::Distribution;
using cush::Plan;
using cush::Transport;

namespace {

// Sizes: one element (empty segments on every device but one), sizes not divisible by the GPU
// count, and one larger than the staging chunk (16 MiB) so staging pipelines several chunks.
const std::vector<std::size_t> sizes{1, 3, 1001, 65537};
constexpr std::size_t large = (std::size_t{40} << 20) / sizeof(double) + 7;

// Every ordered pair of device sets worth testing: each single GPU to each, and all GPUs in
// natural and reversed order to each other and to single GPUs.
std::vector<std::pair<std::vector<int>, std::vector<int>>> set_pairs() {
  const auto orders = cush_test::device_orders();
  std::vector<std::pair<std::vector<int>, std::vector<int>>> pairs;
  for (const auto& a : orders)
    for (const auto& b : orders) pairs.emplace_back(a, b);
  return pairs;
}

template <class T>
std::vector<T> random_vector(std::size_t n) {
  std::vector<T> v(n);
  cush_test::fill_random<T>(v);
  return v;
}

// Replica `pos` of a replicated plan, or segment `pos` of a partitioned one.
template <class T>
void put(Plan<T>& plan, std::size_t pos, const std::vector<T>& data) {
  const cush::Segment<T> s = plan.segment(pos);
  ASSERT_EQ(s.size(), data.size());
  if (data.empty()) return;
  cush::DeviceGuard guard(s.device());
  CUSH_CUDA_CHECK(cudaMemcpyAsync(s.data(), data.data(), s.bytes(), cudaMemcpyHostToDevice, s.stream()));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
}

template <class T>
std::vector<T> get(const Plan<T>& plan, std::size_t pos) {
  const cush::Segment<T> s = plan.segment(pos);
  std::vector<T> out(s.size());
  if (out.empty()) return out;
  cush::DeviceGuard guard(s.device());
  CUSH_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  CUSH_CUDA_CHECK(cudaMemcpy(out.data(), s.data(), s.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

template <class T>
std::vector<T> gathered(Plan<T>& plan) {
  std::vector<T> out(plan.size());
  plan.gather(out.data());
  plan.wait();
  return out;
}

// Distributions that give uneven segments: uniform, or twice as much to the last device.
Distribution skewed(std::size_t devices) {
  std::vector<double> w(devices, 1.0);
  w.back() = 2.0;
  return Distribution::weighted(w);
}

class DeviceOps : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    CUSH_REQUIRE_GPUS(1);
    if ((GetParam() == Transport::nccl || GetParam() == Transport::peer_kernel) && cush_test::gpus_are_shared())
      GTEST_SKIP() << "nccl and peer_kernel refuse logical devices that share a GPU (virtual GPUs; "
                      "VirtualGpus.NcclAndPeerKernelRefuseASharedGpu checks the refusal)";
  }
  CommOptions options() const { return CommOptions{GetParam()}; }
};

}  // namespace

TEST_P(DeviceOps, CopyRedistributesBetweenAnyTwoDeviceSets) {
  for (const auto& [a, b] : set_pairs())
    for (std::size_t n : sizes) {
      SCOPED_TRACE(cush_test::to_string(a) + " -> " + cush_test::to_string(b) + ", n " + std::to_string(n));
      Plan<double> src(DeviceSet(a), n);
      Plan<double> dst(DeviceSet(b), n, skewed(b.size()));
      const std::vector<double> host = random_vector<double>(n);
      src.scatter(host.data());
      cush::copy(src, dst, options());
      ASSERT_EQ(gathered(dst), host);
    }
}

TEST_P(DeviceOps, CopyOfAPartLeavesTheRestAlone) {
  for (const auto& [a, b] : set_pairs()) {
    SCOPED_TRACE(cush_test::to_string(a) + " -> " + cush_test::to_string(b));
    const std::size_t n = 1001;
    Plan<float> src(DeviceSet(a), n);
    Plan<float> dst(DeviceSet(b), n);
    const std::vector<float> x = random_vector<float>(n);
    std::vector<float> y = random_vector<float>(n);
    src.scatter(x.data());
    dst.scatter(y.data());
    cush::copy(src, dst, 100, 555, options());
    std::copy(x.begin() + 100, x.begin() + 655, y.begin() + 100);
    ASSERT_EQ(gathered(dst), y);
  }
}

TEST_P(DeviceOps, LargeCopyPipelinesAcrossChunks) {
  for (const auto& [a, b] : set_pairs()) {
    if (a == b) continue;
    SCOPED_TRACE(cush_test::to_string(a) + " -> " + cush_test::to_string(b));
    Plan<double> src(DeviceSet(a), large);
    Plan<double> dst(DeviceSet(b), large, skewed(b.size()));
    const std::vector<double> host = random_vector<double>(large);
    src.scatter(host.data());
    cush::copy(src, dst, options());
    ASSERT_EQ(gathered(dst), host);
  }
}

TEST_P(DeviceOps, AllGatherScatterAndGatherThroughReplicas) {
  for (const auto& [a, b] : set_pairs())
    for (std::size_t n : {std::size_t{3}, std::size_t{1001}}) {
      SCOPED_TRACE(cush_test::to_string(a) + " <-> " + cush_test::to_string(b) + ", n " + std::to_string(n));
      Plan<int> parts(DeviceSet(a), n, skewed(a.size()));
      Plan<int> replicas(DeviceSet(b), n, Distribution::replicated());
      const std::vector<int> host = random_vector<int>(n);
      parts.scatter(host.data());
      cush::all_gather(parts, replicas, options());
      for (std::size_t r = 0; r < b.size(); ++r) ASSERT_EQ(get(replicas, r), host) << "replica " << r;

      // Scatter from the last replica only: give it different data from the others.
      const std::size_t root = b.size() - 1;
      const std::vector<int> other = random_vector<int>(n);
      put(replicas, root, other);
      Plan<int> back(DeviceSet(a), n);
      cush::scatter(replicas, back, root, options());
      ASSERT_EQ(gathered(back), other);

      // Gather onto replica 0 only: the others keep what they had.
      Plan<int> collected(DeviceSet(b), n, Distribution::replicated());
      const std::vector<int> before = random_vector<int>(n);
      for (std::size_t r = 0; r < b.size(); ++r) put(collected, r, before);
      cush::gather(parts, collected, 0, options());
      for (std::size_t r = 0; r < b.size(); ++r) ASSERT_EQ(get(collected, r), r == 0 ? host : before);
    }
}

TEST_P(DeviceOps, ScatterFromAndGatherToAOneDevicePlan) {
  for (const auto& [a, b] : set_pairs()) {
    if (a.size() != 1) continue;
    SCOPED_TRACE(cush_test::to_string(a) + " <-> " + cush_test::to_string(b));
    const std::size_t n = 4099;
    Plan<std::uint8_t> one(DeviceSet(a), n);
    Plan<std::uint8_t> many(DeviceSet(b), n, skewed(b.size()));
    const std::vector<std::uint8_t> host = random_vector<std::uint8_t>(n);
    one.scatter(host.data());
    cush::scatter(one, many, 0, options());
    ASSERT_EQ(gathered(many), host);
    Plan<std::uint8_t> again(DeviceSet(a), n);
    cush::gather(many, again, 0, options());
    ASSERT_EQ(gathered(again), host);
  }
}

TEST_P(DeviceOps, AllToAllIsTheBlockTransposeOfRowBlocks) {
  for (const auto& [a, b] : set_pairs())
    for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{7, 5}, {1, 3}, {301, 257}}) {
      SCOPED_TRACE(cush_test::to_string(a) + " -> " + cush_test::to_string(b) + ", " + std::to_string(rows) + " x " +
                   std::to_string(cols));
      const std::size_t n = rows * cols;
      // Source: rows of `cols` elements in row blocks; destination: columns of `rows` elements.
      Plan<float> src(DeviceSet(a), n, Distribution::uniform().with_granularity(cols));
      Plan<float> dst(DeviceSet(b), n, skewed(b.size()).with_granularity(rows));
      const std::vector<float> host = random_vector<float>(n);
      src.scatter(host.data());
      cush::all_to_all(src, dst, options());
      // Reference: destination segment j holds, for each source i, the piece of r_i * c_j elements
      // that starts at sum_{k<j} c_k * r_i within source segment i.
      std::vector<float> expected;
      for (std::size_t j = 0; j < b.size(); ++j) {
        const std::size_t cj = dst.layout().segment(j).count / rows;
        std::size_t col_start = 0;
        for (std::size_t k = 0; k < j; ++k) col_start += dst.layout().segment(k).count / rows;
        for (std::size_t i = 0; i < a.size(); ++i) {
          const cush::Range seg = src.layout().segment(i);
          const std::size_t ri = seg.count / cols;
          const std::size_t first = seg.offset + col_start * ri;
          expected.insert(expected.end(), host.begin() + static_cast<std::ptrdiff_t>(first),
                          host.begin() + static_cast<std::ptrdiff_t>(first + ri * cj));
        }
      }
      ASSERT_EQ(gathered(dst), expected);
    }
}

TEST_P(DeviceOps, AllToAllWithExplicitUnevenCounts) {
  for (const auto& [a, b] : set_pairs()) {
    SCOPED_TRACE(cush_test::to_string(a) + " -> " + cush_test::to_string(b));
    const std::size_t p = a.size();
    const std::size_t q = b.size();
    std::vector<std::size_t> counts(p * q);
    for (std::size_t k = 0; k < counts.size(); ++k) counts[k] = k % 3 == 1 ? 0 : 1000 + 17 * k;  // some empty
    std::vector<std::size_t> rows(p, 0);
    std::vector<std::size_t> cols(q, 0);
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = 0; j < q; ++j) {
        rows[i] += counts[i * q + j];
        cols[j] += counts[i * q + j];
      }
    const std::size_t n = std::accumulate(rows.begin(), rows.end(), std::size_t{0});
    const auto exact = [](std::vector<std::size_t> c) {
      return Distribution::custom([c](std::size_t, std::span<const cush::DeviceInfo>) { return c; }, "exact");
    };
    Plan<std::int64_t> src(DeviceSet(a), n, exact(rows));
    Plan<std::int64_t> dst(DeviceSet(b), n, exact(cols));
    const std::vector<std::int64_t> host = random_vector<std::int64_t>(n);
    src.scatter(host.data());
    cush::all_to_all(src, dst, counts, options());
    std::vector<std::int64_t> expected;
    for (std::size_t j = 0; j < q; ++j)
      for (std::size_t i = 0; i < p; ++i) {
        std::size_t first = src.layout().segment(i).offset;
        for (std::size_t k = 0; k < j; ++k) first += counts[i * q + k];
        expected.insert(expected.end(), host.begin() + static_cast<std::ptrdiff_t>(first),
                        host.begin() + static_cast<std::ptrdiff_t>(first + counts[i * q + j]));
      }
    ASSERT_EQ(gathered(dst), expected);
  }
}

TEST_P(DeviceOps, BroadcastFromEveryRoot) {
  for (const auto& order : cush_test::device_orders())
    for (std::size_t n : {std::size_t{3}, std::size_t{1001}, std::size_t{(1 << 20) / 4 + 5}}) {
      for (std::size_t root = 0; root < order.size(); ++root) {
        SCOPED_TRACE(cush_test::to_string(order) + ", n " + std::to_string(n) + ", root " + std::to_string(root));
        Plan<float> plan(DeviceSet(order), n, Distribution::replicated());
        std::vector<std::vector<float>> data;
        for (std::size_t r = 0; r < order.size(); ++r) {
          data.push_back(random_vector<float>(n));
          put(plan, r, data.back());
        }
        cush::broadcast(plan, root, options());
        for (std::size_t r = 0; r < order.size(); ++r) ASSERT_EQ(get(plan, r), data[root]) << "replica " << r;
      }
    }
}

// From 16 MiB on three or more devices the broadcast relays along a chain, in rounds of up to
// 16 MiB, each forwarded to the next device as it lands. 100 MiB gives the chain eight rounds and
// a short last one; the devices in a shuffled order, the root first and last in it.
TEST_P(DeviceOps, LargeBroadcastRelaysInRounds) {
  std::vector<int> order(static_cast<std::size_t>(cush::DeviceSet::available()));
  std::iota(order.begin(), order.end(), 0);
  std::reverse(order.begin(), order.end());
  if (order.size() >= 3) std::swap(order[1], order[order.size() - 1]);  // e.g. {3, 0, 1, 2}
  const std::size_t n = (std::size_t{100} << 20) / sizeof(float) + 5;
  Plan<float> plan(DeviceSet(order), n, Distribution::replicated());
  for (std::size_t root : {std::size_t{0}, order.size() - 1}) {
    SCOPED_TRACE(cush_test::to_string(order) + ", root " + std::to_string(root));
    std::vector<std::vector<float>> data(order.size(), std::vector<float>(n));
    for (std::size_t r = 0; r < order.size(); ++r) {
      for (std::size_t i = 0; i < n; ++i) data[r][i] = static_cast<float>((i * 7 + r * 13 + root) % 1021);
      put(plan, r, data[r]);
    }
    cush::broadcast(plan, root, options());
    for (std::size_t r = 0; r < order.size(); ++r) {
      const std::vector<float> got = get(plan, r);
      const auto [at, want] = std::mismatch(got.begin(), got.end(), data[root].begin());
      ASSERT_TRUE(at == got.end()) << "replica " << r << ", element " << (at - got.begin()) << ": " << *at
                                   << " instead of " << *want;  // not the whole 100 MiB
    }
  }
}

namespace {
template <class T>
void check_reduce(const std::vector<int>& order, std::size_t n, cush::ReduceOp op, const CommOptions& options) {
  SCOPED_TRACE(cush_test::to_string(order) + ", " + cush::to_string(cush::element_type_of<T>()) + " " +
               cush::to_string(op) + ", n " + std::to_string(n));
  const auto combine = [op](T x, T y) -> T {
    switch (op) {
      case cush::ReduceOp::sum: return static_cast<T>(x + y);
      case cush::ReduceOp::min: return std::min(x, y);
      case cush::ReduceOp::max: return std::max(x, y);
    }
    return x;
  };
  std::vector<std::vector<T>> data;
  for (std::size_t r = 0; r < order.size(); ++r) {
    std::vector<T> v = random_vector<T>(n);
    // Floats hold small integers, so that any order of summation gives the same exact result.
    if constexpr (std::is_floating_point_v<T>)
      for (T& x : v) x = std::round(x / 8);
    data.push_back(v);
  }
  std::vector<T> expected = data[0];
  for (std::size_t r = 1; r < order.size(); ++r)
    for (std::size_t k = 0; k < n; ++k) expected[k] = combine(expected[k], data[r][k]);

  Plan<T> all(DeviceSet(order), n, Distribution::replicated());
  for (std::size_t r = 0; r < order.size(); ++r) put(all, r, data[r]);
  cush::all_reduce(all, op, options);
  for (std::size_t r = 0; r < order.size(); ++r) ASSERT_EQ(get(all, r), expected) << "all-reduce replica " << r;

  // Every root: the spread reduce leaves the root's share empty wherever it stands.
  for (std::size_t root = 0; root < order.size(); ++root) {
    Plan<T> one(DeviceSet(order), n, Distribution::replicated());
    for (std::size_t r = 0; r < order.size(); ++r) put(one, r, data[r]);
    cush::reduce(one, op, root, options);
    for (std::size_t r = 0; r < order.size(); ++r)
      ASSERT_EQ(get(one, r), r == root ? expected : data[r]) << "reduce to root " << root << ", replica " << r;
  }
}
}  // namespace

TEST_P(DeviceOps, ReduceAndAllReduceForEveryTypeAndOperator) {
  for (const auto& order : cush_test::device_orders()) {
    for (std::size_t n : {std::size_t{1}, std::size_t{1001}, std::size_t{65537}}) {
      check_reduce<float>(order, n, cush::ReduceOp::sum, options());
      check_reduce<double>(order, n, cush::ReduceOp::max, options());
      check_reduce<std::int32_t>(order, n, cush::ReduceOp::min, options());
      check_reduce<std::uint8_t>(order, n, cush::ReduceOp::sum, options());
    }
    check_reduce<std::int64_t>(order, 3001, cush::ReduceOp::sum, options());
    check_reduce<std::uint32_t>(order, 3001, cush::ReduceOp::max, options());
    check_reduce<std::int8_t>(order, 3001, cush::ReduceOp::min, options());
    check_reduce<std::uint64_t>(order, 3001, cush::ReduceOp::min, options());
    // Larger than the staging chunk: the staged reduction combines chunk by chunk.
    check_reduce<double>(order, large, cush::ReduceOp::sum, options());
  }
}

TEST_P(DeviceOps, CopySegmentBetweenPlans) {
  for (const auto& [a, b] : set_pairs()) {
    SCOPED_TRACE(cush_test::to_string(a) + " -> " + cush_test::to_string(b));
    Plan<double> src(DeviceSet(a), 999, Distribution::replicated());
    Plan<double> dst(DeviceSet(b), 999, Distribution::replicated());
    const std::vector<double> x = random_vector<double>(999);
    put(src, a.size() - 1, x);
    cush::copy_segment(src, a.size() - 1, dst, 0, options());
    ASSERT_EQ(get(dst, 0), x);
  }
}

TEST_P(DeviceOps, OperationsWaitForEarlierKernelsAndReturnAtOnce) {
  CUSH_REQUIRE_GPUS(2);
  const std::size_t n = 1 << 20;
  // Makes the NCCL communicator of {0, 1} (kept for the process) and its point-to-point
  // connections (the first send/receive between two GPUs sets them up and blocks), so that the
  // timed copy does neither.
  Plan<float> warm_src(DeviceSet{1, 0}, 2);
  Plan<float> warm_dst(DeviceSet{0, 1}, 2);
  if (!cush_test::gpus_are_shared()) {  // else no NCCL (virtual GPUs)
    cush::copy(warm_src, warm_dst, CommOptions{Transport::nccl});
    cush::copy(warm_dst, warm_src, CommOptions{Transport::nccl});
  }
  warm_dst.wait();
  Plan<float> src(DeviceSet{1, 0}, n);
  Plan<float> dst(DeviceSet{0, 1}, n);
  std::vector<float> host(n, 1.0f);
  src.scatter(host.data());
  // A slow kernel on the source, then one that changes the data: the copy must see the change.
  cush_test::spin(src.stream(0), 200);
  src.for_each([](cush::Segment<float> s) { cush_test::affine(s.data(), s.size(), 3.0f, 1.0f, s.stream()); });
  const auto t0 = std::chrono::steady_clock::now();
  cush::copy(src, dst, options());
  const double enqueue_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // A CUDA tool (compute-sanitizer) may run kernels one by one and launches to completion: the
  // times say nothing then, the values below still must hold.
  const bool timed = !cush_test::under_cuda_tool();
  if (timed) EXPECT_FALSE(dst.done());
  const std::vector<float> out = gathered(dst);
  for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(out[k], 4.0f) << k;
  // Enqueueing does not wait for the 200 ms kernel.
  if (timed) EXPECT_LT(enqueue_ms, 150.0);
  // And the source's streams wait for the copy: a kernel after it must not change what was sent.
  cush::copy(src, dst, options());
  src.for_each([](cush::Segment<float> s) { cush_test::affine(s.data(), s.size(), 0.0f, -1.0f, s.stream()); });
  const std::vector<float> again = gathered(dst);
  for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(again[k], 4.0f) << k;
  // The copy also starts after the destination's earlier work (peer copies are pushed from the
  // source's stream): a slow kernel there, then one that writes the destination, must both be
  // done before the copy lands, or their 7s would remain.
  dst.for_each([](cush::Segment<float> s) {
    cush_test::spin(s.stream(), 100);
    cush_test::affine(s.data(), s.size(), 0.0f, 7.0f, s.stream());
  });
  cush::copy(src, dst, options());
  const std::vector<float> last = gathered(dst);
  for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(last[k], -1.0f) << k;
}

INSTANTIATE_TEST_SUITE_P(Transports, DeviceOps,
                         ::testing::Values(Transport::automatic, Transport::peer, Transport::nccl,
                                           Transport::host_staging, Transport::peer_kernel),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return std::string(cush::to_string(info.param));
                         });

TEST(DeviceOpsErrors, BadArgumentsAreRejectedBeforeAnythingMoves) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  Plan<float> a(gpus, 100);
  Plan<float> b(gpus, 100 + gpus.size());  // every segment one element longer than a's
  Plan<float> rep(gpus, 100, Distribution::replicated());
  EXPECT_THROW(cush::copy(a, a), cush::InvalidArgument);
  EXPECT_THROW(cush::copy(a, b), cush::InvalidArgument);
  EXPECT_THROW(cush::copy(a, rep, 90, 20), cush::InvalidArgument);
  EXPECT_THROW(cush::broadcast(a, 0), cush::InvalidArgument);
  EXPECT_THROW(cush::broadcast(rep, gpus.size()), cush::InvalidArgument);
  EXPECT_THROW(cush::all_reduce(a, cush::ReduceOp::sum), cush::InvalidArgument);
  EXPECT_THROW(cush::reduce(rep, cush::ReduceOp::sum, gpus.size()), cush::InvalidArgument);
  EXPECT_THROW(cush::all_gather(a, a), cush::InvalidArgument);
  Plan<float> c(gpus, 100);
  EXPECT_THROW(cush::all_gather(a, c), cush::InvalidArgument);  // destination not replicated
  EXPECT_THROW(cush::all_to_all(a, rep), cush::InvalidArgument);
  const std::vector<std::size_t> wrong(gpus.size() * gpus.size() + 1, 0);
  EXPECT_THROW(cush::all_to_all(a, c, wrong), cush::InvalidArgument);
  EXPECT_THROW(cush::copy_segment(a, 0, b, 0), cush::InvalidArgument);
  if (gpus.size() > 1) EXPECT_THROW(cush::scatter(a, c, 0), cush::InvalidArgument);  // root lacks the whole extent
  a.wait();
}

TEST(DeviceOpsGraph, PeerAndStagedOperationsCanBeCapturedAndReplayed) {
  CUSH_REQUIRE_GPUS(2);
  for (Transport t : {Transport::peer, Transport::host_staging}) {
    SCOPED_TRACE(cush::to_string(t));
    const std::size_t n = 100003;
    Plan<double> plan(DeviceSet{1, 0}, n, Distribution::replicated());
    std::vector<double> x(n, 1.0);
    std::vector<double> y(n, 2.0);
    // A first, uncaptured operation enables peer access and allocates the staging slots:
    // resources are created on first use, which a capture must not contain.
    cush::all_reduce(plan, cush::ReduceOp::sum, CommOptions{t});
    plan.wait();
    put(plan, 0, x);
    put(plan, 1, y);
    // Capture from stream 0; stream 1 joins the capture through an event.
    cudaStream_t s0 = plan.stream(0);
    cudaStream_t s1 = plan.stream(1);
    cush::Event fork(1);
    cush::Event join(0);
    cudaGraph_t graph = nullptr;
    {
      cush::DeviceGuard guard(1);
      CUSH_CUDA_CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed));
      fork.record(s0);
      fork.wait_in(s1);
      cush::all_reduce(plan, cush::ReduceOp::sum, CommOptions{t});
      join.record(s1);
      join.wait_in(s0);
      CUSH_CUDA_CHECK(cudaStreamEndCapture(s0, &graph));
    }
    cudaGraphExec_t exec = nullptr;
    CUSH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    // Nothing ran during capture; two replays: 1 + 2 = 3, then 3 + 3 = 6.
    EXPECT_EQ(get(plan, 0)[7], 1.0);
    for (int replay = 0; replay < 2; ++replay) {
      cush::DeviceGuard guard(1);
      CUSH_CUDA_CHECK(cudaGraphLaunch(exec, s0));
      CUSH_CUDA_CHECK(cudaStreamSynchronize(s0));
    }
    for (std::size_t r = 0; r < 2; ++r) {
      const std::vector<double> out = get(plan, r);
      for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(out[k], 6.0) << "replica " << r << " element " << k;
    }
    CUSH_CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUSH_CUDA_CHECK(cudaGraphDestroy(graph));
  }
}

TEST(DeviceOpsGraph, NcclAndPeerKernelAreRefusedUnderCaptureAndAutomaticFallsBackToPeer) {
  CUSH_REQUIRE_GPUS(2);
  const std::size_t n = 4099;
  Plan<float> src(DeviceSet{0, 1}, n);
  Plan<float> dst(DeviceSet{1, 0}, n);
  const std::vector<float> x = random_vector<float>(n);
  src.scatter(x.data());
  cush::copy(src, dst, CommOptions{Transport::peer});  // enables peer access outside the capture
  dst.wait();
  // A table that picks peer_kernel for every size: under capture, automatic must take peer.
  const cush::TransportTable saved = cush::TransportTable::current();
  cush::TransportTable kernel_only;
  for (std::size_t c = 0; c < cush::collective_count; ++c)
    kernel_only.set(static_cast<cush::Collective>(c), 0, Transport::peer_kernel);
  cush::TransportTable::set_current(kernel_only);
  cudaStream_t s0 = dst.stream(0);  // device 1
  cush::Event fork(1);
  std::vector<cush::Event> joins;
  joins.reserve(3);
  cudaGraph_t graph = nullptr;
  {
    cush::DeviceGuard guard(1);
    CUSH_CUDA_CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed));
    fork.record(s0);
    // Every stream the copy touches joins the capture.
    for (cudaStream_t s : {src.stream(0), src.stream(1), dst.stream(1)}) fork.wait_in(s);
    EXPECT_THROW(cush::copy(src, dst, CommOptions{Transport::nccl}), cush::InvalidArgument);
    EXPECT_THROW(cush::copy(src, dst, CommOptions{Transport::peer_kernel}), cush::InvalidArgument);
    cush::copy(src, dst);  // automatic
    for (auto [s, device] : {std::pair{src.stream(0), 0}, std::pair{src.stream(1), 1}, std::pair{dst.stream(1), 0}}) {
      joins.emplace_back(device);
      joins.back().record(s);
      joins.back().wait_in(s0);
    }
    CUSH_CUDA_CHECK(cudaStreamEndCapture(s0, &graph));
  }
  cush::TransportTable::set_current(saved);
  cudaGraphExec_t exec = nullptr;
  CUSH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  {
    cush::DeviceGuard guard(1);
    CUSH_CUDA_CHECK(cudaGraphLaunch(exec, s0));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(s0));
  }
  EXPECT_EQ(gathered(dst), x);
  CUSH_CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUSH_CUDA_CHECK(cudaGraphDestroy(graph));
}

// On virtual GPUs that share a GPU, forcing nccl or peer_kernel is an InvalidArgument that says
// why, and automatic still runs every operation (on peer).
TEST(VirtualGpus, NcclAndPeerKernelRefuseASharedGpu) {
  CUSH_REQUIRE_GPUS(2);
  if (!cush::DeviceSet{0, 1}.topology().link(0, 1).same_gpu)
    GTEST_SKIP() << "needs devices 0 and 1 on one GPU (CUSH_VIRTUAL_GPUS=2 on one GPU)";
  const std::vector<double> host = random_vector<double>(1001);
  Plan<double> src(DeviceSet{0, 1}, host.size()), dst(DeviceSet{1, 0}, host.size());
  src.scatter(host.data());
  for (Transport t : {Transport::nccl, Transport::peer_kernel}) {
    try {
      cush::copy(src, dst, CommOptions{t});
      ADD_FAILURE() << cush::to_string(t) << " ran on one GPU twice";
    } catch (const cush::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("share"), std::string::npos) << e.what();
    }
  }
  Plan<double> sums(DeviceSet{0, 1}, host.size(), Distribution::replicated());
  sums.broadcast(host.data());
  cush::all_reduce(sums, cush::ReduceOp::sum);  // automatic: nccl below 128 MiB, here peer
  cush::copy(src, dst);
  ASSERT_EQ(gathered(dst), host);
  const std::vector<double> twice = gathered(sums);
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(twice[i], 2 * host[i]) << i;
}
