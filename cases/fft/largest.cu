// Case "fft": the largest transforms one GPU holds, timed (README, "Largest transform").
//
//   cush_fft_largest [e ...]     (default: 32 33)
//
// For each 2^e: the cush variant on logical device 0 (forward, natural orders) and, where it
// fits, the single cuFFT call; both on the same signal, a hash of the index, which a GPU kernel
// recomputes to check 16 frequencies of each result by direct DFT in double precision. Each time
// is the best of 3 after a warm-up. One JSON object per line on stdout; progress on stderr.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "cush/cush.hpp"
#include "cush/error.hpp"
#include "fft.hpp"

namespace fft = cases::fft;
using fft::Complex;

namespace {

__host__ __device__ inline Complex signal(std::size_t j) {
  std::uint64_t h = (j + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  return Complex{static_cast<float>(h & 0xFFFFFF) / 16777216.0f - 0.5f,
                 static_cast<float>((h >> 24) & 0xFFFFFF) / 16777216.0f - 0.5f};
}

// sums[k] += sum over this thread's j of x_j W_N^(j k[i]), in double.
__global__ void direct_dft(std::size_t n, const std::size_t* ks, int nk, double2* sums) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (int i = 0; i < nk; ++i) {
    double re = 0, im = 0;
    for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < n; j += stride) {
      const Complex x = signal(j);
      const std::size_t m = (j * ks[i]) & (n - 1);
      double s, c;
      sincospi(-2.0 * static_cast<double>(m) / static_cast<double>(n), &s, &c);
      re += x.x * c - x.y * s;
      im += x.x * s + x.y * c;
    }
    atomicAdd(&sums[i].x, re);
    atomicAdd(&sums[i].y, im);
  }
}

std::vector<Complex> reference_at(std::size_t n, const std::vector<std::size_t>& ks) {
  std::size_t* dk = nullptr;
  double2* ds = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&dk, ks.size() * sizeof(std::size_t)));
  CUSH_CUDA_CHECK(cudaMalloc(&ds, ks.size() * sizeof(double2)));
  CUSH_CUDA_CHECK(cudaMemcpy(dk, ks.data(), ks.size() * sizeof(std::size_t), cudaMemcpyHostToDevice));
  CUSH_CUDA_CHECK(cudaMemset(ds, 0, ks.size() * sizeof(double2)));
  direct_dft<<<1056, 256>>>(n, dk, static_cast<int>(ks.size()), ds);
  CUSH_CUDA_CHECK(cudaGetLastError());
  std::vector<double2> s(ks.size());
  CUSH_CUDA_CHECK(cudaMemcpy(s.data(), ds, ks.size() * sizeof(double2), cudaMemcpyDeviceToHost));
  CUSH_CUDA_CHECK(cudaFree(dk));
  CUSH_CUDA_CHECK(cudaFree(ds));
  std::vector<Complex> out;
  for (const double2& v : s) out.push_back(Complex{static_cast<float>(v.x), static_cast<float>(v.y)});
  return out;
}

void fill(Complex* host, std::size_t n) {
  const unsigned threads = std::max(1U, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([=] {
      const std::size_t first = n / threads * t, last = t + 1 == threads ? n : n / threads * (t + 1);
      for (std::size_t j = first; j < last; ++j) host[j] = signal(j);
    });
  for (auto& th : pool) th.join();
}

template <class V>
void measure(const char* variant, int e, Complex* host, const std::vector<std::size_t>& ks,
             const std::vector<Complex>& want) {
  const std::size_t n = std::size_t{1} << e;
  std::fprintf(stderr, "cush_fft_largest: %s at 2^%d: allocating\n", variant, e);
  try {
    V v(n, cases::Devices::first(1));
    double best = 1e30;
    for (int r = 0; r < 4; ++r) {
      fill(host, n);
      v.load(host);
      v.wait();
      const auto t0 = std::chrono::steady_clock::now();
      v.forward();
      v.wait();
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) best = std::min(best, t);
      std::fprintf(stderr, "cush_fft_largest: %s at 2^%d: run %d: %.3f ms\n", variant, e, r, t * 1e3);
    }
    v.store(host);
    v.wait();
    // Error of the 16 checked frequencies, relative to the spectrum's RMS (sqrt(N / 6) for this signal).
    double err = 0;
    for (std::size_t i = 0; i < ks.size(); ++i) {
      const double dx = host[ks[i]].x - want[i].x, dy = host[ks[i]].y - want[i].y;
      err = std::max(err, std::sqrt(dx * dx + dy * dy));
    }
    err /= std::sqrt(static_cast<double>(n) / 6.0);
    std::printf("{\"variant\": \"%s\", \"log2_n\": %d, \"ms\": %.3f, \"gflops\": %.1f, \"max_rel_error_16\": %.3e}\n", variant,
                e, best * 1e3, fft::flops(n) / best / 1e9, err);
  } catch (const std::exception& ex) {
    std::printf("{\"variant\": \"%s\", \"log2_n\": %d, \"failed\": \"%s\"}\n", variant, e, ex.what());
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> exps;
  for (int i = 1; i < argc; ++i) exps.push_back(std::atoi(argv[i]));
  if (exps.empty()) exps = {32, 33};
  if (cush::DeviceSet::available() == 0) {
    std::fprintf(stderr, "cush_fft_largest: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
    return 0;
  }
  for (int e : exps) {
    const std::size_t n = std::size_t{1} << e;
    Complex* host = nullptr;
    CUSH_CUDA_CHECK(cudaMallocHost(&host, n * sizeof(Complex)));
    std::vector<std::size_t> ks = {0, 1, 2, 3, n / 2, n - 1, n / 3, n / 5 + 7};
    for (std::size_t i = 0; ks.size() < 16; ++i) ks.push_back((i * 0x9E3779B97F4A7C15ull) & (n - 1));
    const std::vector<Complex> want = reference_at(n, ks);
    measure<fft::MultiCush>("multi_cush", e, host, ks, want);
    measure<fft::Single>("single", e, host, ks, want);
    CUSH_CUDA_CHECK(cudaFreeHost(host));
  }
  return 0;
}
