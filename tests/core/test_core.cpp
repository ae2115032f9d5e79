// Host-only pieces: error messages, device-id validation, options, the thread pool.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "cush/cush.hpp"
#include "core/device_ids.hpp"
#include "core/format.hpp"
#include "core/thread_pool.hpp"
#include "support/random.hpp"

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST(Errors, CudaErrorNamesTheCallTheErrorAndTheContext) {
  const std::string m = message_of([] { CUSH_CUDA_CHECK_AT(cudaErrorInvalidValue, "segment 1, 4096 bytes"); });
  EXPECT_TRUE(contains(m, "cudaErrorInvalidValue")) << m;
  EXPECT_TRUE(contains(m, "segment 1, 4096 bytes")) << m;
  EXPECT_TRUE(contains(m, "test_core.cpp")) << m;
  try {
    CUSH_CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL();
  } catch (const cush::CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
    EXPECT_EQ(e.call(), "cudaErrorMemoryAllocation");
  }
}

TEST(Errors, CheckEvaluatesTheCallOnce) {
  int calls = 0;
  auto call = [&] {
    ++calls;
    return cudaErrorInvalidValue;
  };
  EXPECT_THROW(CUSH_CUDA_CHECK(call()), cush::CudaError);
  EXPECT_EQ(calls, 1);
  calls = 0;
  auto fine = [&] {
    ++calls;
    return cudaSuccess;
  };
  CUSH_CUDA_CHECK(fine());
  EXPECT_EQ(calls, 1);
}

// A GPU the build has no code for is refused at its first use with the device, its capability,
// the build's architectures and what to rebuild with (the check itself needs such a GPU).
TEST(Errors, UnsupportedDeviceSaysWhatToRebuildWith) {
  const std::string m = cush::detail::unsupported_device_message(1, 80, "90");
  EXPECT_TRUE(contains(m, "device 1 has compute capability 8.0")) << m;
  EXPECT_TRUE(contains(m, "CMAKE_CUDA_ARCHITECTURES 90")) << m;
  EXPECT_TRUE(contains(m, "-DCMAKE_CUDA_ARCHITECTURES=\"80-real;90\"")) << m;
  const cush::UnsupportedDevice e(1, 80, m);
  const cush::Error& base = e;  // caught as any cush error
  EXPECT_EQ(e.device(), 1);
  EXPECT_EQ(e.capability(), 80);
  EXPECT_EQ(std::string(base.what()), m);
  EXPECT_NE(std::string(cush::detail::built_architectures()), "");
}

TEST(Errors, InvalidArgumentAndOutOfMemorySayWhatIsWrong) {
  const cush::InvalidArgument bad("cush::Plan", "n", "a plan needs at least one element");
  EXPECT_EQ(bad.where(), "cush::Plan");
  EXPECT_EQ(bad.argument(), "n");
  EXPECT_STREQ(bad.what(), "cush::Plan: argument 'n': a plan needs at least one element");
  const cush::OutOfMemory oom("cush::Plan", 1, std::size_t{3} << 30, std::size_t{1} << 29);
  EXPECT_EQ(oom.needed(), std::size_t{3} << 30);
  EXPECT_STREQ(oom.what(), "cush::Plan: not enough free memory on device 1: needs 3.00 GiB, 512.00 MiB available");
  EXPECT_EQ(cush::detail::format_bytes(512), "512 B");
  EXPECT_EQ(cush::detail::format_bytes(1536), "1.50 KiB");
}

TEST(DeviceIds, AreValidatedBeforeAnythingElse) {
  const std::vector<int> ok{1, 0};
  EXPECT_NO_THROW(cush::detail::validate_device_ids(ok, 2, "test"));
  const std::vector<int> empty;
  EXPECT_THROW(cush::detail::validate_device_ids(empty, 2, "test"), cush::InvalidArgument);
  const std::vector<int> twice{0, 1, 0};
  EXPECT_TRUE(contains(message_of([&] { cush::detail::validate_device_ids(twice, 2, "test"); }), "device id 0 is listed twice"));
  const std::vector<int> too_big{0, 2};
  EXPECT_TRUE(contains(message_of([&] { cush::detail::validate_device_ids(too_big, 2, "test"); }),
                       "device id 2 is out of range (this host has 2 GPUs)"));
  const std::vector<int> negative{-1};
  EXPECT_THROW(cush::detail::validate_device_ids(negative, 2, "test"), cush::InvalidArgument);
}

