#include "cush/error.hpp"

#include <cstdio>

#include "core/config.hpp"
#include "core/cuda_devices.hpp"
#include "core/format.hpp"

namespace cush {

InvalidArgument::InvalidArgument(std::string where, std::string argument,
                                 const std::string& problem)
    : Error(where + ": argument '" + argument + "': " + problem),
      where_(std::move(where)),
      argument_(std::move(argument)) {}

namespace {
std::string cuda_message(cudaError_t code, const std::string& call, const char* file, int line,
                         int device, const std::string& context) {
  std::string m = "cush: " + call + " failed: " + cudaGetErrorName(code) + " (" +
                  cudaGetErrorString(code) + ")";
  if (device >= 0) m += " on device " + std::to_string(device);
  if (!context.empty()) m += " [" + context + "]";
  m += " at " + std::string(file) + ":" + std::to_string(line);
  return m;
}
}  // namespace

CudaError::CudaError(cudaError_t code, std::string call, const char* file, int line, int device,
                     const std::string& context)
    : Error(cuda_message(code, call, file, line, device, context)),
      code_(code),
      call_(std::move(call)),
      device_(device) {}

OutOfMemory::OutOfMemory(std::string where, int device, std::size_t needed,
                         std::size_t available)
    : Error(where + ": not enough free memory on device " + std::to_string(device) + ": needs " +
            detail::format_bytes(needed) + ", " + detail::format_bytes(available) +
            " available"),
      device_(device),
      needed_(needed),
      available_(available) {}

namespace detail {

const char* built_architectures() noexcept { return CUSH_CUDA_ARCHITECTURES; }

std::string unsupported_device_message(int device, int capability, const std::string& architectures) {
  const std::string cc = std::to_string(capability / 10) + "." + std::to_string(capability % 10);
  return "cush: device " + std::to_string(device) + " has compute capability " + cc +
         ", and this build of cush has no code for it (built for CMAKE_CUDA_ARCHITECTURES " + architectures +
         "): rebuild cush with " + std::to_string(capability) + " among them, e.g. -DCMAKE_CUDA_ARCHITECTURES=\"" +
         std::to_string(capability) + "-real;90\"";
}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line,
                      const std::string& context) {
  // A non-sticky error is also left as the thread's "last error"; clear it so the next
  // unrelated check does not trip over it.
  (void)cudaGetLastError();
  throw CudaError(code, call, file, line, current_physical_device_or_none(), context);
}

void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept {
  (void)cudaGetLastError();
  // At process exit the runtime may already be gone; nothing is leaked by then.
  if (code == cudaErrorCudartUnloading) return;
  std::fprintf(stderr, "cush: %s failed in a destructor: %s (%s) at %s:%d\n", call,
               cudaGetErrorName(code), cudaGetErrorString(code), file, line);
}

}  // namespace detail
}  // namespace cush
