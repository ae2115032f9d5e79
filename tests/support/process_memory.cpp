#include "support/process_memory.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <mutex>
#include <string>

namespace cush_test {

namespace {

// The few NVML declarations used (nvml.h is not part of the CUDA toolkit's headers here): the
// library comes with the driver and is loaded at run time, so the tests build without it.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;
struct NvmlProcessInfo {  // nvmlProcessInfo_v2_t, filled by nvmlDeviceGetComputeRunningProcesses_v3
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

struct Nvml {
  std::string error;  // why it cannot be used; empty if it can
  NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*compute_processes)(NvmlDevice, unsigned int*, NvmlProcessInfo*) = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      error = std::string("cannot load libnvidia-ml.so.1: ") + dlerror();
      return;
    }
    // Kept loaded for the process: nvmlShutdown is never called.
    auto init = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
    handle_by_pci_bus_id =
        reinterpret_cast<decltype(handle_by_pci_bus_id)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    compute_processes =
        reinterpret_cast<decltype(compute_processes)>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    error_string = reinterpret_cast<decltype(error_string)>(dlsym(lib, "nvmlErrorString"));
    if (init == nullptr || handle_by_pci_bus_id == nullptr || compute_processes == nullptr || error_string == nullptr) {
      error = "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2, "
              "nvmlDeviceGetComputeRunningProcesses_v3 or nvmlErrorString (driver too old)";
      return;
    }
    if (const NvmlReturn r = init(); r != kNvmlSuccess) error = std::string("nvmlInit_v2: ") + error_string(r);
  }
};

const Nvml& nvml() {
  static const Nvml instance;
  return instance;
}

}  // namespace

bool process_memory_mode() {
  const char* mode = std::getenv("CUSH_TEST_MEMORY");
  return mode != nullptr && std::string(mode) == "process";
}

std::optional<std::vector<std::size_t>> process_used_memory(std::string& why) {
  const Nvml& lib = nvml();
  if (!lib.error.empty()) {
    why = lib.error;
    return std::nullopt;
  }
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return std::nullopt;
  }
  const auto pid = static_cast<unsigned int>(getpid());
  std::vector<std::size_t> used;
  for (int d = 0; d < count; ++d) {
    std::array<char, 64> bus{};
    if (const cudaError_t e = cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), d); e != cudaSuccess) {
      why = "cudaDeviceGetPCIBusId(" + std::to_string(d) + "): " + cudaGetErrorString(e);
      return std::nullopt;
    }
    NvmlDevice device = nullptr;
    if (const NvmlReturn r = lib.handle_by_pci_bus_id(bus.data(), &device); r != kNvmlSuccess) {
      why = std::string("nvmlDeviceGetHandleByPciBusId_v2(") + bus.data() + "): " + lib.error_string(r);
      return std::nullopt;
    }
    std::array<NvmlProcessInfo, 1024> processes{};
    auto listed = static_cast<unsigned int>(processes.size());
    if (const NvmlReturn r = lib.compute_processes(device, &listed, processes.data()); r != kNvmlSuccess) {
      why = std::string("nvmlDeviceGetComputeRunningProcesses_v3(") + bus.data() + "): " + lib.error_string(r);
      return std::nullopt;
    }
    bool found = false;
    for (unsigned int p = 0; p < listed && !found; ++p) {
      if (processes[p].pid != pid) continue;
      if (processes[p].used_gpu_memory == kNvmlValueNotAvailable) {
        why = std::string("NVML does not report per-process memory on GPU ") + bus.data();
        return std::nullopt;
      }
      used.push_back(static_cast<std::size_t>(processes[p].used_gpu_memory));
      found = true;
    }
    if (!found) {
      why = "NVML lists " + std::to_string(listed) + " processes on GPU " + bus.data() + ", not this one (pid " +
            std::to_string(pid) + "): the driver sees another PID namespace";
      return std::nullopt;
    }
  }
  return used;
}

}  // namespace cush_test