TEST(DeviceIds, WithoutAGpuADeviceSetSaysSoPlainly) {
  if (cush::DeviceSet::available() > 0) GTEST_SKIP() << "this host has GPUs; the no-GPU path is tested on CPU-only hosts";
  EXPECT_THROW((void)cush::DeviceSet::all(), cush::NoDevice);
  const std::string m = message_of([] { cush::DeviceSet{0}; });
  EXPECT_TRUE(contains(m, "no usable CUDA device")) << m;
  // It says that there is no GPU or driver, never that the driver is insufficient (the runtime's
  // words without one), which would send a user to update a driver that is not there.
  const std::string why = cush::DeviceSet::unavailable_reason();
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(contains(why, "no GPU") || contains(why, "update the driver")) << why;
  EXPECT_FALSE(contains(m, "insufficient") && !contains(m, "update the driver")) << m;
  EXPECT_FALSE(cush::is_pinned(&m, 1));
  // Empty lists are rejected as bad input even before looking for GPUs.
  EXPECT_THROW(cush::DeviceSet(std::vector<int>{}), cush::InvalidArgument);
}

TEST(Options, AreValidated) {
  const cush::HostTransferOptions saved = cush::host_transfer_options();
  cush::HostTransferOptions o = saved;
  o.staging_chunk = 1000;
  EXPECT_THROW(cush::set_host_transfer_options(o), cush::InvalidArgument);
  o = saved;
  o.staging_slots = 1;
  EXPECT_THROW(cush::set_host_transfer_options(o), cush::InvalidArgument);
  o = saved;
  o.staging_chunk = std::size_t{64} << 10;
  cush::set_host_transfer_options(o);
  EXPECT_EQ(cush::host_transfer_options().staging_chunk, std::size_t{64} << 10);
  cush::set_host_transfer_options(saved);
}

TEST(RuntimeVersions, AreReportedWithoutAGpuToo) {
  const cush::RuntimeVersions v = cush::runtime_versions();
  EXPECT_EQ(v.cush, "0.1.0");
  EXPECT_NE(v.cuda_runtime, "none");
  EXPECT_NE(v.nccl, "none");
}

TEST(ThreadPool, RunsEveryTaskOnceAndPropagatesErrors) {
  cush::detail::ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1000);
  pool.run(hits.size(), [&](std::size_t i) { hits[i].fetch_add(1); });
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_THROW(pool.run(10, [](std::size_t i) {
    if (i == 7) throw std::runtime_error("task 7");
  }), std::runtime_error);
  // Several callers at once.
  std::atomic<long> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] { pool.run(100, [&](std::size_t i) { sum += static_cast<long>(i); }); });
  for (auto& t : callers) t.join();
  EXPECT_EQ(sum.load(), 4 * 4950);
}

TEST(ThreadPool, ParallelMemcpyCopiesEveryByteAndNoMore) {
  constexpr std::size_t max = (std::size_t{24} << 20) + 64;
  std::vector<unsigned char> src(max), dst(max + 1);
  cush_test::fill_random(std::span<unsigned char>(src));
  std::vector<std::size_t> sizes{0, 1, 4095, std::size_t{3} << 20, (std::size_t{7} << 20) + 13};
  // The sizes that once lost their tail: bytes / tasks a multiple of 4 KiB, bytes % tasks != 0.
  for (std::size_t tasks : {2, 3, 5, 7, 16, 17})
    for (std::size_t pages_per_task : {256, 320, 1024})
      for (std::size_t extra : {std::size_t{1}, tasks - 1})
        if (tasks * pages_per_task * 4096 + extra <= max) sizes.push_back(tasks * pages_per_task * 4096 + extra);
  std::mt19937_64 g(5);
  for (int k = 0; k < 100; ++k) sizes.push_back(std::uniform_int_distribution<std::size_t>(0, max)(g));
  for (std::size_t bytes : sizes) {
    for (unsigned threads : {1U, 2U, 5U, 16U, 17U}) {
      std::memset(dst.data(), 0xAB, bytes + 1);
      cush::detail::parallel_memcpy(dst.data(), src.data(), bytes, threads);
      ASSERT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0) << bytes << " bytes, " << threads << " threads";
      ASSERT_EQ(dst[bytes], 0xAB) << "wrote past the end: " << bytes << " bytes, " << threads << " threads";
    }
  }
}

TEST(PinnedBuffer, RejectsSizesThatOverflow) {
  EXPECT_THROW(cush::PinnedBuffer<double>(SIZE_MAX / 4), cush::InvalidArgument);
  const cush::PinnedBuffer<double> empty(0);
  EXPECT_EQ(empty.data(), nullptr);
}
