#pragma once
/// @file error.hpp
/// @brief The exceptions cush throws, and the macros that check CUDA return codes.

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace cush {

/// @brief Base of every exception cush throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief A bad argument. Thrown before anything was allocated or enqueued.
class InvalidArgument : public Error {
 public:
  /// @param where    the function that rejected the call, e.g. "cush::Plan::scatter"
  /// @param argument the name of the argument at fault, e.g. "devices"
  /// @param problem  what is wrong with it
  InvalidArgument(std::string where, std::string argument, const std::string& problem);
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  [[nodiscard]] const std::string& argument() const noexcept { return argument_; }

 private:
  std::string where_;
  std::string argument_;
};

/// @brief A CUDA runtime call returned an error.
class CudaError : public Error {
 public:
  CudaError(cudaError_t code, std::string call, const char* file, int line, int device,
            const std::string& context);
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }
  /// The text of the failing call, as written in the source.
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  /// The current CUDA device when the call failed (-1 if unknown): the physical GPU, which
  /// with virtual GPUs may stand for several logical devices.
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  cudaError_t code_;
  std::string call_;
  int device_;
};

/// @brief An NCCL call failed (the nccl transport).
class NcclError : public Error {
 public:
  NcclError(int code, const std::string& message) : Error(message), code_(code) {}
  /// The ncclResult_t value.
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// @brief A device has less free memory than an allocation needs. Nothing stays allocated.
class OutOfMemory : public Error {
 public:
  OutOfMemory(std::string where, int device, std::size_t needed, std::size_t available);
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] std::size_t needed() const noexcept { return needed_; }
  [[nodiscard]] std::size_t available() const noexcept { return available_; }

 private:
  int device_;
  std::size_t needed_;
  std::size_t available_;
};

/// @brief No usable CUDA device: no GPU or no driver. (Asking for more GPUs than the host has
/// is an InvalidArgument.)
class NoDevice : public Error {
 public:
  using Error::Error;
};

/// @brief A GPU this build of cush has no code for: its compute capability is below every
/// architecture cush was compiled for (CMAKE_CUDA_ARCHITECTURES), and there is no PTX it could
/// compile. Thrown at the first use of the device (a plan, a field or an operation on it); the
/// message names the device, its capability and the architectures of the build.
class UnsupportedDevice : public Error {
 public:
  UnsupportedDevice(int device, int capability, const std::string& message)
      : Error(message), device_(device), capability_(capability) {}
  /// The logical device id.
  [[nodiscard]] int device() const noexcept { return device_; }
  /// The compute capability as major * 10 + minor (e.g. 80 for an A100).
  [[nodiscard]] int capability() const noexcept { return capability_; }

 private:
  int device_;
  int capability_;
};

namespace detail {
/// The message of an UnsupportedDevice: `capability` as major * 10 + minor, `architectures` as
/// CMake spells them (e.g. "80-real;90").
[[nodiscard]] std::string unsupported_device_message(int device, int capability, const std::string& architectures);
/// The CUDA architectures this build of cush was compiled for, as CMake spells them.
[[nodiscard]] const char* built_architectures() noexcept;

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line,
                                   const std::string& context = {});
/// For destructors: reports to stderr instead of throwing. Ignores errors caused by the CUDA
/// runtime shutting down at process exit.
void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept;

/// Fault injection, for cush's own tests (armed only through the private header
/// libcush/core/fault_injection.hpp; docs/reliability.md). True while a test counts or fails
/// checked calls: one relaxed load per call otherwise.
extern std::atomic<bool> faults_armed;
/// Counts the checked call `call` at `file`:`line`; true if the armed test picked it to fail.
[[nodiscard]] bool fault_here(const char* call, const char* file, int line) noexcept;
/// The error an injected failure of `call` returns: cudaErrorMemoryAllocation for allocations,
/// cudaErrorUnknown for anything else.
[[nodiscard]] cudaError_t injected_cuda_error(const char* call) noexcept;
/// True for the calls whose injected failure comes after the call is made: synchronizations,
/// which fail for real only when the work they wait for failed (and then nothing runs on).
[[nodiscard]] bool fails_after_the_call(const char* call) noexcept;
/// An injected failure of `call`: made first if fails_after_the_call, then the error.
template <class Call>
cudaError_t injected_failure(const char* call, Call&& make) {
  if (fails_after_the_call(call)) (void)make();
  return injected_cuda_error(call);
}
}  // namespace detail

}  // namespace cush

/// True if fault injection picked the checked call spelled `text` (a string literal) to fail;
/// the call is then not made. Every checked CUDA, NCCL, cuBLAS and cuFFT call passes here.
#define CUSH_FAULT_POINT(text)                                                          \
  (::cush::detail::faults_armed.load(::std::memory_order_relaxed) &&                    \
   ::cush::detail::fault_here((text), __FILE__, __LINE__))

/// Makes a CUDA runtime call and yields its cudaError_t, or the injected error without making it.
#define CUSH_CUDA_CALL(call) CUSH_CUDA_CALL_SPELLED_(call, #call)
#define CUSH_CUDA_CALL_SPELLED_(call, text) \
  (CUSH_FAULT_POINT(text) ? ::cush::detail::injected_failure((text), [&] { return (call); }) : (call))

/// Evaluates a CUDA runtime call once; throws cush::CudaError naming the call if it fails.
#define CUSH_CUDA_CHECK(call)                                                           \
  do {                                                                                  \
    const cudaError_t cush_status_ = CUSH_CUDA_CALL_SPELLED_(call, #call);               \
    if (cush_status_ != cudaSuccess)                                                    \
      ::cush::detail::throw_cuda_error(cush_status_, #call, __FILE__, __LINE__);        \
  } while (0)

/// As CUSH_CUDA_CHECK, and adds `context` (evaluated only on failure) to the message: the
/// argument or object at fault, e.g. "segment 1 on device 0, 4096 bytes".
#define CUSH_CUDA_CHECK_AT(call, context)                                               \
  do {                                                                                  \
    const cudaError_t cush_status_ = CUSH_CUDA_CALL_SPELLED_(call, #call);               \
    if (cush_status_ != cudaSuccess)                                                    \
      ::cush::detail::throw_cuda_error(cush_status_, #call, __FILE__, __LINE__, (context)); \
  } while (0)

/// For destructors and other noexcept paths: reports a failure on stderr, never throws.
#define CUSH_CUDA_CHECK_NOEXCEPT(call)                                                  \
  do {                                                                                  \
    const cudaError_t cush_status_ = (call);                                            \
    if (cush_status_ != cudaSuccess)                                                    \
      ::cush::detail::report_cuda_error(cush_status_, #call, __FILE__, __LINE__);       \
  } while (0)
