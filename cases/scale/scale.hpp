#pragma once
// Case "scale": seed 002's Listings 2.1/2.2 as a case study. A host buffer of n floats is spread
// over the GPUs, every element scaled (x -> 3x - 1), and the parts collected into a second host
// buffer. Three variants with one entry point; the single-GPU reference uses the first device.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "devices.hpp"

namespace cases {
namespace scale {

/// Single-GPU CUDA reference (on gpus.cuda[0]).
void single(const float* host_buf, float* host_recv_buf, std::size_t host_size, const Devices& gpus);
/// Multi-GPU raw CUDA (Listing 2.1, made complete: remainders, checks, frees).
void multi_cuda(const float* host_buf, float* host_recv_buf, std::size_t host_size, const Devices& gpus);
/// Multi-GPU cush (Listing 2.2).
void multi_cush(const float* host_buf, float* host_recv_buf, std::size_t host_size, const Devices& gpus);

/// The kernel, shared by all variants: x[i] = 3 x[i] - 1 for n elements in `stream` (n may be 0).
void launch_scale(float* x, std::size_t n, cudaStream_t stream);

}  // namespace scale
}  // namespace cases
