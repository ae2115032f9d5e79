// The per-process memory count behind CUSH_TEST_MEMORY=process (support/process_memory.hpp): it
// sees this process's allocations, and not another process's on the same GPU, which a GPU's free
// memory does. scripts/gpu_check.sh runs this test first and lets the leak-checking tests share
// the GPUs with others only when it passes.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/process_memory.hpp"

namespace {

constexpr std::size_t kBlock = std::size_t{256} << 20;
constexpr const char* kHolding = "holding 256 MiB on GPU 0";
constexpr const char* kChildEnv = "CUSH_PROCESS_MEMORY_CHILD";

// A context on every visible GPU, then this process's memory on each.
std::vector<std::size_t> used_now() {
  int count = 0;
  EXPECT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  for (int d = 0; d < count; ++d) {
    EXPECT_EQ(cudaSetDevice(d), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
  std::string why;
  const std::optional<std::vector<std::size_t>> used = cush_test::process_used_memory(why);
  EXPECT_TRUE(used.has_value()) << why;
  return used.value_or(std::vector<std::size_t>{});
}

}  // namespace

// Run only by CountsThisProcessOnly: holds 256 MiB on GPU 0 until it is killed (at most 60 s).
TEST(ProcessMemory, HolderChild) {
  if (std::getenv(kChildEnv) == nullptr) GTEST_SKIP() << "a helper: ProcessMemory.CountsThisProcessOnly runs it in a process of its own; nothing to do alone";
  void* block = nullptr;
  ASSERT_EQ(cudaMalloc(&block, kBlock), cudaSuccess);
  std::printf("%s\n", kHolding);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(60));
  EXPECT_EQ(cudaFree(block), cudaSuccess);
}

TEST(ProcessMemory, CountsThisProcessOnly) {
  CUSH_REQUIRE_GPUS(1);
  if (std::getenv(kChildEnv) != nullptr) GTEST_SKIP() << "a child runs only its holder";
  if (cush_test::under_cuda_tool()) GTEST_SKIP() << "the tool's own allocations move the count";
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  for (int d = 0; d < count; ++d) {
    ASSERT_EQ(cudaSetDevice(d), cudaSuccess);
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // a context on every GPU
  }
  std::string why;
  if (!cush_test::process_used_memory(why)) {
    if (cush_test::process_memory_mode()) FAIL() << "CUSH_TEST_MEMORY=process, but " << why;
    GTEST_SKIP() << why;
  }
  const std::vector<std::size_t> before = used_now();

  // Its own allocations: 256 MiB more on each GPU while they live, the same as before after.
  std::vector<void*> blocks(before.size(), nullptr);
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    ASSERT_EQ(cudaSetDevice(static_cast<int>(d)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&blocks[d], kBlock), cudaSuccess);
  }
  const std::vector<std::size_t> holding = used_now();
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    EXPECT_GE(holding[d], before[d] + kBlock) << "GPU " << d;
    ASSERT_EQ(cudaSetDevice(static_cast<int>(d)), cudaSuccess);
    ASSERT_EQ(cudaFree(blocks[d]), cudaSuccess);
  }
  EXPECT_EQ(used_now(), before) << "after the blocks were freed";

  // Another process's 256 MiB on GPU 0: the GPU's free memory drops, this process's count does not.
  const std::size_t free_alone = cush_test::gpu_free_memory()[0];
  cush_test::ChildProcess child("ProcessMemory.HolderChild", {std::string(kChildEnv) + "=1"},
                                testing::TempDir() + "cush-process-memory-child.log");
  ASSERT_TRUE(child.wait_for_output(kHolding, std::chrono::seconds(60))) << child.ending() << ":\n" << child.output();
  EXPECT_EQ(used_now(), before) << "another process's allocation counted as this one's";
  std::size_t free_now = 0, total = 0;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free_now, &total), cudaSuccess);
  if (!cush_test::process_memory_mode())
    EXPECT_LE(free_now + kBlock, free_alone) << "the other process's block should show in the GPU's free memory";
  EXPECT_EQ(cush_test::gpu_free_memory()[0] == free_alone, cush_test::process_memory_mode())
      << "gpu_free_memory() should follow the other process only without CUSH_TEST_MEMORY=process";
}
