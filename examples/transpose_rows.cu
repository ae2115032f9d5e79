// A matrix whose rows a kernel computes, transposed while they are computed: cush::transpose with
// TransposeOptions::produce cuts each GPU's rows into chunks, has the kernel compute chunk c on
// the GPU's stream, and moves chunk c to the GPUs that own its columns of the transpose while
// chunk c + 1 is computed (the pattern of a distributed FFT's row transforms and transposes).
//
// Usage: cush_transpose_rows [rows=8192] [cols=8192] [chunks=4]

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cush/cush.hpp"
#include "cush/transpose.cuh"

namespace {

// Element (r, c) of the matrix, after some arithmetic (the work the transpose overlaps).
__host__ __device__ float element(std::size_t r, std::size_t c) {
  float v = static_cast<float>((r * 7 + c * 13) % 1024) / 1024.0F;
  for (int k = 0; k < 64; ++k) v = fmaf(v, 0.999F, 0.001F);  // fused on host and GPU alike
  return v;
}

// Rows [row0, row0 + rows) of the matrix into `out` (rows of `cols`).
__global__ void compute_rows(float* out, std::size_t row0, std::size_t rows, std::size_t cols) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < rows * cols) out[i] = element(row0 + i / cols, i % cols);
}

struct Same {
  __device__ float operator()(float v, std::size_t, std::size_t) const { return v; }
};

// The rows computed and transposed in `chunks` chunks a GPU; returns the seconds taken.
double run(const cush::Plan<float>& src, cush::Plan<float>& dst, std::size_t rows, std::size_t cols,
           std::size_t chunks) {
  const auto t0 = std::chrono::steady_clock::now();
  cush::TransposeOptions o;
  o.chunks = chunks;
  o.produce = [&](const cush::TransposeChunk& c) {
    const std::size_t n = c.rows * cols;
    compute_rows<<<static_cast<unsigned>((n + 255) / 256), 256, 0, c.stream>>>(static_cast<float*>(c.data), c.row0,
                                                                               c.rows, cols);
    CUSH_CUDA_CHECK(cudaGetLastError());
  };
  cush::transpose(src, dst, rows, cols, Same{}, o);
  dst.wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t rows = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 8192;
    const std::size_t cols = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 8192;
    const std::size_t chunks = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 4;
    if (rows == 0 || cols == 0 || chunks == 0) {
      std::fprintf(stderr, "usage: cush_transpose_rows [rows >= 1] [cols >= 1] [chunks >= 1]\n");
      return 2;
    }
    const cush::DeviceSet gpus = cush::DeviceSet::all();
    // Whole rows on each GPU, whole rows of the transpose too.
    cush::Plan<float> src(gpus, rows * cols, cush::Distribution::uniform().with_granularity(cols));
    cush::Plan<float> dst(gpus, rows * cols, cush::Distribution::uniform().with_granularity(rows));
    run(src, dst, rows, cols, 1);  // warm-up: contexts and modules
    const double whole = run(src, dst, rows, cols, 1);
    const double piped = run(src, dst, rows, cols, chunks);
    std::vector<float> out(rows * cols);
    dst.gather(out.data());
    dst.wait();
    std::size_t wrong = 0;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) wrong += out[c * rows + r] != element(r, c) ? 1 : 0;
    std::printf("cush transpose_rows: %zu x %zu on %zu GPU(s): one chunk %.2f ms, %zu chunks %.2f ms; %s\n", rows, cols,
                gpus.size(), whole * 1e3, chunks, piped * 1e3, wrong == 0 ? "all elements correct" : "WRONG ELEMENTS");
    return wrong == 0 ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_transpose_rows: %s\n", e.what());
    return 1;
  }
}
