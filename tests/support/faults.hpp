#pragma once
// Fault injection walks (docs/reliability.md, "Injected faults"): every checked CUDA, NCCL,
// cuBLAS and cuFFT call that a scenario makes is made to fail once, and each failure is checked.

#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cush_test {

/// What a walk did.
struct FaultWalk {
  std::size_t calls = 0;  ///< checked calls of one run of the scenario
  std::size_t runs = 0;   ///< runs with one of them failing: `calls`, or fewer with more than 4 GPUs
  std::size_t sites = 0;  ///< distinct places in the source among them
  long long kept = 0;     ///< bytes of GPU memory that outliving objects hold after the walk
};

/// Free memory of every GPU, after synchronizing it and trimming its default memory pool and
/// (unless `trim_staging` is false) the pools cush keeps staging memory in
/// (cush::release_staging_memory(): memory a transpose freed; a buffer never freed stays). With
/// CUSH_TEST_MEMORY=process, the memory the GPU would have free if this process were alone on it
/// (process_memory.hpp): then other processes on the GPUs do not disturb the comparison.
std::vector<std::size_t> gpu_free_memory(bool trim_staging = true);

/// Makes cush create what it keeps for the whole process on first use, so that free memory
/// measured afterwards does not count it: the staging engine of every device (a host transfer
/// takes it when the stream is busy, which depends on timing), cush's kernels, a field's. Does
/// the work once per process; later calls return at once.
void load_process_caches();

/// The checked calls that `call` makes (fault injection counting, nothing failing); throws
/// std::logic_error if `call` throws.
std::size_t checked_calls(const std::function<void()>& call);
/// Runs `call` with its checked call k failing (fault injection); true if that call was reached
/// and `call` threw the cush::Error of its kind (fault_run::fail_once's checks).
bool fails_at_call(std::size_t k, const std::function<void()>& call);

/// With CUSH_WALK_TRACE set, each run is written to stderr before it starts and with the call
/// it failed after it (to find what ran before a crash).
/// Calls load_process_caches(), runs `action` once as it is (loading
/// kernels, filling caches), once counting its checked
/// calls, then once per call k with call k failing: every call with up to 4 GPUs; with more,
/// where the runs are longer and repeat each call once per GPU, every site's first call, the
/// last call and evenly spaced ones, 300 runs at most (more only if the run has more sites).
/// Prints its progress every 30 s. After each failing run it checks, with
/// gtest failures naming `name`, k and the call:
/// - `action` threw a cush::Error of the call's kind (CudaError or, for allocations,
///   OutOfMemory; NcclError; cush::Error for cuBLAS and cuFFT) whose message names the call;
/// - `recheck()` (if given) passes: objects that outlived the failure still work (it runs
///   without faults and should compare results with a reference);
/// - every GPU's free memory is what it was before the walk, after synchronizing and trimming
///   the memory pools (left to the tool's leak check under compute-sanitizer). Memory that does
///   not grow again when the same failure is repeated twice is held by an object that outlived
///   it: noted, and counted in `kept` (the caller checks that destroying its objects frees it);
///   memory that grows again is a leak, and a test failure.
/// With CUSH_FAULT_SITES naming a folder, the sites failed are added to
/// <folder>/covered-<pid>.txt (scripts/fault_sites.sh). Prints the counts; a scenario without
/// checked calls is a failure.
FaultWalk walk_faults(const std::string& name, const std::function<void()>& action,
                      const std::function<void()>& recheck = {});

/// For a walk's action: throws std::logic_error (not a cush error, so the walk reports it) unless
/// got == want.
template <class T>
void require_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  if (got != want) throw std::logic_error(what + ": wrong result");
}

/// `v` with every element plus its index: what the test kernel add_index makes of it.
inline std::vector<double> plus_index(std::vector<double> v) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += static_cast<double>(i);
  return v;
}

/// For a walk's action: keeps the first result it is shown and throws std::logic_error (not a
/// cush error, so the walk reports it) when a later one is not `same` as it.
template <class T>
class SameAsFirst {
 public:
  explicit SameAsFirst(std::string what, std::function<bool(const T&, const T&)> same = std::equal_to<T>{})
      : what_(std::move(what)), same_(std::move(same)) {}
  void operator()(const T& result) {
    if (!first_) first_ = result;
    else if (!same_(result, *first_)) throw std::logic_error(what_ + ": the result differs from the first run's");
  }

 private:
  std::string what_;
  std::function<bool(const T&, const T&)> same_;
  std::optional<T> first_;
};

}  // namespace cush_test
