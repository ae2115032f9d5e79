#include "support/faults.hpp"

#include <cuda_runtime_api.h>
#include <cxxabi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <typeinfo>
#include <vector>

#include "core/fault_injection.hpp"
#include "cush/cush.hpp"
#include "cush/error.hpp"
#include "support/fault_run.hpp"
#include "support/gpu.hpp"
#include "support/process_memory.hpp"

namespace cush_test {

namespace {

namespace faults = cush::detail::faults;

}  // namespace

std::vector<std::size_t> gpu_free_memory(bool trim_staging) {
  int count = 0, current = 0;
  EXPECT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(cudaGetDevice(&current), cudaSuccess);
  std::vector<std::size_t> free(static_cast<std::size_t>(count)), total(free.size());
  // Each GPU's work finished and its default memory pool made to give back what it caches
  // (cudaFreeAsync keeps memory in the pool); then, the devices idle, cush's staging pools.
  for (int d = 0; d < count; ++d) {
    cudaMemPool_t pool = nullptr;
    EXPECT_EQ(cudaSetDevice(d), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, d), cudaSuccess);
    EXPECT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
  }
  if (trim_staging) cush::release_staging_memory();
  for (int d = 0; d < count; ++d) {
    EXPECT_EQ(cudaSetDevice(d), cudaSuccess);
    EXPECT_EQ(cudaMemGetInfo(&free[static_cast<std::size_t>(d)], &total[static_cast<std::size_t>(d)]), cudaSuccess);
  }
  EXPECT_EQ(cudaSetDevice(current), cudaSuccess);
  if (!process_memory_mode()) return free;
  // CUSH_TEST_MEMORY=process: what the GPU would have free if this process were alone on it.
  std::string why;
  const std::optional<std::vector<std::size_t>> used = process_used_memory(why);
  if (!used) {
    ADD_FAILURE() << "CUSH_TEST_MEMORY=process, but " << why << "; measuring each GPU's free memory instead";
    return free;
  }
  for (std::size_t d = 0; d < free.size(); ++d) free[d] = total[d] - (*used)[d];
  return free;
}

void load_process_caches() {
  // Once per process: a second round between two measurements of free memory is not free (on an
  // H200, 2 to 12 MiB less free memory after it with 1 to 8 GPUs; what keeps it is not known), so
  // a test that loads the caches and then walks must not load them twice.
  static std::once_flag once;
  std::call_once(once, [] {
    const cush::DeviceSet gpus = cush::DeviceSet::all();
    // Pageable pieces of 8 MiB and more always take the staging engine: 24 MiB per device.
    std::vector<double> host((std::size_t{3} << 20) * gpus.size(), 1.0);
    cush::Plan<double> plan(gpus, host.size());
    plan.scatter(host.data());
    plan.gather(host.data());
    plan.wait();
    cush::Field<double> f(gpus, cush::Extent3{9, 7, 5}, 3);
    f.exchange();
    f.wait();
  });
}

namespace fault_run {

std::string function_of(const std::string& call) {
  std::string f = call.substr(0, call.find('('));
  while (!f.empty() && f.back() == ' ') f.pop_back();
  return f;
}

namespace {
bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
}  // namespace

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

namespace {
std::string type_name(const std::type_info& type) {
  int status = 0;
  char* readable = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && readable != nullptr ? readable : type.name();
  std::free(readable);
  return name;
}
}  // namespace

Outcome fail_once(const std::function<void()>& action, std::optional<std::size_t> k) {
  Outcome o;
  faults::Armed armed(k);
  try {
    action();
  } catch (const cush::Error& e) {
    o.message = e.what();
    o.type = type_name(typeid(e));
    o.record = armed.disarm();
    if (o.record.failed) o.problem = wrong_kind(o.record.failed->call, e);
    return o;
  } catch (const std::exception& e) {
    o.problem = std::string("threw a non-cush exception: ") + e.what();
    o.type = type_name(typeid(e));
  }
  o.record = armed.disarm();
  return o;
}

std::vector<std::size_t> calls_to_fail(const faults::Record& counted, std::size_t gpus) {
  std::set<std::size_t> chosen;
  if (gpus <= 4 || counted.calls <= max_sampled_runs) {
    for (std::size_t k = 0; k < counted.calls; ++k) chosen.insert(k);
  } else {
    for (const auto& [site, first] : counted.sites) chosen.insert(first);
    chosen.insert(counted.calls - 1);
    const std::size_t spaced = max_sampled_runs > chosen.size() ? max_sampled_runs - chosen.size() : 0;
    for (std::size_t i = 0; i < spaced; ++i) chosen.insert(i * counted.calls / spaced);
  }
  return {chosen.begin(), chosen.end()};
}

}  // namespace fault_run

