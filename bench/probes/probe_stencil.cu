// Diagnostics behind the advection stencil kernel (docs/results/advection.md): times tile shapes
// of cases/advection/stencil.cuh, and the first kernel the case had (registers, one FMA chain of
// 27 per point), on an n^3 FP64 grid with one ghost layer, in two layouts: rows of nx + 2 cells
// (what the case stored first) and rows padded to 16 cells with the first owned cell of every
// row on a 128-byte boundary (what it stores now). Every variant's output is compared bit for bit with the first kernel's. A
// plain copy of the same cells gives the ceiling. Not a benchmark: it prints a table and exits.
//
//   usage: probe_stencil [n (default 1024)] [repetitions (default 10)]

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "advection.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"
#include "probe_support.cuh"
#include "stencil.cuh"  // launch_stencil_tiles: other shapes than the case's

namespace adv = cases::advection;

namespace {

// The case's first kernel: one thread per (x, y) column, 16 planes a block, 27 values in
// registers, one dependent chain of 27 FMAs per point.
__global__ void first_kernel(const double* __restrict__ in, double* __restrict__ out, adv::Box box, adv::Coefficients c) {
  const long x = box.x0 + blockIdx.x * 32L + threadIdx.x;
  const long y = box.y0 + blockIdx.y * 4L + threadIdx.y;
  const long z_begin = box.z0 + blockIdx.z * 16L;
  const long z_end = z_begin + 16 < box.z0 + box.nz ? z_begin + 16 : box.z0 + box.nz;
  if (x >= box.x0 + box.nx || y >= box.y0 + box.ny || z_begin >= z_end) return;
  const long sy = box.pitch_x, sz = box.pitch_x * box.pitch_y;
  auto load = [&](long z, double v[9]) {
    const double* p = in + (z * sz + y * sy + x);
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) v[i + 3 * j] = __ldg(p + (j - 1) * sy + (i - 1));
  };
  double below[9], here[9], above[9];
  load(z_begin - 1, below);
  load(z_begin, here);
  for (long z = z_begin; z < z_end; ++z) {
    load(z + 1, above);
    double sum = 0;
    for (int q = 0; q < 9; ++q) sum = fma(c.a[q], below[q], sum);
    for (int q = 0; q < 9; ++q) sum = fma(c.a[9 + q], here[q], sum);
    for (int q = 0; q < 9; ++q) sum = fma(c.a[18 + q], above[q], sum);
    out[z * sz + y * sy + x] = sum;
    for (int q = 0; q < 9; ++q) {
      below[q] = here[q];
      here[q] = above[q];
    }
  }
}

struct Layout {
  adv::Box box;     // the owned cells and the pitches
  long cells = 0;   // stored cells
  long front = 0;   // cells before the stored array (alignment)
  double* in = nullptr;
  double* out = nullptr;
};

Layout make_layout(long n, bool padded) {
  Layout l;
  const long px = padded ? (n + 2 + 15) / 16 * 16 : n + 2;
  l.box = adv::Box{1, 1, 1, n, n, n, px, n + 2};
  l.cells = px * (n + 2) * (n + 2);
  l.front = padded ? 15 : 0;  // cell x = 1 of row 0 on a 128-byte boundary (cudaMalloc aligns to 256)
  CUSH_CUDA_CHECK(cudaMalloc(&l.in, (l.cells + 16) * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&l.out, (l.cells + 16) * sizeof(double)));
  l.in += l.front;
  l.out += l.front;
  return l;
}

