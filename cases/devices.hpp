#pragma once
// The GPUs a case runs on, named the way each variant names them: CUDA device ids for the
// single-GPU reference and the raw CUDA variants (cudaSetDevice), cush's device ids for the cush
// variants (DeviceSet). Without virtual GPUs the two lists are the same. With them
// (CUSH_VIRTUAL_GPUS) several cush devices share one GPU, and the raw variants get its CUDA id
// as often: raw CUDA code runs on a repeated id, so the three variants still compare.

#include <vector>

#include "cush/virtual_gpus.hpp"

namespace cases {

struct Devices {
  std::vector<int> cuda;  ///< for raw CUDA: cudaSetDevice(cuda[g])
  std::vector<int> cush;  ///< for cush: cush::DeviceSet(cush)

  [[nodiscard]] int count() const { return static_cast<int>(cush.size()); }

  /// The devices with cush's ids `ids`, in that order.
  static Devices of(std::vector<int> ids) {
    Devices d;
    for (int id : ids) d.cuda.push_back(cush::physical_device(id));
    d.cush = std::move(ids);
    return d;
  }
  /// cush's devices 0 .. count - 1.
  static Devices first(int count) {
    std::vector<int> ids;
    for (int i = 0; i < count; ++i) ids.push_back(i);
    return of(std::move(ids));
  }
};

}  // namespace cases
