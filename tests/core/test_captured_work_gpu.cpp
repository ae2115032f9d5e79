// CapturedWork: work over several devices' streams captured once and replayed. A replay must
// equal the calls it captured, ordered after earlier work on every stream and before later work
// on every stream (each checked by a spin that makes a missing wait show); a failed capture must
// leave no stream capturing.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "cush/captured_work.hpp"
#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/stream.hpp"
#include "support/gpu.hpp"
#include "support/kernels.hpp"

namespace {

constexpr std::size_t kValues = 1000 + 37;

struct Devices {
  std::vector<int> ids;
  std::vector<cush::Stream> streams;
  std::vector<cush::DeviceBuffer> a, b;
  std::vector<cush::Event> ready;
  explicit Devices(const std::vector<int>& order) : ids(order) {
    for (int d : ids) {
      streams.emplace_back(d);
      a.emplace_back(d, kValues * sizeof(double));
      b.emplace_back(d, kValues * sizeof(double));
      ready.emplace_back(d);
    }
  }
  [[nodiscard]] std::vector<cush::StreamRef> refs() const { return {streams.begin(), streams.end()}; }
  double* at(std::vector<cush::DeviceBuffer>& v, std::size_t k) { return static_cast<double*>(v[k].data()); }
  [[nodiscard]] std::size_t size() const { return ids.size(); }
};

// The captured step: on every device a_k += 1000 k + i; then b_k = a_{k+1} + k + i (next device
// around the ring, after its update).
void step(Devices& d) {
  const std::size_t n = d.size();
  for (std::size_t k = 0; k < n; ++k) {
    const cush::DeviceGuard guard(d.ids[k]);
    cush_test::spin_current(d.streams[k].get(), 0.2);
    cush_test::add_index(d.at(d.a, k), kValues, 1000 * k, d.streams[k].get());
    d.ready[k].record(d.streams[k].get());
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t next = (k + 1) % n;
    const cush::DeviceGuard guard(d.ids[k]);
    d.ready[next].wait_in(d.streams[k].get());
    CUSH_CUDA_CHECK(cudaMemcpyAsync(d.at(d.b, k), d.at(d.a, next), kValues * sizeof(double), cudaMemcpyDefault,
                                    d.streams[k].get()));
    cush_test::add_index(d.at(d.b, k), kValues, k, d.streams[k].get());
  }
}

// Work outside the graph, after a spin: a_k = b_k + 7 + i (it does not commute with the step).
void between(Devices& d) {
  for (std::size_t k = 0; k < d.size(); ++k) {
    const cush::DeviceGuard guard(d.ids[k]);
    cush_test::spin_current(d.streams[k].get(), 0.2);
    CUSH_CUDA_CHECK(cudaMemcpyAsync(d.at(d.a, k), d.at(d.b, k), kValues * sizeof(double), cudaMemcpyDefault,
                                    d.streams[k].get()));
    cush_test::add_index(d.at(d.a, k), kValues, 7, d.streams[k].get());
  }
}

using Values = std::vector<std::vector<double>>;

void model_step(Values& a, Values& b) {
  const std::size_t n = a.size();
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < kValues; ++i) a[k][i] += static_cast<double>(1000 * k + i);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < kValues; ++i) b[k][i] = a[(k + 1) % n][i] + static_cast<double>(k + i);
}

void model_between(Values& a, const Values& b) {
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::size_t i = 0; i < kValues; ++i) a[k][i] = b[k][i] + static_cast<double>(7 + i);
}

void upload(Devices& d, const Values& a, const Values& b) {
  for (std::size_t k = 0; k < d.size(); ++k) {
    const cush::DeviceGuard guard(d.ids[k]);
    CUSH_CUDA_CHECK(cudaMemcpy(d.at(d.a, k), a[k].data(), kValues * sizeof(double), cudaMemcpyHostToDevice));
    CUSH_CUDA_CHECK(cudaMemcpy(d.at(d.b, k), b[k].data(), kValues * sizeof(double), cudaMemcpyHostToDevice));
  }
}