void free_layout(Layout& l) {
  CUSH_CUDA_CHECK(cudaFree(l.in - l.front));
  CUSH_CUDA_CHECK(cudaFree(l.out - l.front));
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const adv::Coefficients c = adv::kernel_coefficients(adv::coefficients({1.0, 0.7, 0.4}, {0.9, 0.9, 0.9}));
  Layout plain = make_layout(n, false), padded = make_layout(n, true);
  probe::fill_kernel<<<4096, 256>>>(plain.in, plain.cells, 12345);
  CUSH_CUDA_CHECK(cudaGetLastError());
  cudaMemcpy3DParms p{};  // the same values, cell for cell, into the padded layout
  p.srcPtr = make_cudaPitchedPtr(plain.in, plain.box.pitch_x * sizeof(double), plain.box.pitch_x, n + 2);
  p.dstPtr = make_cudaPitchedPtr(padded.in, padded.box.pitch_x * sizeof(double), padded.box.pitch_x, n + 2);
  p.extent = make_cudaExtent((n + 2) * sizeof(double), n + 2, n + 2);
  p.kind = cudaMemcpyDeviceToDevice;
  CUSH_CUDA_CHECK(cudaMemcpy3D(&p));
  double* reference = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&reference, plain.cells * sizeof(double)));
  unsigned long long* bad = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&bad, sizeof(*bad)));

  const double points = static_cast<double>(n) * n * n;
  std::printf("probe_stencil: %ld^3 FP64, %d repetitions, median per launch\n\n", n, reps);
  std::printf("| kernel | layout | ms | G updates/s | GB/s (16 B/update) | differing cells |\n|---|---|---:|---:|---:|---:|\n");
  // `skip` cells at the start of every row are left out (the launch updates the rest).
  auto report = [&](const std::string& name, Layout& l, auto launch, long skip = 0) {
    CUSH_CUDA_CHECK(cudaMemset(l.out - l.front, 0xff, (l.cells + 16) * sizeof(double)));  // NaN everywhere
    launch();
    CUSH_CUDA_CHECK(cudaMemset(bad, 0, sizeof(*bad)));
    adv::Box mine = l.box, theirs = plain.box;
    mine.x0 += skip;
    theirs.x0 += skip;
    mine.nx -= skip;
    theirs.nx -= skip;
    probe::diff_kernel<<<4096, 256>>>(l.out, mine, reference, theirs, bad);
    CUSH_CUDA_CHECK(cudaGetLastError());
    unsigned long long differing = 0;
    CUSH_CUDA_CHECK(cudaMemcpy(&differing, bad, sizeof(differing), cudaMemcpyDeviceToHost));
    const double ms = probe::median_ms(launch, reps);
    std::printf("| %s | %s | %.3f | %.1f | %.0f | %llu |\n", name.c_str(), l.front ? "padded" : "plain", ms,
                points / ms / 1e6, 16 * points / ms / 1e6, differing);
    std::fflush(stdout);
  };
  const adv::Box b = plain.box;
  first_kernel<<<dim3((n + 31) / 32, (n + 3) / 4, (n + 15) / 16), dim3(32, 4)>>>(plain.in, reference, b, c);
  CUSH_CUDA_CHECK(cudaGetLastError());
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());

  for (Layout* l : {&plain, &padded}) {
    const adv::Box lb = l->box;
    const long cells = l->cells;
    const double copy_ms = probe::median_ms([&] { probe::copy_kernel<<<4096, 512>>>(l->in, l->out, cells); }, reps);
    std::printf("| copy (all stored cells) | %s | %.3f | - | %.0f | - |\n", l->front ? "padded" : "plain", copy_ms,
                16.0 * cells / copy_ms / 1e6);
    report("first (registers, 27-chain)", *l, [&] {
      first_kernel<<<dim3((n + 31) / 32, (n + 3) / 4, (n + 15) / 16), dim3(32, 4)>>>(l->in, l->out, lb, c);
    });
    report("tiles 32x4 R4 S4", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<32, 4, 4, 4>>(l->in, l->out, lb, c, nullptr); });
    report("launch_stencil (the case's choice)", *l, [&] { adv::launch_stencil(l->in, l->out, lb, c, nullptr); });
    if (l == &plain) continue;  // the shapes below on aligned rows only
    adv::Box part = lb;  // a box whose rows start one cell past the boundary: tiles start before it
    part.x0 += 1;
    part.nx -= 1;
    report("launch_stencil, box from x = 2", *l, [&] { adv::launch_stencil(l->in, l->out, part, c, nullptr); }, 1);
    report("tiles 64x4 R4 S3", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<64, 4, 4, 3>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 32x8 R4 S3", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<32, 8, 4, 3>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 64x4 R4 S4", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<64, 4, 4, 4>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 64x4 R2 S4", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<64, 4, 2, 4>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 64x8 R4 S3", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<64, 8, 4, 3>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 64x2 R8 S3", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<64, 2, 8, 3>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 128x2 R4 S3", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<128, 2, 4, 3>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 128x2 R4 S4", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<128, 2, 4, 4>>(l->in, l->out, lb, c, nullptr); });
    report("tiles 128x4 R2 S3", *l, [&] { adv::launch_stencil_tiles<adv::StencilConfig<128, 4, 2, 3>>(l->in, l->out, lb, c, nullptr); });
  }
  CUSH_CUDA_CHECK(cudaFree(reference));
  CUSH_CUDA_CHECK(cudaFree(bad));
  free_layout(plain);
  free_layout(padded);
  return 0;
}
