#pragma once
// The kernel wrappers of seed 002's Listings 2.1 and 2.2 ("call a wrapper function for an
// arbitrary CUDA kernel"). Like the seed, the complexity comparison counts the listings, not
// these wrappers; docs/listings.md says so.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/plan.hpp"

namespace listing {

/// x[i] = 3 x[i] - 1 on every GPU's part, raw CUDA style (one launch per GPU).
void exec_kernel(float* const* dev_ptrs, const std::size_t* dev_sizes, const cudaStream_t* streams, int gpu_n);
/// The same on every segment of a plan.
void exec_kernel(cush::Plan<float>& plan);

/// Seed Listing 2.1 in raw CUDA, and Listing 2.2 with cush: the same job.
void listing_cuda(const float* host_buf, float* host_recv_buf, std::size_t host_size, int gpu_n);
void listing_cush(const float* host_buf, float* host_recv_buf, std::size_t host_size, int gpu_n);

}  // namespace listing
