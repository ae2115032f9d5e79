#pragma once
/// @file virtual_gpus.hpp
/// @brief Virtual GPUs: more logical GPUs than the host has, mapped onto its physical ones, so
/// that multi-GPU code runs, and is tested, on a workstation with one GPU.
///
/// Every cush id of a device (DeviceSet, Segment::device(), Block::device(), DeviceInfo::id)
/// is a logical device. Without virtual GPUs logical device i is CUDA device i, at no cost. With
/// them (CUSH_VIRTUAL_GPUS=4, or use_virtual_gpus(4) before cush touches a device) several
/// logical devices share a GPU: each has its own streams, events and buffers; copies between two
/// of them are copies within the GPU; they reach each other without peer access; distributions
/// by capacity or bandwidth give each its share of the GPU; the nccl transport, which cannot put
/// one GPU twice in a communicator, and peer_kernel, whose kernels on one GPU could wait for
/// each other forever, refuse them (automatic picks peer). What they verify: ordering, indexing
/// and every transfer of the multi-GPU code paths. What they cannot: link speed, NCCL, peer
/// access between real devices (docs/guide.md, "Virtual GPUs"). Raw CUDA code takes physical ids
/// (DeviceSet::physical, physical_device).

#include <string>
#include <vector>

namespace cush {

/// Makes the process's GPUs `count` logical GPUs, round robin over the physical ones (logical
/// i is GPU i mod the GPU count). Call it before anything else in cush touches a device;
/// InvalidArgument afterwards, or for a count outside 1 to 64. Without a GPU it does nothing.
void use_virtual_gpus(int count);
/// Logical GPU i becomes physical GPU physical_ids[i] (repeats allowed): e.g. {0, 0, 1, 1}.
void use_virtual_gpus(std::vector<int> physical_ids);

/// True if some logical device is not the CUDA device of the same number.
[[nodiscard]] bool virtual_gpus_active();
/// The CUDA ordinal of the GPU behind logical device `device` (`device` itself without
/// virtual GPUs): what raw CUDA code passes to cudaSetDevice.
[[nodiscard]] int physical_device(int device);
/// The logical devices and their GPUs, e.g. "4 logical GPUs on 1: 0 0 0 0".
[[nodiscard]] std::string describe_devices();

}  // namespace cush
