// The peer_kernel transport's kernel (see peer_kernel.hpp for the protocol).

#include <cuda/atomic>

#include <cstdint>
#include <vector>

#include "core/kernel_preload.hpp"
#include "transports/peer_kernel.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "cush/reduce.hpp"

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

// 1-2. Arrival: tells every other participant that this device's earlier work is done (the
// kernel started after it), then every block waits until all participants have arrived: their
// buffers may then be read and written. False if the group was aborted (nobody writes anything).
__device__ bool arrive(const PeerKernelArgs& a) {
  const unsigned t = threadIdx.x;
  if (blockIdx.x == 0 && t < a.group && t != a.me)
    SystemFlag(a.peer_flags[t][PeerFlags::arrival + a.me]).store(a.epoch, cuda::memory_order_release);
  const bool waits = t < a.group && t != a.me;
  return !__syncthreads_or(waits && !wait_for(&a.flags[PeerFlags::arrival + t], a.epoch, a.abort));
}

// True in the last of this kernel's blocks to reach it (block counter `counter`, reset there for
// the group's next kernel); every block's earlier stores are released to the system first.
__device__ bool last_block(const PeerKernelArgs& a, std::size_t counter) {
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_system);
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(a.flags[counter]);
    last = c.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
    if (last) c.store(0, cuda::memory_order_relaxed);  // the next kernel of the group starts after this one
  }
  __syncthreads();
  return last;
}

// The last block tells every other participant that this device's blocks are all past this
// point (flags `which`): only that block's threads may call it.
__device__ void tell(const PeerKernelArgs& a, std::size_t which) {
  cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_system);
  const unsigned t = threadIdx.x;
  if (t < a.group && t != a.me) SystemFlag(a.peer_flags[t][which + a.me]).store(a.epoch, cuda::memory_order_release);
}

// Waits (this block) until every other participant has told `which`; false if aborted.
__device__ bool hear(const PeerKernelArgs& a, std::size_t which) {
  const unsigned t = threadIdx.x;
  const bool waits = t < a.group && t != a.me;
  return !__syncthreads_or(waits && !wait_for(&a.flags[which + t], a.epoch, a.abort));
}

// 4. The last block to finish reports to all participants and waits for their reports: no
// participant's later work starts before every participant is done with its buffers.
__device__ void finish(const PeerKernelArgs& a) {
  if (!last_block(a, PeerFlags::counter)) return;
  tell(a, PeerFlags::done);
  (void)hear(a, PeerFlags::done);
}

__global__ void peer_kernel(const PeerKernelArgs a) {
  if (!arrive(a)) return;
  for (unsigned k = 0; k < a.count; ++k) copy_piece(a.pieces[k]);  // 3. the pieces
  finish(a);
}

template <class T, ReduceOp O>
__device__ __forceinline__ T combine(T x, T y) {
  if constexpr (O == ReduceOp::sum) {
    return static_cast<T>(x + y);
  } else if constexpr (O == ReduceOp::min) {
    return y < x ? y : x;
  } else {
    return x < y ? y : x;
  }
}

