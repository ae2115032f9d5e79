// Diagnostics behind the small-message design of the GPU<->GPU operations (docs/device_ops.md):
// what one copy from GPU 0 to GPU 1 costs when, like a cush operation, it is ordered after the
// earlier work of both GPUs' streams and before their later work, with each kind of cross-device
// ordering. Not a benchmark: it prints a table and exits.
//
//   raw_src     copies on GPU 0's stream, no ordering at all (the raw twin of bench_device_ops)
//   raw_dst     the same on GPU 1's stream (the destination pulls)
//   ev_fwd      copy on GPU 0's stream, GPU 1's stream waits for it (one event per copy)
//   ev_both     GPU 1's stream waits for GPU 0's, copies, GPU 0's waits for the copy (cush 0.1)
//   ev_both_reuse  as ev_both, recording the same two events for every copy
//   ev_push     GPU 0's stream waits for GPU 1's, copies (push), GPU 1's waits for the copy
//   ev_push_reuse  as ev_push, with the same two events for every copy
//   launch_same_dev / launch_switch_dev   an empty kernel, without / with a device switch
//   memcpy_cur_src / memcpy_cur_dst   raw_src with the current device set to the source / not
//   recwait_cur_match / recwait_cur_other   a record on GPU 0 and a wait on GPU 1, each with the
//               current device set to its stream's device / to the other device
//   join_same_dev  an event record on one stream and a wait on another of the same GPU
//   mem_both    as ev_both, with stream memory operations (write / wait value) on flags in the
//               waiting GPU's memory instead of events
//   host_both   as mem_both, with the flags in mapped pinned host memory
//   kern_both   one kernel per GPU and copy: GPU 0's kernel raises a flag in GPU 1's memory and
//               waits for GPU 1's kernel to report the copy done; GPU 1's kernel waits for the
//               flag, copies with peer loads, and reports
//   cush_copy   cush::copy between two one-GPU plans
// Columns: issue = host time to enqueue one copy, total = time per copy of a batch of N.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cush/cush.hpp"

