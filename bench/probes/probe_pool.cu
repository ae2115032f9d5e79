// What a staging buffer from a stream-ordered pool costs when the pool gives freed memory back at
// every synchronization (release threshold 0, CUDA's default) and when it keeps it (threshold: all,
// as cush's staging pool does): allocate, fill with a kernel, free, synchronize, for 16 MiB to
// 2 GiB, against the kernel alone on a buffer from cudaMalloc (docs/guide.md, "Transposing a
// matrix split over GPUs"). Best of 7 after one warm-up; GPU 0 only.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "probe_pool: %s: %s\n", call, cudaGetErrorString(status));
  std::exit(1);
}
#define CK(call) check((call), #call)

__global__ void fill(double* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<double>(i);
}

double microseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int keep = 0; keep < 2; ++keep) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    CK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t threshold = keep ? UINT64_MAX : 0;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    for (std::size_t mib : {16, 128, 512, 2048}) {
      const std::size_t bytes = mib << 20, n = bytes / sizeof(double);
      double pooled = 1e30, alone = 1e30;
      for (int it = 0; it < 8; ++it) {
        const auto t0 = std::chrono::steady_clock::now();
        void* p;
        CK(cudaMallocFromPoolAsync(&p, bytes, pool, s));
        fill<<<1056, 512, 0, s>>>(static_cast<double*>(p), n);
        CK(cudaGetLastError());
        CK(cudaFreeAsync(p, s));
        CK(cudaStreamSynchronize(s));
        if (it > 0 && microseconds_since(t0) < pooled) pooled = microseconds_since(t0);
      }
      void* q;
      CK(cudaMalloc(&q, bytes));
      for (int it = 0; it < 8; ++it) {
        const auto t0 = std::chrono::steady_clock::now();
        fill<<<1056, 512, 0, s>>>(static_cast<double*>(q), n);
        CK(cudaStreamSynchronize(s));
        if (it > 0 && microseconds_since(t0) < alone) alone = microseconds_since(t0);
      }
      CK(cudaFree(q));
      std::printf("threshold %-4s %5zu MiB: alloc+fill+free+sync %9.1f us, fill+sync alone %8.1f us, extra %9.1f us\n",
                  keep ? "max" : "0", mib, pooled, alone, pooled - alone);
    }
    CK(cudaMemPoolDestroy(pool));
  }
  CK(cudaStreamDestroy(s));
  return 0;
}
