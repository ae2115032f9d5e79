// The peer_kernel transport's kernel (see peer_kernel.hpp for the protocol).

#include <cuda/atomic>

#include <cstdint>

#include "core/kernel_preload.hpp"
#include "transports/peer_kernel.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"

namespace cush::detail {

namespace {

using SystemFlag = cuda::atomic_ref<unsigned, cuda::thread_scope_system>;

// Cyclic "at least": epochs wrap around after 2^32 operations.
__device__ __forceinline__ bool reached(unsigned value, unsigned epoch) { return static_cast<int>(value - epoch) >= 0; }

// Waits until `flag` reaches `epoch`; false if the host set the group's abort word meanwhile (a
// participant's kernel could not be launched). The abort word lies in host memory: it is read
// once every 1024 polls of the flag, which a wait on a running peer rarely reaches.
__device__ __forceinline__ bool wait_for(unsigned* flag, unsigned epoch, const unsigned* abort) {
  SystemFlag f(*flag);
  for (unsigned polls = 1; !reached(f.load(cuda::memory_order_relaxed), epoch); ++polls)
    if (polls % 1024 == 0 && *static_cast<const volatile unsigned*>(abort) != 0) return false;
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
  return true;
}

__device__ void copy_piece(const PeerPiece& p) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto s = reinterpret_cast<std::uintptr_t>(p.src);
  const auto d = reinterpret_cast<std::uintptr_t>(p.dst);
  if (((s | d) & 15U) == 0) {
    const std::size_t vectors = p.bytes / 16;
    const auto* src = static_cast<const uint4*>(p.src);
    auto* dst = static_cast<uint4*>(p.dst);
    // Four loads in flight per thread before their stores: a message of a few sweeps is
    // bounded by the load latency, not by the links.
    for (std::size_t i = first; i < vectors; i += 4 * stride) {
      uint4 v[4];
#pragma unroll
      for (std::size_t u = 0; u < 4; ++u)
        if (i + u * stride < vectors) v[u] = src[i + u * stride];
#pragma unroll
      for (std::size_t u = 0; u < 4; ++u)
        if (i + u * stride < vectors) dst[i + u * stride] = v[u];
    }
    const auto* sb = static_cast<const unsigned char*>(p.src);
    auto* db = static_cast<unsigned char*>(p.dst);
    for (std::size_t i = vectors * 16 + first; i < p.bytes; i += stride) db[i] = sb[i];
  } else {
    const auto* sb = static_cast<const unsigned char*>(p.src);
    auto* db = static_cast<unsigned char*>(p.dst);
    for (std::size_t i = first; i < p.bytes; i += stride) db[i] = sb[i];
  }
}

__global__ void peer_kernel(const PeerKernelArgs a) {
  const unsigned t = threadIdx.x;
  // 1. Arrival: this device's earlier work is done (the kernel started after it).
  if (blockIdx.x == 0 && t < a.group && t != a.me)
    SystemFlag(a.peer_flags[t][PeerFlags::arrival + a.me]).store(a.epoch, cuda::memory_order_release);
  // 2. Every block waits until all participants have arrived: then their buffers may be written.
  //    If the group was aborted, no participant writes anything.
  const bool waits = t < a.group && t != a.me;
  if (__syncthreads_or(waits && !wait_for(&a.flags[PeerFlags::arrival + t], a.epoch, a.abort))) return;
  // 3. The pieces.
  for (unsigned k = 0; k < a.count; ++k) copy_piece(a.pieces[k]);
  // 4. The last block to finish reports to all participants and waits for their reports.
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_system);
  __syncthreads();
  __shared__ bool last;
  if (t == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(a.flags[PeerFlags::counter]);
    last = counter.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
    if (last) counter.store(0, cuda::memory_order_relaxed);  // the next kernel of the group starts after this one
  }
  __syncthreads();
  if (!last) return;
  cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_system);
  if (t < a.group && t != a.me)
    SystemFlag(a.peer_flags[t][PeerFlags::done + a.me]).store(a.epoch, cuda::memory_order_release);
  if (waits) (void)wait_for(&a.flags[PeerFlags::done + t], a.epoch, a.abort);
}

}  // namespace

void launch_peer_kernel(const PeerKernelArgs& args, unsigned blocks, cudaStream_t stream) {
  static_assert(peer_kernel_max_devices <= 32, "one thread per participant in the first warp");
  peer_kernel<<<blocks, 256, 0, stream>>>(args);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void preload_peer_kernel(int device) {
  static const void* const kernels[] = {reinterpret_cast<const void*>(peer_kernel)};
  preload_kernels(device, "peer_kernel", kernels);
}

}  // namespace cush::detail
