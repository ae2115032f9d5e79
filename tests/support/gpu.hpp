#pragma once
// GPU test helpers: skip with a reason when the host lacks GPUs; device orders to test.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/virtual_gpus.hpp"

namespace cush_test {

/// Empty if at least `n` GPUs are present, else the reason to skip.
inline std::string missing_gpus(int n) {
  const int have = cush::DeviceSet::available();
  if (have >= n) return {};
  std::string why = "needs " + std::to_string(n) + " GPU" + (n == 1 ? "" : "s") + ", this host has " + std::to_string(have);
  if (have == 0) why += " (" + cush::DeviceSet::unavailable_reason() + ")";
  return why;
}

/// Every device order worth testing on this host: each single GPU, the natural order of all,
/// and the reversed order of all (e.g. {0}, {1}, {0, 1}, {1, 0}). With virtual GPUs, whose
/// single devices are the same few GPUs, only the first and the last single device.
inline std::vector<std::vector<int>> device_orders() {
  const int n = cush::DeviceSet::available();
  std::vector<std::vector<int>> orders;
  for (int i = 0; i < n; ++i)
    if (!cush::virtual_gpus_active() || i == 0 || i == n - 1) orders.push_back({i});
  if (n > 1) {
    std::vector<int> all;
    for (int i = 0; i < n; ++i) all.push_back(i);
    orders.push_back(all);
    orders.emplace_back(all.rbegin(), all.rend());
  }
  return orders;
}

/// True if two of the host's (logical) devices share one GPU: virtual GPUs (CUSH_VIRTUAL_GPUS).
inline bool gpus_are_shared() {
  if (cush::DeviceSet::available() == 0) return false;
  const cush::DeviceSet all = cush::DeviceSet::all();  // a temporary would die before the loop
  for (const cush::DeviceInfo& d : all.topology().devices())
    if (d.shared_by > 1) return true;
  return false;
}

/// True if the tests run under a CUDA tool (compute-sanitizer: scripts set CUSH_TEST_TOOL; or a
/// tool injected through CUDA_INJECTION64_PATH): its own allocations change free memory and it
/// may run kernels one at a time, so tests leave free-memory and timing checks to it.
inline bool under_cuda_tool() {
  for (const char* name : {"CUSH_TEST_TOOL", "CUDA_INJECTION64_PATH"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

/// Devices 0 .. count - 1.
inline std::vector<int> first_devices(int count) {
  std::vector<int> ids;
  for (int i = 0; i < count; ++i) ids.push_back(i);
  return ids;
}

inline std::string to_string(const std::vector<int>& ids) {
  std::string s = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + "}";
}

}  // namespace cush_test

/// Skips the current test, with its reason, unless the host has at least `n` GPUs.
#define CUSH_REQUIRE_GPUS(n)                                                        \
  do {                                                                              \
    const std::string cush_missing_ = ::cush_test::missing_gpus(n);                 \
    if (!cush_missing_.empty()) GTEST_SKIP() << cush_missing_;                      \
  } while (0)

/// As CUSH_REQUIRE_GPUS, and skips unless the devices are distinct GPUs (not virtual GPUs sharing
/// one): for nccl and peer_kernel, which refuse a shared GPU.
#define CUSH_REQUIRE_REAL_GPUS(n)                                                                    \
  do {                                                                                               \
    CUSH_REQUIRE_GPUS(n);                                                                            \
    if (::cush_test::gpus_are_shared())                                                              \
      GTEST_SKIP() << "nccl and peer_kernel refuse logical devices that share a GPU (virtual GPUs)"; \
  } while (0)