// Elements [begin, end) of every buffer `from` (one per participant) combined in participant
// order and stored into each of the `outs` buffers `into`, 16 bytes at a time where every buffer
// allows it.
template <class T, ReduceOp O>
__device__ void combine_range(void* const* from, void* const* into, unsigned outs, unsigned group, std::size_t begin,
                              std::size_t end) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  constexpr std::size_t per_vector = 16 / sizeof(T);
  bool aligned = true;
  for (unsigned j = 0; j < group; ++j)
    aligned = aligned && (reinterpret_cast<std::uintptr_t>(static_cast<const T*>(from[j]) + begin) & 15U) == 0;
  for (unsigned o = 0; o < outs; ++o)
    aligned = aligned && (reinterpret_cast<std::uintptr_t>(static_cast<const T*>(into[o]) + begin) & 15U) == 0;
  std::size_t done = begin;
  if (aligned) {
    const std::size_t vectors = (end - begin) / per_vector;
    const auto* src0 = reinterpret_cast<const uint4*>(static_cast<const T*>(from[0]) + begin);
    // Four vectors in flight per thread and buffer: a remote load takes microseconds, and one
    // per thread left the links at about 60 % (2 x H200, 16 MiB all-reduce).
    for (std::size_t i = first; i < vectors; i += 4 * stride) {
      uint4 acc[4];
#pragma unroll
      for (std::size_t u = 0; u < 4; ++u)
        if (i + u * stride < vectors) acc[u] = src0[i + u * stride];
      for (unsigned j = 1; j < group; ++j) {
        const auto* srcj = reinterpret_cast<const uint4*>(static_cast<const T*>(from[j]) + begin);
        uint4 v[4];
#pragma unroll
        for (std::size_t u = 0; u < 4; ++u)
          if (i + u * stride < vectors) v[u] = srcj[i + u * stride];
#pragma unroll
        for (std::size_t u = 0; u < 4; ++u) {
          T* a = reinterpret_cast<T*>(&acc[u]);
          const T* b = reinterpret_cast<const T*>(&v[u]);
#pragma unroll
          for (std::size_t e = 0; e < per_vector; ++e) a[e] = combine<T, O>(a[e], b[e]);
        }
      }
      for (unsigned o = 0; o < outs; ++o) {
        auto* dst = reinterpret_cast<uint4*>(static_cast<T*>(into[o]) + begin);
#pragma unroll
        for (std::size_t u = 0; u < 4; ++u)
          if (i + u * stride < vectors) dst[i + u * stride] = acc[u];
      }
    }
    done = begin + vectors * per_vector;
  }
  for (std::size_t x = done + first; x < end; x += stride) {
    T acc = static_cast<const T*>(from[0])[x];
    for (unsigned j = 1; j < group; ++j) acc = combine<T, O>(acc, static_cast<const T*>(from[j])[x]);
    for (unsigned o = 0; o < outs; ++o) static_cast<T*>(into[o])[x] = acc;
  }
}

template <class T, ReduceOp O>
__global__ void peer_reduce_kernel(const PeerKernelArgs a) {
  const PeerReduction& r = a.reduction;
  if (r.kind == PeerReduction::all_reduce_one_shot) {
    // The replica into this participant's scratch slot; the last block tells the others (the
    // arrival: this device's earlier work is done too, the kernel started after it), and every
    // block waits for theirs, then combines every slot into the replica. No end barrier: the
    // others read only the slot, which is written again two operations later (peer_kernel.hpp).
    copy_piece(PeerPiece{r.data[a.me], r.scratch[a.me], r.count * sizeof(T)});
    if (last_block(a, PeerFlags::mid_counter)) tell(a, PeerFlags::arrival);
    if (!hear(a, PeerFlags::arrival)) return;
    combine_range<T, O>(r.scratch, &r.data[a.me], 1, a.group, 0, r.count);
    return;
  }
  if (!arrive(a)) return;
  if (r.kind == PeerReduction::reduce) {
    // One shot: the root reads every replica; the others' replicas stay as they are until it
    // is done (finish).
    if (a.me == r.root) combine_range<T, O>(r.data, &r.data[r.root], 1, a.group, 0, r.count);
    finish(a);
    return;
  }
  if (r.kind == PeerReduction::reduce_spread) {
    // This participant's share of every replica, into the root's (peer_kernel.hpp); the root
    // goes on only when every participant has stored its share (finish).
    combine_range<T, O>(r.data, &r.data[r.root], 1, a.group, r.share[a.me], r.share[a.me + 1]);
    finish(a);
    return;
  }
  if (r.kind == PeerReduction::all_reduce_push) {
    // This participant's share of every replica, combined and stored into every replica
    // (peer_kernel.hpp); nobody else reads or writes that share anywhere.
    combine_range<T, O>(r.data, r.data, a.group, a.group, r.share[a.me], r.share[a.me + 1]);
    finish(a);
    return;
  }
  // Two shots. First this participant's share of every replica, into its own replica: the others
  // read and write other shares meanwhile.
  combine_range<T, O>(r.data, &r.data[a.me], 1, a.group, r.share[a.me], r.share[a.me + 1]);
  // Every block then waits until every participant has combined its share (the mid flags):
  // only then may this replica's other shares be overwritten (their owners have read them) and
  // the others' combined shares be read.
  if (last_block(a, PeerFlags::mid_counter)) tell(a, PeerFlags::mid);
  if (!hear(a, PeerFlags::mid)) return;
  for (unsigned j = 0; j < a.group; ++j) {
    if (j == a.me) continue;
    const std::size_t bytes = (r.share[j + 1] - r.share[j]) * sizeof(T);
    copy_piece(PeerPiece{static_cast<const T*>(r.data[j]) + r.share[j], static_cast<T*>(r.data[a.me]) + r.share[j], bytes});
  }
  finish(a);
}

