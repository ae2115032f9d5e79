// karst_solvers: the measurement behind the case's choice of tridiagonal solver (README.md,
// "Solver"). For K members of N columns of M rock nodes (and K water systems of N nodes) it times
// one step of the rock and of the water with:
//   - the case's kernels (launch_forward; heat minus solute leaves the rock's share),
//   - a thread-per-column Thomas with separate elimination and substitution sweeps,
//   - cuSPARSE gtsvInterleavedBatch (algorithms 0 = Thomas, 1 = LU with pivoting) and
//     gtsv2StridedBatch (cyclic/parallel cyclic reduction) on the same systems,
// beside a device-to-device copy of the rock (one read and one write: the floor of any solver
// that keeps the rock in GPU memory). cuSPARSE is timed on the solve alone, without rebuilding
// its three coefficient arrays every step: its best case.
//
// Usage: karst_solvers [K N M]   (default 512 1024 128)

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "ensemble.hpp"
#include "kernels.hpp"

namespace {

namespace karst = cases::karst;

void check_sparse(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cusparseGetErrorString(s));
}
#define SPARSE(call) check_sparse((call), #call)

// Milliseconds per call of f, the mean of `reps` after one warm-up.
double time_ms(const std::function<void()>& f, int reps) {
  f();
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CUSH_CUDA_CHECK(cudaEventCreate(&a));
  CUSH_CUDA_CHECK(cudaEventCreate(&b));
  CUSH_CUDA_CHECK(cudaEventRecord(a));
  for (int r = 0; r < reps; ++r) f();
  CUSH_CUDA_CHECK(cudaEventRecord(b));
  CUSH_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CUSH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  CUSH_CUDA_CHECK(cudaEventDestroy(a));
  CUSH_CUDA_CHECK(cudaEventDestroy(b));
  return ms / reps;
}

// Thomas per column in two sweeps (rock layout of the case: member k's row i is N contiguous
// doubles), with the factors of the interior row (Fo = 0.1) computed per thread.
__global__ void two_sweeps(double* rock, std::size_t count, int n, int m) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= n) return;
  const double fo = 0.1;
  for (std::size_t k = blockIdx.y; k < count; k += gridDim.y) {
    double* y = rock + k * m * n + j;
    double cp = 0.0, d = 0.0;
    for (int i = 0; i < m; ++i) {
      const double inv = 1.0 / (1.0 + 2.0 * fo + fo * cp);
      d = (y[static_cast<std::size_t>(i) * n] + fo * d) * inv;
      y[static_cast<std::size_t>(i) * n] = d;
      cp = -fo * inv;
    }
    double x = 0.0;
    for (int i = m - 1; i >= 0; --i) {
      const double inv = 1.0 / (1.0 + 2.0 * fo);  // stands in for the stored c'_i (one load in the case)
      x = y[static_cast<std::size_t>(i) * n] + fo * inv * x;
      y[static_cast<std::size_t>(i) * n] = x;
    }
  }
}

__global__ void bands(double* dl, double* d, double* du, std::size_t size, double fo) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < size;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dl[i] = -fo;
    d[i] = 1.0 + 2.0 * fo;
    du[i] = -fo;
  }
}

struct Buffers {
  std::vector<void*> all;
  double* get(std::size_t count) {
    void* p = nullptr;
    CUSH_CUDA_CHECK(cudaMalloc(&p, count * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMemset(p, 0, count * sizeof(double)));
    all.push_back(p);
    return static_cast<double*>(p);
  }
  ~Buffers() {
    for (void* p : all) cudaFree(p);
  }
};

}  // namespace

