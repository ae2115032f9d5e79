#pragma once
// The ceilings a kernel's rate is judged against, measured in the same run as the kernel: the
// FP64 FMA issue rate and the device-memory copy bandwidth of one GPU (docs/results/temporal.md).

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cush_bench {

/// Enqueues on `stream` (its device current) a kernel of independent FP64 FMA chains that fills
/// the GPU; returns the FMAs it issues. `sink` (one double on the device) keeps the result.
double launch_fp64_fmas(double* sink, cudaStream_t stream);

/// Registers the rows roof/fp64_fma/1gpu (counter GFMA/s) and roof/copy/1gpu/2048 (a 2 GiB
/// device-to-device copy, counter GB/s over the bytes read and written), on GPU 0.
void register_roofs();

}  // namespace cush_bench
