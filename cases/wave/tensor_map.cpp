// Case "wave": the host side of the tensor-copy kernel (wave_staged_tensor.cuh): which devices
// have tensor copies, and the tensor maps, encoded by the driver's cuTensorMapEncodeTiled (taken
// through the runtime, so that nothing links the driver library itself).

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "kernels.hpp"

namespace cases {
namespace wave {
namespace tensor_copy {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUSH_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || f == nullptr)
      throw std::runtime_error("cases::wave: the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

}  // namespace

CUtensorMap tiled_map(const double* base, long x, long y, long z, long pitch, long plane, int bx, int by) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(x), static_cast<cuuint64_t>(y), static_cast<cuuint64_t>(z)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(pitch) * sizeof(double),
                                 static_cast<cuuint64_t>(plane) * sizeof(double)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(bx), static_cast<cuuint32_t>(by), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3, const_cast<double*>(base), dims, strides,
                                    box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cases::wave: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) +
                             ") for a " + std::to_string(x) + " x " + std::to_string(y) + " x " + std::to_string(z) +
                             " map of boxes " + std::to_string(bx) + " x " + std::to_string(by));
  return map;
}

}  // namespace tensor_copy

bool device_has_tensor_copies() {
  int device = 0, major = 0;
  CUSH_CUDA_CHECK(cudaGetDevice(&device));
  CUSH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

}  // namespace wave
}  // namespace cases
