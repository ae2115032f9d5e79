// Diagnostics behind the fused advection kernel (cases/advection/stencil_steps.cuh,
// docs/results/temporal.md): times tile shapes of the fused kernel for T = 2, 3, 4 steps per
// launch on an n^3 FP64 grid with 4 ghost layers (rows padded to 16 cells, owned cells aligned),
// against the one-step kernel and against the same run's ceilings: the copy bandwidth B (R1 =
// B / 16 bytes, the one-step roofline) and the FP64 FMA rate F (F / 27, the cap of any kernel
// evaluating the 27 terms). Every shape's output is compared bit for bit with T one-step
// launches. Not a benchmark: it prints a table and exits.
//
//   usage: probe_steps [n (default 1024)] [repetitions (default 10)]

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
#include "roofs.hpp"
#include "stencil_skewed.cuh"  // launch_stencil_skewed_tiles: other shapes than the case's
#include "stencil_steps.cuh"   // launch_stencil_steps_tiles: the same

namespace adv = cases::advection;

namespace {
constexpr long kHalo = 4;
}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const auto a = adv::coefficients({1.0, 0.7, 0.4}, {0.9, 0.9, 0.9});
  const adv::Coefficients full = adv::kernel_coefficients(a), split = adv::kernel_coefficients(a, true);
  const long pitch = static_cast<long>(cases::padded_pitch(static_cast<std::size_t>(n), kHalo));
  const adv::Box box{kHalo, kHalo, kHalo, n, n, n, pitch, n + 2 * kHalo};
  const long cells = pitch * (n + 2 * kHalo) * (n + 2 * kHalo);
  const long lead = static_cast<long>(cases::lead(kHalo));
  std::vector<double*> buffers(5);  // in, out, two levels between, the reference
  for (double*& b : buffers) {
    CUSH_CUDA_CHECK(cudaMalloc(&b, (lead + cells) * sizeof(double)));
    b += lead;  // owned cells of every row on a 128-byte boundary
  }
  double* in = buffers[0];
  double* out = buffers[1];
  double* reference = buffers[4];
  probe::fill_kernel<<<4096, 256>>>(in, cells, 12345);
  CUSH_CUDA_CHECK(cudaGetLastError());
  unsigned long long* bad = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&bad, sizeof(*bad)));
  double* sink = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&sink, sizeof(double)));

  const double points = static_cast<double>(n) * n * n;
  const double copy_ms = probe::median_ms([&] { probe::copy_kernel<<<4096, 512>>>(in, out, cells); }, reps);
  const double copy_gbs = 16.0 * cells / copy_ms / 1e6;
  double fmas = 0;
  const double fma_ms = probe::median_ms([&] { fmas = cush_bench::launch_fp64_fmas(sink, nullptr); }, reps);
  const double gfmas = fmas / fma_ms / 1e6;
  const double r1 = copy_gbs / 16, f27 = gfmas / 27;
  std::printf("probe_steps: %ld^3 FP64, %ld ghost layers, %d repetitions, median per launch\n", n, kHalo, reps);
  std::printf("copy %.0f GB/s: R1 = %.1f G updates/s; FP64 FMA %.0f G/s: F/27 = %.1f G updates/s\n\n", copy_gbs, r1,
              gfmas, f27);
  std::printf("| kernel | T | ms per launch | G updates/s | x R1 | x F/27 | differing cells |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (const bool factorized : {false, true})
  for (long t = 1; t <= 4; ++t) {
    const adv::Coefficients& c = factorized ? split : full;
    // The reference: t one-step launches on boxes shrinking by a cell a step, in the same form.
    const double* from = in;
    for (long s = 0; s < t; ++s) {
      double* to = s + 1 == t ? reference : buffers[2 + s % 2];
      adv::launch_stencil(from, to, cases::grown(box, t - 1 - s), c, nullptr);
      from = to;
    }
    CUSH_CUDA_CHECK(cudaDeviceSynchronize());
    auto report = [&](const std::string& name, auto launch) {
      CUSH_CUDA_CHECK(cudaMemset(out - lead, 0xff, (lead + cells) * sizeof(double)));  // NaN everywhere
      launch();
      const unsigned long long differing = probe::differing(out, reference, box, bad);
      const double ms = probe::median_ms(launch, reps);
      const double rate = points * static_cast<double>(t) / ms / 1e6;
      std::printf("| %s | %ld | %.3f | %.1f | %.2f | %.2f | %llu |\n", name.c_str(), t, ms, rate, rate / r1, rate / f27,
                  differing);
      std::fflush(stdout);
    };
    report(factorized ? "factorized: launch_stencil_steps (the case's choice)" : "launch_stencil_steps (the case's choice)",
           [&] { adv::launch_stencil_steps(in, out, box, c, static_cast<std::size_t>(t), nullptr); });
    if (factorized) {
      // The factorized form's shapes (registers: 2 R a strip and stage, and 9 weights).
      // "S s": s input slots (3 by default); "threads n": n threads (default X * Y).
      auto split_shapes = [&]<int T>() {
        using adv::Factorized;
        using adv::Lanes;
        using adv::StepsConfig;
        auto run = [&]<class C>(const char* name) {
          report(name, [&] { adv::launch_stencil_steps_tiles<Factorized<C>>(in, out, box, c, nullptr); });
        };
        if constexpr (T == 1) {
          run.template operator()<StepsConfig<64, 4, 4, 1>>("factorized 64x4 R4");
          run.template operator()<StepsConfig<64, 4, 4, 1, 4>>("factorized 64x4 R4 S4");
          run.template operator()<StepsConfig<128, 2, 4, 1, 4>>("factorized 128x2 R4 S4");
          run.template operator()<StepsConfig<64, 2, 8, 1, 4>>("factorized 64x2 R8 S4");
        } else {
          run.template operator()<StepsConfig<32, 4, 4, T>>("factorized 32x4 R4");
          run.template operator()<Lanes<StepsConfig<32, 4, 4, T>>>("factorized 32x4 R4 lanes");
          run.template operator()<StepsConfig<32, 4, 8, T>>("factorized 32x4 R8");
          run.template operator()<Lanes<StepsConfig<32, 4, 8, T>>>("factorized 32x4 R8 lanes");
          run.template operator()<StepsConfig<32, 4, 8, T, 4, 2, 1, 192>>("factorized 32x4 R8 S4 threads 192 min 2");
          run.template operator()<Lanes<StepsConfig<32, 4, 8, T, 4, 2, 1, 192>>>("factorized 32x4 R8 S4 threads 192 min 2 lanes");
          run.template operator()<StepsConfig<64, 4, 8, T, 4, 1, 1, 352>>("factorized 64x4 R8 S4 threads 352");
          run.template operator()<Lanes<StepsConfig<64, 4, 8, T, 4, 1, 1, 352>>>("factorized 64x4 R8 S4 threads 352 lanes");
          run.template operator()<Lanes<StepsConfig<64, 4, 4, T, 4>>>("factorized 64x4 R4 S4 lanes");
          report("factorized skewed 32x4 R4", [&] { adv::launch_stencil_skewed_tiles<Factorized<StepsConfig<32, 4, 4, T>>>(in, out, box, c, nullptr); });
        }
      };
      if (t == 1) split_shapes.template operator()<1>();
      if (t == 2) split_shapes.template operator()<2>();
      if (t == 3) split_shapes.template operator()<3>();
      if (t == 4) split_shapes.template operator()<4>();
      continue;
    }
    if (t == 1) continue;
    // Shapes: X x Y threads, R rows a strip; "min b": at least b blocks an SM (registers capped);
    // "unroll u": the plane loop unrolled u times; "skewed": one barrier a plane.
    auto shapes = [&]<int T>() {
      using adv::Lanes;
      using adv::StepsConfig;
      report("staged 32x4 R4", [&] { adv::launch_stencil_steps_tiles<StepsConfig<32, 4, 4, T>>(in, out, box, c, nullptr); });
      report("staged 32x4 R4 lanes", [&] { adv::launch_stencil_steps_tiles<Lanes<StepsConfig<32, 4, 4, T>>>(in, out, box, c, nullptr); });
      report("staged 64x4 R4", [&] { adv::launch_stencil_steps_tiles<StepsConfig<64, 4, 4, T>>(in, out, box, c, nullptr); });
      report("staged 64x4 R4 lanes", [&] { adv::launch_stencil_steps_tiles<Lanes<StepsConfig<64, 4, 4, T>>>(in, out, box, c, nullptr); });
      report("staged 32x4 R4 S4 threads 192 lanes", [&] { adv::launch_stencil_steps_tiles<Lanes<StepsConfig<32, 4, 4, T, 4, 1, 1, 192>>>(in, out, box, c, nullptr); });
      report("skewed 32x4 R4", [&] { adv::launch_stencil_skewed_tiles<StepsConfig<32, 4, 4, T>>(in, out, box, c, nullptr); });
      report("skewed 32x4 R4 lanes", [&] { adv::launch_stencil_skewed_tiles<Lanes<StepsConfig<32, 4, 4, T>>>(in, out, box, c, nullptr); });
    };
    if (t == 2) shapes.template operator()<2>();
    if (t == 3) shapes.template operator()<3>();
    if (t == 4) shapes.template operator()<4>();
  }
  for (double* b : buffers) CUSH_CUDA_CHECK(cudaFree(b - lead));
  CUSH_CUDA_CHECK(cudaFree(bad));
  CUSH_CUDA_CHECK(cudaFree(sink));
  return 0;
}
