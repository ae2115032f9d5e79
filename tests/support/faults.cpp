#include "support/faults.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <set>
#include <vector>

#include "core/fault_injection.hpp"
#include "cush/error.hpp"
#include "support/gpu.hpp"

namespace cush_test {

namespace {

namespace faults = cush::detail::faults;

// Free memory of every GPU once its work has finished and its default memory pool has given back
// what it caches (cudaFreeAsync keeps memory in the pool).
std::vector<std::size_t> free_memory_of_every_gpu() {
  int count = 0, current = 0;
  EXPECT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(cudaGetDevice(&current), cudaSuccess);
  std::vector<std::size_t> free(static_cast<std::size_t>(count));
  for (int d = 0; d < count; ++d) {
    std::size_t total = 0;
    cudaMemPool_t pool = nullptr;
    EXPECT_EQ(cudaSetDevice(d), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, d), cudaSuccess);
    EXPECT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
    EXPECT_EQ(cudaMemGetInfo(&free[static_cast<std::size_t>(d)], &total), cudaSuccess);
  }
  EXPECT_EQ(cudaSetDevice(current), cudaSuccess);
  return free;
}

// The function a call text calls: "cudaMemcpyAsync(dst, ...)" -> "cudaMemcpyAsync".
std::string function_of(const std::string& call) {
  std::string f = call.substr(0, call.find('('));
  while (!f.empty() && f.back() == ' ') f.pop_back();
  return f;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Empty if `error` is of the kind a failure of `call` must raise, else what is wrong.
std::string wrong_kind(const std::string& call, const cush::Error& error) {
  const bool cuda = starts_with(call, "cuda");
  if (cuda && dynamic_cast<const cush::CudaError*>(&error) == nullptr &&
      !(starts_with(call, "cudaMalloc") && dynamic_cast<const cush::OutOfMemory*>(&error) != nullptr))
    return "a CUDA call's failure must be a cush::CudaError (or OutOfMemory for cudaMalloc)";
  if (starts_with(call, "nccl") && dynamic_cast<const cush::NcclError*>(&error) == nullptr)
    return "an NCCL call's failure must be a cush::NcclError";
  return {};
}

void add_covered(const std::set<faults::Site>& sites) {
  const char* folder = std::getenv("CUSH_FAULT_SITES");
  if (folder == nullptr || *folder == '\0') return;
  const std::string path = std::string(folder) + "/covered-" + std::to_string(::getpid()) + ".txt";
  std::FILE* f = std::fopen(path.c_str(), "a");
  ASSERT_NE(f, nullptr) << "cannot write " << path;
  for (const faults::Site& s : sites) std::fprintf(f, "%s\n", s.str().c_str());
  std::fclose(f);
}

}  // namespace

FaultWalk walk_faults(const std::string& name, const std::function<void()>& action,
                      const std::function<void()>& recheck) {
  action();
  if (recheck) recheck();
  const bool measure = !under_cuda_tool();  // the tool's own allocations move free memory
  const std::vector<std::size_t> before = measure ? free_memory_of_every_gpu() : std::vector<std::size_t>{};

  FaultWalk walk;
  {
    faults::Armed counting(std::nullopt);
    action();
    walk.calls = counting.disarm().calls;
  }
  std::set<faults::Site> failed_sites;
  for (std::size_t k = 0; k < walk.calls; ++k) {
    std::optional<std::string> message;  // what the run threw, if a cush::Error
    std::string problem;
    faults::Record record;
    {
      faults::Armed armed(k);
      try {
        action();
      } catch (const cush::Error& e) {
        message = e.what();
        record = armed.disarm();
        if (record.failed) problem = wrong_kind(record.failed->call, e);
      } catch (const std::exception& e) {
        problem = std::string("threw a non-cush exception: ") + e.what();
      }
      if (!message) record = armed.disarm();
    }
    const std::string at = name + ", call " + std::to_string(k) + " of " + std::to_string(walk.calls) + ": ";
    if (!record.failed) {
      ADD_FAILURE() << at << "the run made only " << record.calls << " checked calls";
      continue;
    }
    const std::string call = record.failed->str();
    failed_sites.insert(*record.failed);
    EXPECT_TRUE(problem.empty()) << at << call << ": " << problem;
    if (!message) {
      if (problem.empty()) ADD_FAILURE() << at << call << " failed, and the run did not throw";
    } else {
      EXPECT_NE(message->find(function_of(record.failed->call)), std::string::npos)
          << at << call << ": the error does not name the call: " << *message;
    }
    if (recheck) {
      try {
        recheck();
      } catch (const std::exception& e) {
        ADD_FAILURE() << at << call << ": afterwards the objects fail: " << e.what();
      }
    }
    if (measure) {
      const std::vector<std::size_t> after = free_memory_of_every_gpu();
      for (std::size_t d = 0; d < after.size(); ++d)
        EXPECT_EQ(after[d], before[d]) << at << call << ": GPU " << d << " leaks "
                                       << static_cast<long long>(before[d]) - static_cast<long long>(after[d]) << " bytes";
    }
    if (::testing::Test::HasFatalFailure()) break;
  }
  walk.sites = failed_sites.size();
  add_covered(failed_sites);
  std::printf("[ faults   ] %s: %zu calls failed in turn, at %zu sites\n", name.c_str(), walk.calls, walk.sites);
  EXPECT_GT(walk.calls, 0u) << name << ": no checked call";
  return walk;
}

}  // namespace cush_test