void expect_held(Devices& d, const Values& a, const Values& b, const std::string& what) {
  for (std::size_t k = 0; k < d.size(); ++k) {
    std::vector<double> got_a(kValues), got_b(kValues);
    const cush::DeviceGuard guard(d.ids[k]);
    CUSH_CUDA_CHECK(cudaMemcpy(got_a.data(), d.at(d.a, k), kValues * sizeof(double), cudaMemcpyDeviceToHost));
    CUSH_CUDA_CHECK(cudaMemcpy(got_b.data(), d.at(d.b, k), kValues * sizeof(double), cudaMemcpyDeviceToHost));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kValues; ++i) wrong += (got_a[i] != a[k][i]) + (got_b[i] != b[k][i]);
    EXPECT_EQ(wrong, 0U) << what << ", device " << d.ids[k] << " (position " << k << ")";
  }
}

bool capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EXPECT_EQ(cudaStreamIsCapturing(s, &status), cudaSuccess);
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

TEST(CapturedWork, ReplaysInOrderWithTheStreamsWorkOnEveryDeviceOrder) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> value(-1000, 1000);
  for (const std::vector<int>& order : cush_test::device_orders()) {
    Devices d(order);
    Values a(d.size(), std::vector<double>(kValues)), b = a;
    for (auto* v : {&a, &b})
      for (auto& row : *v)
        for (double& x : row) x = value(rng);
    upload(d, a, b);
    std::vector<cush::StreamRef> streams = d.refs();
    streams.push_back(streams.front());  // a repeat is ignored
    cush::CapturedWork captured(streams, [&] { step(d); });
    EXPECT_GE(captured.nodes(), 3 * d.size());
    expect_held(d, a, b, "nothing runs at capture");
    for (int round = 0; round < 3; ++round) {
      captured.launch();
      model_step(a, b);
      between(d);
      model_between(a, b);
    }
    captured.wait();
    for (const cush::Stream& s : d.streams) s.synchronize();
    expect_held(d, a, b, "3 launches with work between them, " + std::to_string(d.size()) + " devices");
  }
}

TEST(CapturedWork, AFailedCaptureLeavesNoStreamCapturing) {
  CUSH_REQUIRE_GPUS(1);
  const std::vector<int> order = cush_test::device_orders().back();
  Devices d(order);
  const std::vector<cush::StreamRef> streams = d.refs();
  // The work throws.
  EXPECT_THROW(cush::CapturedWork(streams, [&] {
                 step(d);
                 throw std::runtime_error("user's failure");
               }),
               std::runtime_error);
  for (const cush::Stream& s : d.streams) EXPECT_FALSE(capturing(s.get()));
  // Work forked onto a stream that never joins back.
  cudaStream_t other = nullptr;
  {
    const cush::DeviceGuard guard(order[0]);
    ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  }
  EXPECT_THROW(cush::CapturedWork(streams,
                                  [&] {
                                    const cush::DeviceGuard guard(order[0]);
                                    d.ready[0].record(d.streams[0].get());
                                    d.ready[0].wait_in(other);
                                    cush_test::spin_current(other, 0.01);
                                  }),
               cush::CudaError);
  for (const cush::Stream& s : d.streams) EXPECT_FALSE(capturing(s.get()));
  EXPECT_FALSE(capturing(other)) << "the stream left unjoined";
  // A stream already being captured.
  {
    const cush::DeviceGuard guard(order[0]);
    ASSERT_EQ(cudaStreamBeginCapture(d.streams[0].get(), cudaStreamCaptureModeRelaxed), cudaSuccess);
    EXPECT_THROW(cush::CapturedWork(streams, [] {}), cush::InvalidArgument);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(d.streams[0].get(), &graph), cudaSuccess);
    ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(other), cudaSuccess);
  }
  (void)cudaGetLastError();
  // The streams still work, and a capture after the failures replays.
  Values a(d.size(), std::vector<double>(kValues, 1.0)), b = a;
  upload(d, a, b);
  cush::CapturedWork captured(streams, [&] { step(d); });
  captured.launch();
  model_step(a, b);
  captured.wait();
  expect_held(d, a, b, "a capture after failed ones");
}

TEST(CapturedWork, MovedFromIsRefused) {
  CUSH_REQUIRE_GPUS(1);
  Devices d({0});
  const std::vector<cush::StreamRef> streams = d.refs();
  cush::CapturedWork first(streams, [&] { step(d); });
  cush::CapturedWork second(std::move(first));
  second.launch();
  second.wait();
  EXPECT_THROW(first.launch(), cush::InvalidArgument);  // NOLINT(bugprone-use-after-move): the point
  first.wait();                                          // nothing to wait for
}
