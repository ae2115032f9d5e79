// Case "fft": the largest transforms one GPU, or several, hold, timed (README, "Largest transform").
//
//   cush_fft_largest [--gpus K] [--chunks C] [e ...]     (default: 1 GPU, C = 0, e = 32 33)
//
// For each 2^e: the cush and raw variants on logical devices 0 .. K - 1 (forward, natural orders,
// Options::chunks = C) and, on one GPU, the single cuFFT call, on 2, 4 or 8 GPUs cufftXt; all on
// the same signal, a hash of the index, which a GPU kernel recomputes to check 16 frequencies of
// each result by direct DFT in double precision. Each time is the best of 3 after a warm-up. One
// JSON object per line on stdout (a variant that does not fit says why); progress on stderr.

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
void measure(const char* variant, int e, int gpus, std::size_t chunks, Complex* host, const std::vector<std::size_t>& ks,
             const std::vector<Complex>& want) {
  const std::size_t n = std::size_t{1} << e;
  std::fprintf(stderr, "cush_fft_largest: %s at 2^%d on %d GPUs: allocating\n", variant, e, gpus);
  try {
    V v(n, cases::Devices::first(gpus), fft::Options{0, chunks});
    double best = 1e30;
    fill(host, n);
    for (int r = 0; r < 4; ++r) {
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
    std::printf("{\"variant\": \"%s\", \"log2_n\": %d, \"gpus\": %d, \"chunks\": %zu, \"ms\": %.3f, \"gflops\": %.1f, "
                "\"max_rel_error_16\": %.3e}\n",
                variant, e, gpus, chunks, best * 1e3, fft::flops(n) / best / 1e9, err);
  } catch (const std::exception& ex) {
    std::printf("{\"variant\": \"%s\", \"log2_n\": %d, \"gpus\": %d, \"failed\": \"%s\"}\n", variant, e, gpus, ex.what());
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> exps;
  int gpus = 1;
  std::size_t chunks = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--gpus" || a == "--chunks") && i + 1 < argc) {
      if (a == "--gpus") gpus = std::atoi(argv[++i]);
      else chunks = static_cast<std::size_t>(std::atol(argv[++i]));
      continue;
    }
    const int e = std::atoi(argv[i]);
    if (e < 4 || e > 40) {
      std::fprintf(stderr, "usage: cush_fft_largest [--gpus K] [--chunks C] [e ...] (4 <= e <= 40), not '%s'\n", argv[i]);
      return 2;
    }
    exps.push_back(e);
  }
  if (exps.empty()) exps = {32, 33};
  if (cush::DeviceSet::available() == 0) {
    std::fprintf(stderr, "cush_fft_largest: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
    return 0;
  }
  if (gpus < 1 || gpus > cush::DeviceSet::available()) {
    std::fprintf(stderr, "cush_fft_largest: --gpus %d, but %d GPUs are present\n", gpus, cush::DeviceSet::available());
    return 2;
  }
  for (int e : exps) {
    const std::size_t n = std::size_t{1} << e;
    Complex* host = nullptr;
    CUSH_CUDA_CHECK(cudaMallocHost(&host, n * sizeof(Complex)));
    std::vector<std::size_t> ks = {0, 1, 2, 3, n / 2, n - 1, n / 3, n / 5 + 7};
    for (std::size_t i = 0; ks.size() < 16; ++i) ks.push_back((i * 0x9E3779B97F4A7C15ull) & (n - 1));
    const std::vector<Complex> want = reference_at(n, ks);
    measure<fft::MultiCush>("multi_cush", e, gpus, chunks, host, ks, want);
    if (gpus > 1) measure<fft::MultiCuda>("multi_cuda", e, gpus, chunks, host, ks, want);
    if (gpus == 1) measure<fft::Single>("single", e, gpus, chunks, host, ks, want);
    if (gpus == 2 || gpus == 4 || gpus == 8) measure<fft::Xt>("cufftxt", e, gpus, chunks, host, ks, want);
    CUSH_CUDA_CHECK(cudaFreeHost(host));
  }
  return 0;
}
