#include "cush/error.hpp"
#include "support/kernels.hpp"

namespace cush_test {

namespace {

template <class T, class F>
__global__ void map_kernel(T* x, std::size_t n, std::size_t offset, F f) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    x[i] = f(x[i], offset + i);
}

template <class T, class F>
void map(T* x, std::size_t n, std::size_t offset, F f, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096);
  map_kernel<<<blocks, 256, 0, stream>>>(x, n, offset, f);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

struct Affine {
  float a, b;
  __device__ float operator()(float v, std::size_t) const { return a * v + b; }
};
struct AddIndex {
  __device__ double operator()(double v, std::size_t g) const { return v + static_cast<double>(g); }
};
struct XorIndex {
  __device__ std::uint8_t operator()(std::uint8_t v, std::size_t g) const { return static_cast<std::uint8_t>(v ^ (g & 0xFF)); }
};

}  // namespace

void affine(float* x, std::size_t n, float a, float b, cudaStream_t stream) { map(x, n, 0, Affine{a, b}, stream); }
void add_index(double* x, std::size_t n, std::size_t offset, cudaStream_t stream) { map(x, n, offset, AddIndex{}, stream); }
void xor_index(std::uint8_t* x, std::size_t n, std::size_t offset, cudaStream_t stream) {
  map(x, n, offset, XorIndex{}, stream);
}

}  // namespace cush_test

namespace cush_test {
namespace {
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
}  // namespace

void spin_current(cudaStream_t stream, double ms) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(ms * 1e6));
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void spin(cudaStream_t stream, double ms) {
  // On the stream's own device, whatever device is current (and that one current again after).
  int device = 0, previous = 0;
  CUSH_CUDA_CHECK(cudaStreamGetDevice(stream, &device));
  CUSH_CUDA_CHECK(cudaGetDevice(&previous));
  CUSH_CUDA_CHECK(cudaSetDevice(device));
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(ms * 1e6));
  const cudaError_t launched = cudaGetLastError();
  CUSH_CUDA_CHECK(cudaSetDevice(previous));
  CUSH_CUDA_CHECK(launched);
}
namespace {
__global__ void csr_rows_kernel(const double* x, const std::int64_t* row_ptr, const std::int32_t* cols, const double* w,
                                std::size_t first, std::size_t count, double* y, bool add) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const std::size_t r = first + i;
  double sum = 0;
  for (std::int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += w[k] * x[cols[k]];
  y[r] = add ? y[r] + sum : sum;
}
}  // namespace

void csr_rows(const double* x, const std::int64_t* row_ptr, const std::int32_t* cols, const double* w, std::size_t first,
              std::size_t count, double* y, cudaStream_t stream) {
  if (count == 0) return;
  csr_rows_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(x, row_ptr, cols, w, first, count, y,
                                                                                   false);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void csr_rows_add(const double* x, const std::int64_t* row_ptr, const std::int32_t* cols, const double* w,
                  std::size_t first, std::size_t count, double* y, cudaStream_t stream) {
  if (count == 0) return;
  csr_rows_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(x, row_ptr, cols, w, first, count, y,
                                                                                   true);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cush_test
