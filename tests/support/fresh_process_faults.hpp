#pragma once
// Fault injection in fresh processes (docs/reliability.md, "Injected faults"): for the calls that
// cush makes once per process (the device properties behind the cached topology, kernel preloads,
// the staging engine's first buffers) or only after another failure (the free memory named after
// a failed cudaMalloc), which a walk inside one process cannot fail after its first run.
//
// A test drives, a second test of the same executable is the child:
//
//   TEST(Fresh, Child) {
//     if (!cush_test::is_fresh_process_child()) GTEST_SKIP() << "run by Fresh.Walk";
//     cush_test::run_fresh_process_child(scenario);
//   }
//   TEST(Fresh, Walk) { cush_test::walk_in_fresh_processes("scenario", "Fresh.Child"); }

#include <functional>
#include <string>

#include "support/faults.hpp"

namespace cush_test {

/// True in a process that walk_in_fresh_processes started.
bool is_fresh_process_child();

/// In the child: runs `scenario` (before anything else in the process touched cush) with the call
/// the parent chose failing, or counting only, then once more without faults, and reports to the
/// parent. Checks with gtest failures, as walk_faults does, that the failing run threw a
/// cush::Error of the call's kind naming it. The run without faults must end as the parent's
/// counting run ended (normally, or with an exception of the same type): a failure must not
/// leave a process-wide cache broken.
void run_fresh_process_child(const std::function<void()>& scenario);

/// In the driving test: starts this executable running only `child_test` once counting the
/// checked calls of its scenario, then once for each distinct site among them with that site's
/// first call failing. Each child must pass; its run without faults must end as the counting
/// run's did; and every GPU's free memory after it (measured in the child after the run without
/// faults, with the same objects loaded for the process) must equal the counting child's: a
/// failure leaked nothing. Under a CUDA tool the free memory is left to the tool's leak check.
/// With CUSH_TEST_MEMORY=process each child counts only its own memory, and 4 children run side
/// by side (CUSH_FRESH_JOBS), as under a CUDA tool; otherwise one at a time.
/// The sites failed are recorded as walk_faults records them (CUSH_FAULT_SITES). Prints the counts.
FaultWalk walk_in_fresh_processes(const std::string& name, const std::string& child_test);

}  // namespace cush_test
