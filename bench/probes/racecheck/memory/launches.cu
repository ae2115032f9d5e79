// How much host memory compute-sanitizer keeps per kernel launch (docs/reliability.md,
// "Racecheck's host memory"): launches one kernel many times and prints the process's resident
// memory (VmRSS) at each quarter of the launches.
//
//   launches KIND LAUNCHES GX GY GZ
//   KIND: plain (no shared memory, one global load and store per thread), shared (a shared-memory
//         exchange between the threads of a block, __syncthreads between) or big (plain with a
//         long unrolled body, a large kernel image); GX x GY x GZ blocks of 128 threads.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#define CHECK(call)                                                                           \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

constexpr int kThreads = 128;

__device__ unsigned flat() {
  const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  return block * blockDim.x + threadIdx.x;
}

__global__ void plain(float* data) {
  const unsigned i = flat();
  data[i] = data[i] * 0.5f + 1.0f;
}

__global__ void shared(float* data) {
  __shared__ float s[kThreads];
  const unsigned i = flat();
  s[threadIdx.x] = data[i];
  __syncthreads();
  data[i] = s[(threadIdx.x + 1) % kThreads] * 0.5f + 1.0f;
}

__global__ void big(float* data) {
  const unsigned i = flat();
  float a = data[i], b = a + 1.0f;
#pragma unroll
  for (int k = 0; k < 4096; ++k) {
    a = fmaf(a, 0.999f, b);
    b = fmaf(b, 1.001f, -a);
  }
  data[i] = a + b;
}

long rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = -1;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      break;
    }
    status.ignore(1 << 16, '\n');
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s plain|shared|big LAUNCHES GX GY GZ\n", argv[0]);
    return 2;
  }
  const std::string kind = argv[1];
  const long launches = std::atol(argv[2]);
  const dim3 grid(static_cast<unsigned>(std::atoi(argv[3])), static_cast<unsigned>(std::atoi(argv[4])),
                  static_cast<unsigned>(std::atoi(argv[5])));
  void (*kernel)(float*) = kind == "plain" ? plain : kind == "shared" ? shared : kind == "big" ? big : nullptr;
  if (kernel == nullptr || launches < 4 || grid.x * grid.y * grid.z == 0) {
    std::fprintf(stderr, "launches: bad arguments\n");
    return 2;
  }
  const std::size_t n = static_cast<std::size_t>(grid.x) * grid.y * grid.z * kThreads;
  float* data = nullptr;
  CHECK(cudaMalloc(&data, n * sizeof(float)));
  CHECK(cudaMemset(data, 0, n * sizeof(float)));
  CHECK(cudaDeviceSynchronize());
  const long start = rss_kb();
  std::printf("%s %ld launches of %ux%ux%u blocks: VmRSS %ld kB at 0", kind.c_str(), launches, grid.x, grid.y,
              grid.z, start);
  long last = start;
  for (long l = 1; l <= launches; ++l) {
    kernel<<<grid, kThreads>>>(data);
    CHECK(cudaGetLastError());
    if (l % (launches / 4) == 0) {
      CHECK(cudaDeviceSynchronize());
      last = rss_kb();
      std::printf(", %ld kB at %ld", last, l);
    }
  }
  std::printf("; %.1f kB per launch\n", static_cast<double>(last - start) / static_cast<double>(launches));
  CHECK(cudaFree(data));
  return 0;
}