namespace {

using fault_run::fail_once;
using fault_run::function_of;
using fault_run::Outcome;

// Compares every GPU's free memory with `level`. Memory that a failure left allocated is either
// held by an object that outlived it (the level stops moving when the same failure is repeated,
// and the caller checks the object's destruction) or leaked (it moves at every repeat): the first
// is noted and becomes the new level, the second is a test failure. A level may take a few
// repeats to settle: the NCCL communicators the process keeps make a point-to-point connection
// when an operation first uses it, and which channels an operation uses rotates with the count of
// operations before it, which a failure changes.
void check_memory(std::vector<std::size_t>& level, const std::string& at, const std::function<void()>& again) {
  std::vector<std::size_t> after = gpu_free_memory();
  if (after == level) return;
  constexpr int repeats = 6;
  std::vector<std::size_t> last = after, now = after;
  for (int r = 0; r < repeats; ++r) {
    again();
    now = gpu_free_memory();
    if (r > 0 && now == last) break;  // settled
    last = now;
  }
  const bool settled = now == last;
  for (std::size_t d = 0; d < after.size(); ++d) {
    const long long taken = static_cast<long long>(level[d]) - static_cast<long long>(now[d]);
    if (taken == 0) continue;
    if (!settled)
      ADD_FAILURE() << at << ": GPU " << d << " leaks: " << taken << " bytes taken, still "
                    << static_cast<long long>(last[d]) - static_cast<long long>(now[d]) << " more at the "
                    << repeats << "th repeat of the failure";
    else
      std::printf("[ faults   ] %s: GPU %zu keeps %lld bytes more (settled when repeated: held by a live object)\n",
                  at.c_str(), d, taken);
  }
  level = now;
}

// A sticky error of any GPU (one that every later CUDA call returns, e.g. an illegal address),
// as text; empty if every GPU is fine.
std::string device_error() {
  int count = 0, current = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || cudaGetDevice(&current) != cudaSuccess) return "no GPU answers";
  std::string found;
  for (int d = 0; d < count && found.empty(); ++d) {
    const cudaError_t e = cudaSetDevice(d) == cudaSuccess ? cudaDeviceSynchronize() : cudaErrorInvalidDevice;
    if (e != cudaSuccess) found = "GPU " + std::to_string(d) + " is broken (" + cudaGetErrorName(e) + ")";
  }
  (void)cudaSetDevice(current);
  return found;
}

// Progress of a long walk, every 30 s: which call, of how many, and the time taken.
class Progress {
 public:
  Progress(const std::string& name, std::size_t runs) : name_(name), runs_(runs) {}
  void at(std::size_t run) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(30)) return;
    last_ = now;
    std::printf("[ faults   ] %s: run %zu of %zu, %.0f s\n", name_.c_str(), run + 1, runs_,
                std::chrono::duration<double>(now - start_).count());
    std::fflush(stdout);
  }

 private:
  std::string name_;
  std::size_t runs_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

}  // namespace

std::size_t checked_calls(const std::function<void()>& call) {
  const Outcome o = fail_once(call, std::nullopt);
  if (o.message || !o.problem.empty())
    throw std::logic_error("cush_test::checked_calls: the run threw, with nothing failing: " + o.message.value_or(o.problem));
  return o.record.calls;
}

bool fails_at_call(std::size_t k, const std::function<void()>& call) {
  const Outcome o = fail_once(call, k);
  return o.message && o.record.failed && o.problem.empty();
}