int main(int argc, char** argv) try {
  const std::size_t members = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
  const std::size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  const std::size_t m = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 128;
  const std::size_t cells = members * n * m;
  std::printf("karst_solvers: K = %zu members, N = %zu, M = %zu (rock %.1f MiB)\n", members, n, m,
              static_cast<double>(cells * sizeof(double)) / (1 << 20));
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  const int reps = 20;
  const std::size_t steps = 200;

  // The case's kernels: a run of `steps` steps, heat (rock + water) and solute (water alone).
  karst::Forcing f;
  for (std::size_t s = 0; s < steps; ++s) {
    f.dt.push_back(0.5 / static_cast<double>(n));
    f.v.push_back(1.0);
    f.inlet.push_back(1.0 + (s < 20 ? 0.3 : 0.0));
  }
  const std::vector<karst::Groups> groups(members, karst::Groups{2000.0, 10.0, 4.5, 2.235, 0.0});
  const karst::Grid grid{n, m, 0.05};
  double per_step[2] = {0, 0};
  for (int model = 0; model < 2; ++model) {
    karst::Single v(karst::Setup{model == 0 ? karst::Model::heat : karst::Model::solute, grid}, cases::Devices::first(1));
    v.run(f, groups);
    CUSH_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    v.run(f, groups);
    per_step[model] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps;
  }
  std::printf("%-58s %10s\n", "solver (one step)", "ms");
  std::printf("%-58s %10.4f\n", "case: heat step (rock passes + water, wall clock / steps)", per_step[0]);
  std::printf("%-58s %10.4f\n", "case: solute step (water alone)", per_step[1]);

  Buffers buf;
  double* rock = buf.get(cells);
  double* copy = buf.get(cells);
  const double copy_ms = time_ms([&] { CUSH_CUDA_CHECK(cudaMemcpyAsync(copy, rock, cells * sizeof(double), cudaMemcpyDeviceToDevice)); }, reps);
  std::printf("%-58s %10.4f   (%.0f GB/s)\n", "rock copy, device to device (floor: one read + one write)", copy_ms,
              2.0 * static_cast<double>(cells * sizeof(double)) / copy_ms / 1e6);
  const dim3 grid_dims(static_cast<unsigned>((n + 127) / 128), static_cast<unsigned>(std::min<std::size_t>(members, 65535)));
  std::printf("%-58s %10.4f\n", "rock: thread per column, two sweeps",
              time_ms([&] { two_sweeps<<<grid_dims, 128>>>(rock, members, static_cast<int>(n), static_cast<int>(m)); }, reps));

  cusparseHandle_t h = nullptr;
  SPARSE(cusparseCreate(&h));
  double* dl = buf.get(cells);
  double* d = buf.get(cells);
  double* du = buf.get(cells);
  bands<<<1024, 256>>>(dl, d, du, cells, 0.1);
  CUSH_CUDA_CHECK(cudaGetLastError());
  for (int algo : {0, 1}) {
    std::size_t bytes = 0;
    const int batch = static_cast<int>(members * n);
    SPARSE(cusparseDgtsvInterleavedBatch_bufferSizeExt(h, algo, static_cast<int>(m), dl, d, du, rock, batch, &bytes));
    void* work = buf.get(bytes / sizeof(double) + 1);
    const double ms = time_ms([&] { SPARSE(cusparseDgtsvInterleavedBatch(h, algo, static_cast<int>(m), dl, d, du, rock, batch, work)); }, reps);
    std::printf("%-58s %10.4f\n", (std::string("rock: cuSPARSE gtsvInterleavedBatch, algo ") + std::to_string(algo)).c_str(), ms);
  }
  {
    std::size_t bytes = 0;
    const int batch = static_cast<int>(members * n), len = static_cast<int>(m);
    SPARSE(cusparseDgtsv2StridedBatch_bufferSizeExt(h, len, dl, d, du, rock, batch, len, &bytes));
    void* work = buf.get(bytes / sizeof(double) + 1);
    std::printf("%-58s %10.4f\n", "rock: cuSPARSE gtsv2StridedBatch",
                time_ms([&] { SPARSE(cusparseDgtsv2StridedBatch(h, len, dl, d, du, rock, batch, len, work)); }, reps));
  }
  {
    std::size_t bytes = 0;
    const int batch = static_cast<int>(members), len = static_cast<int>(n);
    double* water = buf.get(members * n);
    SPARSE(cusparseDgtsv2StridedBatch_bufferSizeExt(h, len, dl, d, du, water, batch, len, &bytes));
    void* work = buf.get(bytes / sizeof(double) + 1);
    std::printf("%-58s %10.4f\n", "water: cuSPARSE gtsv2StridedBatch",
                time_ms([&] { SPARSE(cusparseDgtsv2StridedBatch(h, len, dl, d, du, water, batch, len, work)); }, reps));
    SPARSE(cusparseDgtsvInterleavedBatch_bufferSizeExt(h, 0, len, dl, d, du, water, batch, &bytes));
    void* work2 = buf.get(bytes / sizeof(double) + 1);
    std::printf("%-58s %10.4f\n", "water: cuSPARSE gtsvInterleavedBatch, algo 0",
                time_ms([&] { SPARSE(cusparseDgtsvInterleavedBatch(h, 0, len, dl, d, du, water, batch, work2)); }, reps));
  }
  SPARSE(cusparseDestroy(h));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "karst_solvers: %s\n", e.what());
  return 1;
}
