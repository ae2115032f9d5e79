#pragma once
// The GPU memory this process holds, as the driver accounts it per process (NVML), so that a
// leak check can run while other processes use the same GPUs. gpu_free_memory() (faults.hpp)
// uses it when CUSH_TEST_MEMORY=process; by default it measures each GPU's free memory, which
// other processes on the GPU change.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cush_test {

/// True when CUSH_TEST_MEMORY=process: leak checks count this process's memory only.
bool process_memory_mode();

/// The bytes this process holds on each visible CUDA device (in CUDA's order), or nothing, with
/// the reason in `why`: NVML cannot be loaded, or does not list this process on a device where
/// it has a context (another PID namespace, or a GPU that does not report per-process memory).
/// Call it once every device has a context (gpu_free_memory() synchronizes each first).
std::optional<std::vector<std::size_t>> process_used_memory(std::string& why);

}  // namespace cush_test