namespace {

#define CK(call)                                                                          \
  do {                                                                                    \
    const cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                              \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

bool cu_ok(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return true;
  const char* s = nullptr;
  cuGetErrorString(r, &s);
  std::printf("  (%s failed: %s)\n", what, s != nullptr ? s : "?");
  return false;
}

using Clock = std::chrono::steady_clock;
double us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Waits until *flag >= target (system scope), by thread 0 of the block.
__device__ void wait_at_least(const volatile unsigned* flag, unsigned target) {
  if (threadIdx.x == 0)
    while (static_cast<int>(*flag - target) < 0) {
    }
  __syncthreads();
  __threadfence_system();
}

// GPU 0's side: tell GPU 1 that op `k` may read, then wait until all of its blocks are done.
__global__ void source_side(unsigned* ready_on_1, const volatile unsigned* done_on_0, unsigned k, unsigned done) {
  __threadfence_system();
  atomicExch_system(ready_on_1, k);
  wait_at_least(done_on_0, done);
}

// GPU 1's side: wait for GPU 0, copy with peer loads, report.
__global__ void destination_side(const volatile unsigned* ready_on_1, unsigned* done_on_0, unsigned k,
                                 const uint4* src, uint4* dst, std::size_t n16) {
  wait_at_least(ready_on_1, k);
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    atomicAdd_system(done_on_0, 1U);
  }
}

__global__ void empty() {}

struct Setup {
  cudaStream_t s0 = nullptr, s1 = nullptr, s1b = nullptr;
  void* src = nullptr;  // on GPU 0
  void* dst = nullptr;  // on GPU 1
  std::vector<cudaEvent_t> e0, e1;
  unsigned* flag_on_0 = nullptr;  // device memory
  unsigned* flag_on_1 = nullptr;
  unsigned* host_flags = nullptr;  // [0] waited on by GPU 0, [1] by GPU 1
  unsigned* ready_on_1 = nullptr;  // kernel flags
  unsigned* done_on_0 = nullptr;
  unsigned counter = 0;
  unsigned done_target = 0;  // blocks of kern_both that have reported so far
};

void sync_both() {
  CK(cudaSetDevice(0));
  CK(cudaDeviceSynchronize());
  CK(cudaSetDevice(1));
  CK(cudaDeviceSynchronize());
}

struct Row {
  std::string name;
  double issue = 0, total = 0;
  bool ok = true;
};

// Runs `op(k)` for k = 1..batch, `reps` times; keeps the fastest batch.
Row time(const std::string& name, int batch, const std::function<bool(unsigned)>& op, Setup& s) {
  Row r{name, 1e30, 1e30, true};
  for (int rep = 0; rep < 6; ++rep) {
    sync_both();
    const auto t0 = Clock::now();
    for (int k = 0; k < batch; ++k)
      if (!op(++s.counter)) {
        r.ok = false;
        sync_both();
        return r;
      }
    const auto t1 = Clock::now();
    sync_both();
    const auto t2 = Clock::now();
    if (rep == 0) continue;  // warm-up
    r.issue = std::min(r.issue, us(t1 - t0) / batch);
    r.total = std::min(r.total, us(t2 - t0) / batch);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::printf("probe_device_sync: needs two GPUs, found %d\n", count);
    return 0;
  }
  const int batch = argc > 1 ? std::atoi(argv[1]) : 200;
  CK(cudaSetDevice(0));
  CK(cudaDeviceEnablePeerAccess(1, 0));
  CK(cudaSetDevice(1));
  CK(cudaDeviceEnablePeerAccess(0, 0));
  if (!cu_ok(cuInit(0), "cuInit")) return 1;

  Setup s;
  const std::size_t max_bytes = std::size_t{1} << 20;
  CK(cudaSetDevice(0));
  CK(cudaStreamCreateWithFlags(&s.s0, cudaStreamNonBlocking));
  CK(cudaMalloc(&s.src, max_bytes));
  CK(cudaMemset(s.src, 1, max_bytes));
  CK(cudaMalloc(&s.flag_on_0, 2 * sizeof(unsigned)));
  CK(cudaMemset(s.flag_on_0, 0, 2 * sizeof(unsigned)));
  s.done_on_0 = s.flag_on_0 + 1;
  CK(cudaSetDevice(1));
  CK(cudaStreamCreateWithFlags(&s.s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s.s1b, cudaStreamNonBlocking));
  CK(cudaMalloc(&s.dst, max_bytes));
  CK(cudaMalloc(&s.flag_on_1, 2 * sizeof(unsigned)));
  CK(cudaMemset(s.flag_on_1, 0, 2 * sizeof(unsigned)));
  s.ready_on_1 = s.flag_on_1 + 1;
  CK(cudaHostAlloc(&s.host_flags, 2 * sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
  s.host_flags[0] = s.host_flags[1] = 0;
  const int events = 2 * batch + 8;
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    for (int k = 0; k < events; ++k) {
      cudaEvent_t e = nullptr;
      CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      (d == 0 ? s.e0 : s.e1).push_back(e);
    }
  }
  int flush = 0;
  cuDeviceGetAttribute(&flush, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, 0);
  std::printf("probe_device_sync: batch %d, CAN_FLUSH_REMOTE_WRITES %d\n\n", batch, flush);

  cush::Plan<std::byte> a(cush::DeviceSet({0}), max_bytes);
  cush::Plan<std::byte> b(cush::DeviceSet({1}), max_bytes);
  const auto host_ptr = [&](int i) {
    void* p = nullptr;
    CK(cudaHostGetDevicePointer(&p, s.host_flags + i, 0));
    return reinterpret_cast<CUdeviceptr>(p);
  };

  std::printf("| bytes | variant | issue us/op | total us/op |\n|---|---|---|---|\n");
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{65536}, max_bytes}) {
    const std::size_t n16 = bytes / 16;
    const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>(bytes / 32768, 1, 32));
    int ev = 0;
    auto next0 = [&] { ev = (ev + 1) % events; return s.e0[static_cast<std::size_t>(ev)]; };
    auto next1 = [&] { ev = (ev + 1) % events; return s.e1[static_cast<std::size_t>(ev)]; };
    std::vector<Row> rows;
    rows.push_back(time("raw_src", batch, [&](unsigned) {
      return cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s0) == cudaSuccess;
    }, s));
    rows.push_back(time("raw_dst", batch, [&](unsigned) {
      return cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s1) == cudaSuccess;
    }, s));
    rows.push_back(time("ev_fwd", batch, [&](unsigned) {
      CK(cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s0));
      const cudaEvent_t e = next0();
      CK(cudaEventRecord(e, s.s0));
      CK(cudaStreamWaitEvent(s.s1, e, 0));
      return true;
    }, s));
    rows.push_back(time("ev_both", batch, [&](unsigned) {
      const cudaEvent_t a0 = next0();
      CK(cudaEventRecord(a0, s.s0));
      CK(cudaStreamWaitEvent(s.s1, a0, 0));
      CK(cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s1));
      const cudaEvent_t b1 = next1();
      CK(cudaEventRecord(b1, s.s1));
      CK(cudaStreamWaitEvent(s.s0, b1, 0));
      return true;
    }, s));
    rows.push_back(time("ev_both_reuse", batch, [&](unsigned) {
      CK(cudaEventRecord(s.e0[0], s.s0));
      CK(cudaStreamWaitEvent(s.s1, s.e0[0], 0));
      CK(cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s1));
      CK(cudaEventRecord(s.e1[0], s.s1));
      CK(cudaStreamWaitEvent(s.s0, s.e1[0], 0));
      return true;
    }, s));
    rows.push_back(time("ev_push", batch, [&](unsigned) {
      const cudaEvent_t a1 = next1();
      CK(cudaEventRecord(a1, s.s1));
      CK(cudaStreamWaitEvent(s.s0, a1, 0));
      CK(cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s0));
      const cudaEvent_t b0 = next0();
      CK(cudaEventRecord(b0, s.s0));
      CK(cudaStreamWaitEvent(s.s1, b0, 0));
      return true;
    }, s));
    rows.push_back(time("ev_push_reuse", batch, [&](unsigned) {
      CK(cudaEventRecord(s.e1[0], s.s1));
      CK(cudaStreamWaitEvent(s.s0, s.e1[0], 0));
      CK(cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s0));
      CK(cudaEventRecord(s.e0[0], s.s0));
      CK(cudaStreamWaitEvent(s.s1, s.e0[0], 0));
      return true;
    }, s));
    rows.push_back(time("launch_same_dev", batch, [&](unsigned) {
      empty<<<1, 32, 0, s.s1>>>();
      return cudaGetLastError() == cudaSuccess;
    }, s));
    rows.push_back(time("launch_switch_dev", batch, [&](unsigned k) {
      CK(cudaSetDevice(static_cast<int>(k % 2)));
      empty<<<1, 32, 0, k % 2 == 0 ? s.s0 : s.s1>>>();
      return cudaGetLastError() == cudaSuccess;
    }, s));
    // The same calls with the current device set to the stream's device, or to the other one.
    rows.push_back(time("memcpy_cur_src", batch, [&](unsigned) {
      CK(cudaSetDevice(0));
      return cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s0) == cudaSuccess;
    }, s));
    rows.push_back(time("memcpy_cur_dst", batch, [&](unsigned) {
      CK(cudaSetDevice(1));
      return cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s0) == cudaSuccess;
    }, s));
    rows.push_back(time("recwait_cur_match", batch, [&](unsigned) {
      const cudaEvent_t a0 = next0();
      CK(cudaSetDevice(0));
      CK(cudaEventRecord(a0, s.s0));
      CK(cudaSetDevice(1));
      CK(cudaStreamWaitEvent(s.s1, a0, 0));
      return true;
    }, s));
    rows.push_back(time("recwait_cur_other", batch, [&](unsigned) {
      const cudaEvent_t a0 = next0();
      CK(cudaSetDevice(1));
      CK(cudaEventRecord(a0, s.s0));
      CK(cudaSetDevice(0));
      CK(cudaStreamWaitEvent(s.s1, a0, 0));
      return true;
    }, s));
    rows.push_back(time("join_same_dev", batch, [&](unsigned) {
      const cudaEvent_t a1 = next1();
      CK(cudaEventRecord(a1, s.s1));
      CK(cudaStreamWaitEvent(s.s1b, a1, 0));
      return true;
    }, s));
    const auto mem_both = [&](CUdeviceptr waited_by_0, CUdeviceptr waited_by_1) {
      return [&, waited_by_0, waited_by_1](unsigned k) {
        auto c0 = reinterpret_cast<CUstream>(s.s0);
        auto c1 = reinterpret_cast<CUstream>(s.s1);
        if (!cu_ok(cuStreamWriteValue32(c0, waited_by_1, k, CU_STREAM_WRITE_VALUE_DEFAULT), "write 0->1")) return false;
        if (!cu_ok(cuStreamWaitValue32(c1, waited_by_1, k, CU_STREAM_WAIT_VALUE_GEQ), "wait on 1")) return false;
        CK(cudaMemcpyAsync(s.dst, s.src, bytes, cudaMemcpyDefault, s.s1));
        if (!cu_ok(cuStreamWriteValue32(c1, waited_by_0, k, CU_STREAM_WRITE_VALUE_DEFAULT), "write 1->0")) return false;
        return cu_ok(cuStreamWaitValue32(c0, waited_by_0, k, CU_STREAM_WAIT_VALUE_GEQ), "wait on 0");
      };
    };
    rows.push_back(time("mem_both", batch,
                        mem_both(reinterpret_cast<CUdeviceptr>(s.flag_on_0), reinterpret_cast<CUdeviceptr>(s.flag_on_1)), s));
    rows.push_back(time("host_both", batch, mem_both(host_ptr(0), host_ptr(1)), s));
    rows.push_back(time("kern_both", batch, [&](unsigned k) {
      s.done_target += blocks;
      CK(cudaSetDevice(0));
      source_side<<<1, 32, 0, s.s0>>>(s.ready_on_1, s.done_on_0, k, s.done_target);
      CK(cudaGetLastError());
      CK(cudaSetDevice(1));
      destination_side<<<blocks, 256, 0, s.s1>>>(s.ready_on_1, s.done_on_0, k, static_cast<const uint4*>(s.src),
                                                 static_cast<uint4*>(s.dst), n16);
      CK(cudaGetLastError());
      return true;
    }, s));
    rows.push_back(time("cush_copy", batch, [&](unsigned) {
      cush::copy(a, b);
      return true;
    }, s));
    for (const Row& r : rows) {
      if (r.ok)
        std::printf("| %zu | %s | %.2f | %.2f |\n", bytes, r.name.c_str(), r.issue, r.total);
      else
        std::printf("| %zu | %s | failed | failed |\n", bytes, r.name.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