FaultWalk walk_faults(const std::string& name, const std::function<void()>& action,
                      const std::function<void()>& recheck) {
  // What cush keeps for the whole process (every device's staging engine, the kernels) made
  // before free memory is measured, as the library's walks do: otherwise a run that happens to
  // take the staging path on a device for the first time counts the engine it makes. (With 8
  // virtual GPUs the karst walk of the resident path saw 2 MiB appear twice in its first runs,
  // then never again; with this, the walk passed at 8 virtual GPUs.)
  load_process_caches();
  action();
  if (recheck) recheck();
  const bool measure = !under_cuda_tool();  // the tool's own allocations move free memory
  const std::vector<std::size_t> before = measure ? gpu_free_memory() : std::vector<std::size_t>{};

  FaultWalk walk;
  faults::Record counted;
  {
    faults::Armed counting(std::nullopt);
    action();
    counted = counting.disarm();
  }
  walk.calls = counted.calls;
  const std::size_t gpus = cush::DeviceSet::all().size();
  const std::vector<std::size_t> ks = fault_run::calls_to_fail(counted, gpus);
  walk.runs = ks.size();
  if (walk.runs < walk.calls)
    std::printf("[ faults   ] %s: %zu GPUs, %zu calls: failing %zu of them (every site's first, the last, evenly spaced)\n",
                name.c_str(), gpus, walk.calls, walk.runs);
  std::set<faults::Site> failed_sites;
  std::string previous;  // the run before this one: the call it failed
  std::vector<std::size_t> level = before;  // free memory the objects that outlive a run may keep
  std::size_t not_reached = 0;
  Progress progress(name, ks.size());
  // CUSH_WALK_TRACE: each run on stderr before it starts and with the call it failed after, so
  // that a crash (heap corruption) shows the runs that came before it.
  const bool trace = std::getenv("CUSH_WALK_TRACE") != nullptr;
  for (std::size_t run = 0; run < ks.size(); ++run) {
    const std::size_t k = ks[run];
    progress.at(run);
    const std::string at = name + ", call " + std::to_string(k) + " of " + std::to_string(walk.calls) + ": ";
    if (trace) std::fprintf(stderr, "[ trace    ] %sstarting\n", at.c_str());
    const Outcome o = fail_once(action, k);
    if (trace)
      std::fprintf(stderr, "[ trace    ] %s%s\n", at.c_str(),
                   o.record.failed ? o.record.failed->str().c_str() : "not reached");
    if (!o.record.failed) {
      // The run took another path (a stream found idle or busy) and made fewer calls.
      ++not_reached;
      if (!o.message && o.problem.empty()) continue;
      ADD_FAILURE() << at << "not reached, yet the run failed (" << o.type << "): " << o.message.value_or(o.problem);
      // A device that an earlier run left broken (a sticky error such as an illegal address)
      // fails every later run the same way: say which run came before, and stop.
      const std::string broken = device_error();
      if (!broken.empty()) {
        ADD_FAILURE() << name << ": " << broken << " after the run that failed "
                      << (previous.empty() ? std::string("nothing (the first run)") : previous)
                      << "; the walk stops here";
        break;
      }
      continue;
    }
    const std::string call = o.record.failed->str();
    previous = "call " + std::to_string(k) + " (" + call + ")";
    failed_sites.insert(*o.record.failed);
    EXPECT_TRUE(o.problem.empty()) << at << call << ": " << o.problem;
    if (!o.message) {
      if (o.problem.empty()) ADD_FAILURE() << at << call << " failed, and the run did not throw";
    } else {
      EXPECT_NE(o.message->find(function_of(o.record.failed->call)), std::string::npos)
          << at << call << ": the error does not name the call: " << *o.message;
    }
    if (recheck) {
      try {
        recheck();
      } catch (const std::exception& e) {
        ADD_FAILURE() << at << call << ": afterwards the objects fail: " << e.what();
      }
    }
    if (measure) check_memory(level, at + call, [&] {
      (void)fail_once(action, k);
      if (recheck) recheck();
    });
    if (::testing::Test::HasFatalFailure()) break;
  }
  const std::size_t failed = walk.runs - not_reached;
  if (not_reached > 0)
    std::printf("[ faults   ] %s: %zu of the %zu calls to fail were not reached in their run (another path)\n",
                name.c_str(), not_reached, walk.runs);
  walk.sites = failed_sites.size();
  for (std::size_t d = 0; d < level.size(); ++d) walk.kept += static_cast<long long>(before[d]) - static_cast<long long>(level[d]);
  fault_run::add_covered(failed_sites);
  std::printf("[ faults   ] %s: %zu calls failed in turn, at %zu sites\n", name.c_str(), failed, walk.sites);
  EXPECT_GT(walk.calls, 0u) << name << ": no checked call";
  return walk;
}

}  // namespace cush_test