// Every element type and operator of a reduction: calls f with a pointer to the kernel.
template <class F>
void with_reduce_kernel(ElementType type, ReduceOp op, F&& f) {
  const auto by_op = [&]<class T>(T*) {
    switch (op) {
      case ReduceOp::sum: return f(peer_reduce_kernel<T, ReduceOp::sum>);
      case ReduceOp::min: return f(peer_reduce_kernel<T, ReduceOp::min>);
      case ReduceOp::max: return f(peer_reduce_kernel<T, ReduceOp::max>);
    }
    throw InvalidArgument("cush::detail::launch_peer_kernel", "op", "not a reduction operator");
  };
  switch (type) {
    case ElementType::int8: return by_op(static_cast<std::int8_t*>(nullptr));
    case ElementType::uint8: return by_op(static_cast<std::uint8_t*>(nullptr));
    case ElementType::int32: return by_op(static_cast<std::int32_t*>(nullptr));
    case ElementType::uint32: return by_op(static_cast<std::uint32_t*>(nullptr));
    case ElementType::int64: return by_op(static_cast<std::int64_t*>(nullptr));
    case ElementType::uint64: return by_op(static_cast<std::uint64_t*>(nullptr));
    case ElementType::float32: return by_op(static_cast<float*>(nullptr));
    case ElementType::float64: return by_op(static_cast<double*>(nullptr));
  }
  throw InvalidArgument("cush::detail::launch_peer_kernel", "type", "not an element type of a reduction");
}

}  // namespace

void launch_peer_kernel(const PeerKernelArgs& args, unsigned blocks, cudaStream_t stream) {
  static_assert(peer_kernel_max_devices <= 32, "one thread per participant in the first warp");
  if (args.reduction.kind == PeerReduction::none) {
    peer_kernel<<<blocks, 256, 0, stream>>>(args);
  } else {
    with_reduce_kernel(static_cast<ElementType>(args.reduction.type), static_cast<ReduceOp>(args.reduction.op),
                       [&](void (*kernel)(PeerKernelArgs)) { kernel<<<blocks, 256, 0, stream>>>(args); });
  }
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void preload_peer_kernel(int device) {
  std::vector<const void*> kernels{reinterpret_cast<const void*>(peer_kernel)};
  for (ElementType type : {ElementType::int8, ElementType::uint8, ElementType::int32, ElementType::uint32,
                           ElementType::int64, ElementType::uint64, ElementType::float32, ElementType::float64})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max})
      with_reduce_kernel(type, op, [&](void (*kernel)(PeerKernelArgs)) {
        kernels.push_back(reinterpret_cast<const void*>(kernel));
      });
  preload_kernels(device, "peer_kernel", kernels);
}

}  // namespace cush::detail
