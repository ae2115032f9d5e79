#pragma once
// One run of a scenario with a fault armed, and the checks on what it threw: shared by the walks
// inside one process (faults.cpp) and the walks over fresh processes (fresh_process_faults.cpp).
// Private to those two files and their host test.

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/fault_injection.hpp"
#include "cush/error.hpp"

namespace cush_test::fault_run {

namespace faults = cush::detail::faults;

/// The function a call text calls: "cudaMemcpyAsync(dst, ...)" -> "cudaMemcpyAsync".
std::string function_of(const std::string& call);

/// Empty if `error` is of the kind a failure of `call` must raise (CudaError, or OutOfMemory for
/// cudaMalloc; NcclError), else what is wrong.
std::string wrong_kind(const std::string& call, const cush::Error& error);

/// With CUSH_FAULT_SITES naming a folder, adds `sites` to <folder>/covered-<pid>.txt.
void add_covered(const std::set<faults::Site>& sites);

/// How one run ended.
struct Outcome {
  std::optional<std::string> message;  ///< what the run threw, if a cush::Error
  std::string type;                    ///< the type of what it threw ("cush::OutOfMemory"); empty if nothing
  std::string problem;                 ///< a wrong kind of error, or a non-cush exception
  faults::Record record;
};

/// Runs of a walk with more GPUs than this fail a sample of the calls (calls_to_fail).
inline constexpr std::size_t max_sampled_runs = 300;

/// The calls of a run that a walk fails, by number, in order. Every one with up to four GPUs.
/// With more, a run repeats its calls once per GPU and is longer, and failing each call in turn
/// takes time quadratic in the calls (a walk of device operations on new plans went past 300 s
/// at 8 virtual GPUs): then every site's first call, the last call, and evenly spaced calls, at
/// most max_sampled_runs (more only if the run reaches more sites).
std::vector<std::size_t> calls_to_fail(const faults::Record& counted, std::size_t gpus);

/// Runs `action` with its checked call k failing (std::nullopt: counting only).
Outcome fail_once(const std::function<void()>& action, std::optional<std::size_t> k);

}  // namespace cush_test::fault_run
