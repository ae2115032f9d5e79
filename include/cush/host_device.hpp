#pragma once
/// @file host_device.hpp
/// @brief CUSH_HOST_DEVICE marks the functions of cush's views (Segment, Block) that kernels may
/// call: `__host__ __device__` when compiled by a CUDA compiler, nothing otherwise.

#ifndef CUSH_HOST_DEVICE
#if defined(__CUDACC__)
#define CUSH_HOST_DEVICE __host__ __device__
#else
#define CUSH_HOST_DEVICE
#endif
#endif
