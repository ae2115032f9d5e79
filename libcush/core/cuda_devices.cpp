#include "core/cuda_devices.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/device_map.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {
std::string named(int logical) {
  const int p = device_map().physical(logical);
  return "device " + std::to_string(logical) + (p == logical ? "" : " (GPU " + std::to_string(p) + ")");
}
}  // namespace

int physical_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

namespace {
// "13.0" from CUDA's version numbers (1000 major + 10 minor).
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

std::string no_device_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess) return count == 0 ? "the NVIDIA driver reports no GPU" : "";
  (void)cudaGetLastError();
  const std::string runtime_says = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  // Without an NVIDIA driver the runtime says its driver is "insufficient", which reads as "update
  // the driver" on a machine that has none: the driver's version (0 without one) tells them apart.
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) (void)cudaGetLastError();
  if (driver == 0) return "no NVIDIA driver is loaded: this machine has no GPU, or its driver is not installed";
  if (status == cudaErrorInsufficientDriver) {
    int runtime = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) (void)cudaGetLastError();
    return "the NVIDIA driver supports CUDA " + cuda_version(driver) + ", older than the CUDA " +
           cuda_version(runtime) + " this build uses: update the driver (" + runtime_says + ")";
  }
  if (status == cudaErrorNoDevice) return "the NVIDIA driver reports no GPU (" + runtime_says + ")";
  return runtime_says;
}

int physical_id(int logical) {
  const DeviceMap& map = device_map();
  if (logical < 0 || logical >= map.logical_count())
    throw InvalidArgument("cush", "device", "device " + std::to_string(logical) + " does not exist (" +
                                                map.describe() + ")");
  return map.physical(logical);
}

std::vector<int> physical_ids(std::span<const int> logical) {
  std::vector<int> ids;
  ids.reserve(logical.size());
  for (int d : logical) ids.push_back(physical_id(d));
  return ids;
}

int current_physical_device() {
  int device = -1;
  CUSH_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

int current_physical_device_or_none() noexcept {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return device;
}

void restore_physical_device(int physical) noexcept { CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(physical)); }

void finish_devices(std::span<const int> logical) noexcept {
  const int previous = current_physical_device_or_none();
  std::vector<int> done;
  for (int id : logical) {
    int physical = -1;
    try {
      physical = physical_id(id);
    } catch (...) {
      continue;
    }
    if (std::find(done.begin(), done.end(), physical) != done.end()) continue;
    done.push_back(physical);
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(physical));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
  }
  if (previous >= 0) restore_physical_device(previous);
}

int current_device_attribute(cudaDeviceAttr attribute) {
  int value = 0;
  CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, current_physical_device()));
  return value;
}

void set_current_device(int logical) {
  CUSH_CUDA_CHECK_AT(cudaSetDevice(physical_id(logical)), named(logical));
}

cudaDeviceProp device_properties(int logical) {
  cudaDeviceProp prop{};
  CUSH_CUDA_CHECK_AT(cudaGetDeviceProperties(&prop, physical_id(logical)), named(logical));
  return prop;
}

int device_attribute(cudaDeviceAttr attribute, int logical) {
  int value = 0;
  CUSH_CUDA_CHECK_AT(cudaDeviceGetAttribute(&value, attribute, physical_id(logical)), named(logical));
  return value;
}

std::string pci_bus_id(int logical) {
  std::array<char, 32> bus{};
  CUSH_CUDA_CHECK_AT(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), physical_id(logical)),
                     named(logical));
  return bus.data();
}

bool physical_peer_access(int accessor, int owner) {
  const int a = physical_id(accessor);
  const int b = physical_id(owner);
  if (a == b) return true;
  int can = 0;
  CUSH_CUDA_CHECK_AT(cudaDeviceCanAccessPeer(&can, a, b), named(accessor) + " to " + named(owner));
  return can != 0;
}

int p2p_attribute(cudaDeviceP2PAttr attribute, int from, int to) {
  int value = 0;
  CUSH_CUDA_CHECK_AT(cudaDeviceGetP2PAttribute(&value, attribute, physical_id(from), physical_id(to)),
                     named(from) + " to " + named(to));
  return value;
}

