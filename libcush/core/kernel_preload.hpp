#pragma once
// Loads kernels into a device's context ahead of their first launch. With CUDA's lazy module
// loading (the default) a kernel is loaded at its first launch, and loading may wait for all work
// on the device: the first halo exchange or reduction after a long kernel would block the host
// until that kernel ends. Plans and fields preload the kernels they may launch when they are made.

#include <span>

namespace cush::detail {

/// Loads each kernel of `kernels` (addresses of __global__ functions) on `device`, once per
/// process, device and `group` (a name for the list; one static string per list).
void preload_kernels(int device, const char* group, std::span<const void* const> kernels);

/// Loads one kernel on `device`, once per process, device and kernel (for kernels instantiated in
/// the application's code, such as cush::transpose's with a device function); `what` names it in
/// an error.
void preload_kernel(int device, const char* what, const void* kernel);

}  // namespace cush::detail
