#pragma once
// Case "karst": one GPU's buffers for the raw CUDA variants (single.cpp, multi_cuda.cpp): a stream,
// the members, forcing, observed curve, curves and misfits of a batch, and its workspace. Plain
// cudaMalloc and cudaFree, as raw CUDA code has them; the cush variant gets the same from plans.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

#include "kernels.hpp"

namespace cases::karst {

struct RawBatch {
  int device = -1;  // -1: nothing opened
  cudaStream_t stream = nullptr;
  std::size_t capacity = 0, steps = 0;  // what the buffers hold
  Groups* members = nullptr;
  double *forcing = nullptr, *observed = nullptr, *curves = nullptr, *misfits = nullptr;
  std::optional<Workspace> work;

  /// Makes `device` current and creates the stream.
  void open(int cuda_device);
  /// Buffers for `count` members and `n` steps of `model` on `grid`; allocated again only when
  /// the count grows or the steps change.
  void reserve(Model model, const Grid& grid, std::size_t count, std::size_t n);
  /// Waits for the stream, frees everything; never throws. The owner calls it once (no destructor:
  /// copies made while a vector grows must not free).
  void release() noexcept;

 private:
  void free_buffers() noexcept;
};

}  // namespace cases::karst