void enable_physical_peer_access(int from, int to) {
  const DeviceGuard guard(from);
  const cudaError_t status = CUSH_CUDA_CALL(cudaDeviceEnablePeerAccess(physical_id(to), 0));
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // enabled by the application before us: fine
  } else if (status != cudaSuccess) {
    throw_cuda_error(status, "cudaDeviceEnablePeerAccess(to, 0)", __FILE__, __LINE__,
                     "from " + named(from) + " to " + named(to));
  }
}

int physical_by_bus_id(const std::string& bus) {
  int device = -1;
  if (bus.empty() || cudaDeviceGetByPCIBusId(&device, bus.c_str()) != cudaSuccess) {
    (void)cudaGetLastError();  // a GPU this process cannot see
    return -1;
  }
  return device;
}

bool reaches_physical(int logical, int physical) {
  const int mine = physical_id(logical);
  if (physical < 0) return false;
  if (physical == mine) return true;
  int there = 0, back = 0;
  CUSH_CUDA_CHECK_AT(cudaDeviceCanAccessPeer(&there, mine, physical), named(logical));
  CUSH_CUDA_CHECK_AT(cudaDeviceCanAccessPeer(&back, physical, mine), named(logical));
  return there != 0 && back != 0;
}

void enable_access_to_physical(int from, int to) {
  if (physical_id(from) == to) return;
  const DeviceGuard guard(from);
  const cudaError_t status = CUSH_CUDA_CALL(cudaDeviceEnablePeerAccess(to, 0));
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
  } else if (status != cudaSuccess) {
    throw_cuda_error(status, "cudaDeviceEnablePeerAccess(to, 0)", __FILE__, __LINE__,
                     "from " + named(from) + " to CUDA device " + std::to_string(to));
  }
}

cudaMemPool_t create_device_pool(int logical) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = physical_id(logical);
  cudaMemPool_t pool = nullptr;
  CUSH_CUDA_CHECK_AT(cudaMemPoolCreate(&pool, &props), "on " + named(logical));
  // Freed memory stays in the pool for the next allocation: with the default threshold (0) it is
  // unmapped at every synchronization, and mapping it again costs about 3 us a MiB on an H200
  // (6.2 ms for a 2 GiB staging buffer, 12 times the transpose that fills it). trim_shared_pools()
  // gives it back.
  std::uint64_t keep = UINT64_MAX;
  const cudaError_t status = CUSH_CUDA_CALL(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  if (status != cudaSuccess) {
    (void)cudaMemPoolDestroy(pool);
    throw_cuda_error(status, "cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)", __FILE__,
                     __LINE__, "on " + named(logical));
  }
  return pool;
}

void grant_pool_access(cudaMemPool_t pool, int accessor) {
  cudaMemAccessDesc access{};
  access.location.type = cudaMemLocationTypeDevice;
  access.location.id = physical_id(accessor);
  access.flags = cudaMemAccessFlagsProtReadWrite;
  CUSH_CUDA_CHECK_AT(cudaMemPoolSetAccess(pool, &access, 1), "for " + named(accessor));
}

void copy_2d_between_devices(void* dst, std::size_t dpitch, int dst_device, const void* src, std::size_t spitch,
                             int src_device, std::size_t width, std::size_t height, cudaStream_t stream) {
  cudaMemcpy3DPeerParms p{};
  p.srcPtr = cudaPitchedPtr{const_cast<void*>(src), spitch, width, height};
  p.srcDevice = physical_id(src_device);
  p.dstPtr = cudaPitchedPtr{dst, dpitch, width, height};
  p.dstDevice = physical_id(dst_device);
  p.extent = cudaExtent{width, height, 1};
  CUSH_CUDA_CHECK(cudaMemcpy3DPeerAsync(&p, stream));
}

int stream_physical_device(cudaStream_t stream) {
  int device = -1;
  CUSH_CUDA_CHECK(cudaStreamGetDevice(stream, &device));
  return device;
}

}  // namespace cush::detail
