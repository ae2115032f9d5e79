// Diagnostics behind the wave case's kernels (cases/wave/wave_steps.cuh, cases/wave/README.md):
// times the streaming kernel's shapes for every order and T = 1 .. 4 steps per launch on an n^3
// FP64 grid (8 ghost layers, rows padded to 16 cells, owned cells aligned), against the column
// kernel (kernels.cu's one-step kernel, and its variant with the z neighbours in registers) and the same run's copy bandwidth B (cudaMemcpyAsync, as
// the roof/copy row makes it; R1w = B / 24 bytes, the one-step roofline of a leapfrog reading two
// levels and writing one). Every shape's levels n + T - 1 and n + T are compared bit for bit with
// T one-step launches of the column kernel. Prints each kernel's registers and spilled bytes.
// Also the skewed (wavefront) tiling of wave_skewed_variant.cuh, which computes no cell twice.
// Not a benchmark: it prints a table and exits.
//
//   usage: probe_wave [n (default 1024)] [repetitions (default 10)] [only: order:text]
//
// With `only` (say 8:ring) it times only the kernels of that order whose name contains the text,
// or one of texts split by '|' (for a profiler: one kernel, few launches).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "coefficients.hpp"
#include "cush/error.hpp"
#include "kernels.hpp"
#include "probe_support.cuh"
#include "wave_staged.cuh"  // launch_wave_staged: planes staged in shared memory by cp.async
#include "wave_staged_variants.cuh"  // the staged kernel's copy loop and halo reads varied
#include "wave_skewed_variant.cuh"  // the skewed (wavefront) tiling: no cell computed twice
#include "wave_steps.cuh"  // launch_wave_steps_tiles: other shapes than the case's

namespace wave = cases::wave;

namespace {
constexpr long kHalo = 8;
}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const std::string only = argc > 3 ? argv[3] : "";
  const int only_order = only.empty() ? 0 : std::atoi(only.c_str());
  const std::string only_text = only.find(':') == std::string::npos ? "" : only.substr(only.find(':') + 1);
  const long pitch = static_cast<long>(cases::padded_pitch(static_cast<std::size_t>(n), kHalo));
  const wave::Box box{kHalo, kHalo, kHalo, n, n, n, pitch, n + 2 * kHalo};
  const long cells = pitch * (n + 2 * kHalo) * (n + 2 * kHalo);
  const long lead = static_cast<long>(cases::lead(kHalo));
  // u^{n-1}, u^n; the fused launch's two outputs; the reference's two levels.
  std::vector<double*> buffers(6);
  for (double*& b : buffers) {
    CUSH_CUDA_CHECK(cudaMalloc(&b, (lead + cells) * sizeof(double)));
    b += lead;  // owned cells of every row on a 128-byte boundary
  }
  probe::fill_kernel<<<4096, 256>>>(buffers[0], cells, 12345);
  probe::fill_kernel<<<4096, 256>>>(buffers[1], cells, 54321);
  CUSH_CUDA_CHECK(cudaGetLastError());
  unsigned long long* bad = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&bad, sizeof(*bad)));

  const double points = static_cast<double>(n) * n * n;
  // The copy as bench/roofs.cu's roof/copy row makes it: cudaMemcpyAsync of up to 2 GiB.
  const std::size_t copy_bytes = std::min<std::size_t>(cells * sizeof(double), std::size_t{2048} << 20);
  const double copy_ms = probe::median_ms(
      [&] { CUSH_CUDA_CHECK(cudaMemcpyAsync(buffers[2], buffers[0], copy_bytes, cudaMemcpyDeviceToDevice)); }, reps);
  const double copy_gbs = 2.0 * static_cast<double>(copy_bytes) / copy_ms / 1e6;
  const double r1w = copy_gbs / 24;
  std::printf("probe_wave: %ld^3 FP64, %ld ghost layers, %d repetitions, median per launch\n", n, kHalo, reps);
  std::printf("copy %.0f GB/s: R1w = %.1f G updates/s\n\n", copy_gbs, r1w);
  // The periodic ghost fill of the single-GPU reference (h = radius layers, padded_grid.hpp): the
  // general kernel against the passes, same cells (padding aside), ghost cells x 16 bytes a time.
  if (only.empty() || only_text == "ghosts") {
    std::printf("| ghost layers | general kernel, ms | passes, ms | ghost GB/s (general / passes) | differing cells |\n"
                "|---:|---:|---:|---:|---:|\n");
    for (long h : {1L, 4L}) {
      const long hp = static_cast<long>(cases::padded_pitch(static_cast<std::size_t>(n), static_cast<std::size_t>(h)));
      const long hcells = hp * (n + 2 * h) * (n + 2 * h);
      double* a = buffers[2] - lead + cases::lead(static_cast<std::size_t>(h));
      double* b = buffers[3] - lead + cases::lead(static_cast<std::size_t>(h));
      probe::fill_kernel<<<4096, 256>>>(a, hcells, 777);
      probe::fill_kernel<<<4096, 256>>>(b, hcells, 777);
      CUSH_CUDA_CHECK(cudaGetLastError());
      const auto un = static_cast<std::size_t>(n), uh = static_cast<std::size_t>(h);
      const double general = probe::median_ms([&] { cases::launch_periodic_halo_general(a, un, un, un, nullptr, uh); }, reps);
      const double passes = probe::median_ms([&] { cases::launch_periodic_halo(b, un, un, un, nullptr, uh); }, reps);
      const wave::Box all{0, 0, 0, n + 2 * h, n + 2 * h, n + 2 * h, hp, n + 2 * h};
      const double ghosts = static_cast<double>(n + 2 * h) * (n + 2 * h) * (n + 2 * h) - points;
      std::printf("| %ld | %.3f | %.3f | %.0f / %.0f | %llu |\n", h, general, passes, ghosts * 16 / general / 1e6,
                  ghosts * 16 / passes / 1e6, probe::differing(a, b, all, bad));
    }
    std::printf("\n");
  }
  std::printf("| order | kernel | T | regs | spilled B | ms per launch | G updates/s | x R1w | differing cells |\n"
              "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int order : wave::kOrders) {
    if (only_order != 0 && order != only_order) continue;
    const wave::Leapfrog l = wave::leapfrog(order, 0.9 * wave::courant_limit(order));
    for (long t = 1; t <= 4 && t * l.radius <= kHalo; ++t) {
      // The reference: t column-kernel steps in place, on boxes shrinking by a radius a step.
      CUSH_CUDA_CHECK(cudaMemcpy(buffers[4], buffers[0], cells * sizeof(double), cudaMemcpyDeviceToDevice));
      CUSH_CUDA_CHECK(cudaMemcpy(buffers[5], buffers[1], cells * sizeof(double), cudaMemcpyDeviceToDevice));
      double* older = buffers[4];
      double* current = buffers[5];
      for (long s = 0; s < t; ++s) {
        wave::launch_column_step(older, current, older, cases::grown(box, (t - 1 - s) * l.radius), l, nullptr);
        std::swap(older, current);
      }
      CUSH_CUDA_CHECK(cudaDeviceSynchronize());
      auto report = [&](const std::string& name, const void* kernel, auto launch, auto... prepare) {
        if (!probe::matches(name, only_text)) return;
        cudaFuncAttributes attr{};
        if (kernel != nullptr) CUSH_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
        for (int i : {2, 3}) CUSH_CUDA_CHECK(cudaMemset(buffers[i] - lead, 0xff, (lead + cells) * sizeof(double)));
        (prepare(), ...);  // what the checked launch needs beyond the inputs
        launch();
        unsigned long long differing = 0;
        for (const auto& [got, want] : {std::pair{buffers[3], current}, std::pair{buffers[2], older}}) {
          if (t == 1 && got == buffers[2]) continue;  // one step has no second output
          differing += probe::differing(got, want, box, bad);
        }
        const double ms = probe::median_ms(launch, reps);
        const double rate = points * static_cast<double>(t) / ms / 1e6;
        std::printf("| %d | %s | %ld | %d | %zu | %.3f | %.1f | %.2f | %llu |\n", order, name.c_str(), t, attr.numRegs,
                    attr.localSizeBytes, ms, rate, rate / r1w, differing);
        std::fflush(stdout);
      };
      const wave::WaveLevels lv{buffers[0], buffers[1], t == 1 ? nullptr : buffers[2], buffers[3]};
      if (t == 1)
        report("column (one-step)", nullptr, [&] { wave::launch_column_step(buffers[0], buffers[1], buffers[3], box, l, nullptr); });
      if (t == 1)
        report("column, z in registers (one-step)", nullptr,
               [&] { wave::launch_queue_step(buffers[0], buffers[1], buffers[3], box, l, nullptr); });
      if (t <= static_cast<long>(wave::max_fused_steps(order)))
        report("launch_steps (the case's choice)", nullptr, [&] { wave::launch_steps(lv, box, l, static_cast<std::size_t>(t), nullptr); });
      // Shapes: W x TY threads, NY rows each.
      auto shape = [&]<int R, int T, int W, int TY, int NY, int U = 1, int B = 1, bool Ring = false>() {
        if (R != l.radius || T != t) return;
        using C = wave::WaveStepsConfig<R, T, W, TY, NY, B, U, Ring>;
        report("streaming " + std::to_string(W) + "x" + std::to_string(TY) + " NY" + std::to_string(NY) +
                   (U > 1 ? " unroll " + std::to_string(U) : "") + (B > 1 ? " min " + std::to_string(B) + " blocks" : "") +
                   (Ring ? " ring" : ""),
               reinterpret_cast<const void*>(wave::wave_steps_kernel<C>),
               [&] { wave::launch_wave_steps_tiles<C>(lv, box, l, nullptr); });
      };
      // The skewed tiling (wave_skewed_variant.cuh): W x TY threads of NY rows, storing
      // (W - (T + 1) R) x (TY NY - (T + 1) R) columns, each cell computed once.
      auto skewed = [&]<int R, int T, int W, int TY, int NY, int Every = 1, int B = 1, bool ZFirst = false, int Exchange = 2>(
                        long want_run = 0) {
        if (R != l.radius || T != t) return;
        using C = probe::SkewedConfig<R, T, W, TY, NY, Every, B, ZFirst, Exchange>;
        const std::string name = "skewed " + std::to_string(W) + "x" + std::to_string(TY) + " NY" + std::to_string(NY) +
                                 " stores " + std::to_string(C::kX) + "x" + std::to_string(C::kY) + " flag every " +
                                 std::to_string(Every) + (B > 1 ? " min " + std::to_string(B) + " blocks" : "") +
                                 (ZFirst ? " z first" : "") +
                                 (Exchange == 1 ? " no waits (wrong)" : Exchange == 0 ? " no exchange (wrong)" : "") + (want_run > 0 ? " run " + std::to_string(want_run) : "");
        if (!probe::matches(name, only_text)) return;
        long run = 0;
        probe::SkewedScratch st = probe::make_skewed_scratch<C>(box, run, want_run);
        report(name, reinterpret_cast<const void*>(probe::skewed_kernel<C>),
               [&] { probe::launch_skewed<C>(lv, box, l, run, st, nullptr); });
        probe::free_skewed_scratch(st);
      };
      skewed.template operator()<1, 2, 64, 8, 4>();
      skewed.template operator()<1, 2, 64, 8, 4, 4>();
      skewed.template operator()<1, 2, 64, 8, 4, 16>();
      for (long want : {32L, 64L, 256L, 1024L}) skewed.template operator()<1, 2, 64, 8, 4>(want);  // z runs
      skewed.template operator()<1, 2, 64, 8, 4, 1, 1, true>();
      skewed.template operator()<1, 2, 64, 8, 4, 1, 1, true>(64);
      skewed.template operator()<1, 2, 64, 8, 4, 1, 1, true, 1>();
      skewed.template operator()<1, 2, 64, 8, 4, 1, 1, true, 0>();
      skewed.template operator()<1, 4, 64, 8, 4, 1, 1, true, 1>();
      skewed.template operator()<1, 4, 64, 8, 4, 1, 1, true, 0>();
      skewed.template operator()<1, 2, 64, 4, 4, 1, 2>();  // 256 threads, two blocks an SM
      skewed.template operator()<1, 2, 64, 4, 4, 1, 2, true>();
      skewed.template operator()<1, 2, 32, 8, 4, 1, 2, true>();
      skewed.template operator()<1, 4, 64, 4, 4, 1, 2, true>();
      skewed.template operator()<1, 3, 64, 8, 4, 4>();
      skewed.template operator()<1, 4, 64, 8, 4>();
      skewed.template operator()<1, 4, 64, 8, 4, 4>();
      skewed.template operator()<1, 4, 64, 8, 4, 16>();
      skewed.template operator()<1, 4, 64, 6, 4, 4>();  // 384 threads: 168 registers a thread
      skewed.template operator()<2, 2, 64, 8, 4, 4>();
      // One step with the planes staged by cp.async, D planes in flight, z runs of `run` planes (0:
      // the launcher's choice).
      auto staged = [&]<int R, int W, int TY, int NY, int D>(long run, bool in_place = false) {
        if (R != l.radius || t != 1) return;
        using C = wave::WaveStagedConfig<R, W, TY, NY, D>;
        const std::string name = "staged " + std::to_string(W) + "x" + std::to_string(TY) + " NY" + std::to_string(NY) +
                                 " D" + std::to_string(D) + (run > 0 ? " run " + std::to_string(run) : "");
        if (!in_place) {
          report(name, reinterpret_cast<const void*>(wave::wave_staged_kernel<C>),
                 [&] { wave::launch_wave_staged<C>(buffers[0], buffers[1], buffers[3], box, l, nullptr, run); });
          return;
        }
        // As the case steps: over the older level, here a copy of it in buffers[3] (the output
        // checked). The timed launches repeat the step in place: the cells alternate between
        // two values, as u^{n-1} and its update.
        report(name + " in place", reinterpret_cast<const void*>(wave::wave_staged_kernel<C>),
               [&] { wave::launch_wave_staged<C>(buffers[3], buffers[1], buffers[3], box, l, nullptr, run); },
               [&] {
                 CUSH_CUDA_CHECK(cudaMemcpy(buffers[3] - lead, buffers[0] - lead, (lead + cells) * sizeof(double),
                                            cudaMemcpyDeviceToDevice));
               });
      };
      // The staged kernel's variants (wave_staged_variants.cuh): map 1 the copies a row a warp;
      // skip 1 and 2 leave out the halo's rows, then its columns too (wrong results: timing only).
      auto variant = [&]<int R, int W, int TY, int NY, int D, int Mapping, int Skip, int MinBlocks = 1>() {
        if (R != l.radius || t != 1) return;
        using C = wave::WaveStagedConfig<R, W, TY, NY, D>;
        const auto kernel = probe::staged_variant_kernel<C, Mapping, Skip, MinBlocks>;
        int blocks = 0;
        CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(C::kSharedBytes)));
        CUSH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
        CUSH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, C::kThreads, C::kSharedBytes));
        report("variant " + std::to_string(W) + "x" + std::to_string(TY) + " NY" + std::to_string(NY) + " D" +
                   std::to_string(D) + " map " + std::to_string(Mapping) + " skip " + std::to_string(Skip) + ", " +
                   std::to_string(blocks) + " blocks an SM",
               reinterpret_cast<const void*>(kernel),
               [&] { probe::launch_staged_variant<C, Mapping, Skip, MinBlocks>(buffers[0], buffers[1], buffers[3], box, l, nullptr); });
      };
      // The staged kernel with its rows moved by cp.async.bulk (wave_staged_variants.cuh), each
      // shape alternating with the case's kernel three times (the GPU's speed drifts in a call).
      auto bulk = [&]<int R, int W, int TY, int NY, int D>() {
        if (R != l.radius || t != 1) return;
        using C = wave::WaveStagedConfig<R, W, TY, NY, D>;
        report("bulk " + std::to_string(W) + "x" + std::to_string(TY) + " NY" + std::to_string(NY) + " D" + std::to_string(D),
               reinterpret_cast<const void*>(probe::staged_bulk_kernel<C>),
               [&] { probe::launch_staged_bulk<C>(buffers[0], buffers[1], buffers[3], box, l, nullptr); });
      };
      bulk.template operator()<4, 64, 8, 3, 3>();
      bulk.template operator()<4, 64, 8, 3, 2>();
      bulk.template operator()<2, 64, 8, 4, 3>();
      bulk.template operator()<3, 64, 8, 4, 3>();
      bulk.template operator()<3, 64, 8, 3, 3>();
      bulk.template operator()<4, 64, 8, 4, 2>();  // 64 x 32: registers the copy loop no longer takes
      bulk.template operator()<4, 64, 16, 2, 2>();
      bulk.template operator()<4, 32, 16, 2, 2>();
      bulk.template operator()<2, 64, 8, 4, 2>();
      // The bulk copies without a block-wide barrier a plane (a stage to spare, "readers done"
      // mbarriers), alternating with the case's kernel three times.
      auto decoupled = [&]<int R, int W, int TY, int NY, int D>() {
        if (R != l.radius || t != 1) return;
        using C = wave::WaveStagedConfig<R, W, TY, NY, D>;
        report("decoupled " + std::to_string(W) + "x" + std::to_string(TY) + " NY" + std::to_string(NY) + " D" +
                   std::to_string(D),
               reinterpret_cast<const void*>(probe::staged_decoupled_kernel<C>),
               [&] { probe::launch_staged_decoupled<C>(buffers[0], buffers[1], buffers[3], box, l, nullptr); });
      };
      // The tensor-copy kernel (wave_staged_tensor.cuh: one tensor copy a stage) in other shapes, and
      // alternating with the cp.async staged kernel.
      auto tensor = [&]<int R, int W, int TY, int NY, int D>() {
        if (R != l.radius || t != 1) return;
        using C = wave::WaveStagedConfig<R, W, TY, NY, D>;
        report("tensor " + std::to_string(W) + "x" + std::to_string(TY) + " NY" + std::to_string(NY) + " D" + std::to_string(D),
               reinterpret_cast<const void*>(wave::wave_tensor_kernel<C>),
               [&] { wave::launch_wave_tensor<C>(buffers[0], buffers[1], buffers[3], box, l, nullptr); });
      };
      for (int i = 0; i < 3; ++i) {
        staged.template operator()<4, 64, 8, 3, 3>(0);
        tensor.template operator()<4, 64, 8, 3, 3>();
        tensor.template operator()<4, 64, 8, 3, 2>();
        staged.template operator()<2, 64, 8, 4, 3>(0);
        tensor.template operator()<2, 64, 8, 4, 3>();
        tensor.template operator()<3, 64, 8, 4, 3>();
        tensor.template operator()<3, 64, 8, 3, 3>();
        if (i == 0) {
          tensor.template operator()<4, 64, 8, 4, 2>();  // 64 x 32: registers the copy loop no longer takes
          tensor.template operator()<4, 64, 16, 2, 2>();
          tensor.template operator()<4, 32, 16, 2, 2>();
          tensor.template operator()<4, 64, 8, 2, 4>();  // 64 x 16, 4 planes in flight
        }
      }
      for (int i = 0; i < 3; ++i) {
        staged.template operator()<4, 64, 8, 3, 3>(0);
        decoupled.template operator()<4, 64, 8, 3, 3>();
        decoupled.template operator()<4, 64, 8, 3, 2>();
        staged.template operator()<2, 64, 8, 4, 3>(0);
        decoupled.template operator()<2, 64, 8, 4, 3>();
        decoupled.template operator()<3, 64, 8, 4, 2>();
        decoupled.template operator()<3, 64, 8, 3, 3>();
      }
      staged.template operator()<4, 64, 8, 3, 3>(0);  // the case's at order 8, first and again last (drift)
      variant.template operator()<4, 64, 8, 3, 3, 0, 0>();  // the case's kernel, copied
      variant.template operator()<4, 64, 8, 3, 3, 1, 0>();
      variant.template operator()<4, 64, 8, 3, 3, 0, 1>();
      variant.template operator()<4, 64, 8, 3, 3, 0, 2>();
      variant.template operator()<4, 64, 8, 3, 3, 1, 1>();
      // Two blocks of 256 threads an SM: smaller tiles (the halo's reads cost little, run 146).
      variant.template operator()<4, 64, 4, 3, 2, 0, 0, 2>();  // 64 x 12
      variant.template operator()<4, 64, 4, 2, 3, 0, 0, 2>();  // 64 x 8
      variant.template operator()<4, 32, 8, 3, 3, 0, 0, 2>();  // 32 x 24
      variant.template operator()<4, 32, 8, 3, 2, 0, 0, 2>();
      variant.template operator()<4, 32, 8, 2, 3, 0, 0, 2>();  // 32 x 16
      variant.template operator()<4, 64, 4, 3, 2, 0, 1, 2>();  // 64 x 12 without its halo rows
      variant.template operator()<2, 64, 8, 4, 3, 0, 0>();
      variant.template operator()<2, 64, 8, 4, 3, 0, 1>();
      variant.template operator()<2, 64, 4, 4, 2, 0, 0, 2>();
      variant.template operator()<3, 64, 8, 4, 3, 0, 1>();
      variant.template operator()<3, 64, 4, 4, 2, 0, 0, 2>();
      staged.template operator()<4, 64, 8, 3, 2>(0);  // 64 x 24 columns
      staged.template operator()<4, 64, 8, 3, 3>(0);  // the case's at order 8
      staged.template operator()<4, 64, 8, 3, 3>(0, true);
      staged.template operator()<4, 64, 8, 3, 2>(256);
      staged.template operator()<4, 64, 8, 2, 3>(0);  // 64 x 16
      staged.template operator()<4, 64, 8, 4, 2>(0);  // 64 x 32
      staged.template operator()<4, 64, 16, 2, 2>(0);  // 64 x 32, 1024 threads
      staged.template operator()<4, 32, 16, 2, 2>(0);  // 32 x 32
      staged.template operator()<2, 64, 8, 4, 2>(0);
      staged.template operator()<2, 64, 8, 4, 3>(0);  // the case's at order 4
      staged.template operator()<3, 64, 8, 3, 3>(0);  // order 6: 64 x 24 columns
      staged.template operator()<3, 64, 12, 2, 3>(0);  // 64 x 24 as 768 threads of 2 rows
      staged.template operator()<3, 64, 8, 4, 2>(0);  // 64 x 32
      staged.template operator()<3, 64, 8, 4, 3>(0);  // the case's at order 6
      staged.template operator()<3, 64, 8, 2, 3>(0);  // 64 x 16
      shape.template operator()<1, 1, 64, 8, 4>();
      shape.template operator()<1, 1, 64, 8, 4, 3>();
      shape.template operator()<2, 1, 64, 8, 4>();
      shape.template operator()<2, 1, 64, 8, 4, 5>();
      shape.template operator()<3, 1, 64, 8, 4>();
      shape.template operator()<4, 1, 64, 8, 4>();
      shape.template operator()<4, 1, 64, 4, 8>();
      shape.template operator()<4, 1, 64, 4, 4, 1, 2>();  // 256 threads, two blocks an SM
      shape.template operator()<4, 1, 32, 8, 4, 1, 2>();
      shape.template operator()<4, 1, 64, 8, 2>();
      shape.template operator()<3, 1, 64, 4, 4, 1, 2>();
      shape.template operator()<1, 2, 64, 8, 4>();
      shape.template operator()<1, 2, 64, 8, 4, 3>();
      shape.template operator()<1, 3, 64, 8, 4>();
      shape.template operator()<1, 3, 64, 8, 4, 3>();
      shape.template operator()<1, 4, 64, 8, 4>();
      shape.template operator()<1, 4, 64, 8, 4, 3>();
      shape.template operator()<1, 4, 64, 4, 8>();
      // Two blocks of 256 threads an SM (the same 16 warps and register cap as one block of 512, but two
      // barrier domains, so that one block's shared-memory phase can run beside the other's arithmetic).
      shape.template operator()<1, 3, 32, 8, 4, 1, 2>();
      shape.template operator()<1, 3, 32, 8, 4, 1, 2, true>();
      shape.template operator()<1, 3, 64, 4, 4, 1, 2, true>();
      shape.template operator()<1, 4, 32, 8, 4, 1, 2>();
      shape.template operator()<1, 4, 32, 8, 4, 1, 2, true>();
      shape.template operator()<1, 4, 64, 4, 4, 1, 2>();
      shape.template operator()<1, 4, 64, 4, 4, 1, 2, true>();
      shape.template operator()<1, 4, 32, 4, 8, 1, 2, true>();
      shape.template operator()<2, 2, 64, 8, 4>();
      shape.template operator()<2, 2, 64, 8, 4, 5>();
      shape.template operator()<2, 2, 64, 4, 8>();
      // Level 0's outer ring loaded instead of computed (one-step kernels with no idle threads).
      shape.template operator()<1, 1, 64, 8, 4, 1, 1, true>();
      shape.template operator()<1, 2, 64, 8, 4, 1, 1, true>();
      shape.template operator()<1, 3, 64, 8, 4, 1, 1, true>();
      shape.template operator()<1, 4, 64, 8, 4, 1, 1, true>();
      shape.template operator()<1, 4, 64, 4, 8, 1, 1, true>();
      shape.template operator()<1, 4, 128, 4, 4, 1, 1, true>();
      shape.template operator()<2, 1, 64, 8, 4, 1, 1, true>();
      shape.template operator()<2, 2, 64, 8, 4, 1, 1, true>();
      shape.template operator()<3, 1, 64, 8, 4, 1, 1, true>();
      shape.template operator()<3, 1, 32, 16, 2, 1, 1, true>();
      shape.template operator()<3, 1, 64, 8, 3, 1, 1, true>();   // 64 x 24 columns, 512 threads of 3 rows
      shape.template operator()<3, 1, 64, 12, 2, 1, 1, true>();  // 64 x 24 columns, 768 threads of 2 rows
      shape.template operator()<3, 2, 64, 8, 2, 1, 1, true>();
      shape.template operator()<4, 1, 32, 16, 1, 1, 1, true>();
      shape.template operator()<4, 1, 32, 16, 1, 1, 2, true>();
      shape.template operator()<4, 1, 32, 8, 1, 1, 4, true>();
      shape.template operator()<4, 1, 64, 8, 2, 1, 1, true>();
      shape.template operator()<4, 1, 32, 8, 2, 1, 2, true>();
      shape.template operator()<4, 1, 64, 8, 4, 1, 1, true>();
      shape.template operator()<4, 1, 32, 32, 1, 1, 1, true>();
      shape.template operator()<4, 1, 64, 16, 1, 1, 1, true>();
      shape.template operator()<4, 1, 64, 4, 4, 1, 2, true>();
      shape.template operator()<4, 1, 64, 8, 3, 1, 1, true>();   // 64 x 24 columns, 512 threads of 3 rows
      shape.template operator()<4, 1, 64, 12, 2, 1, 1, true>();  // 64 x 24 columns, 768 threads of 2 rows
      shape.template operator()<4, 1, 96, 8, 2, 1, 1, true>();   // 96 x 16 columns, 768 threads of 2 rows
      shape.template operator()<4, 2, 64, 8, 2, 1, 1, true>();
      shape.template operator()<4, 2, 32, 16, 2, 1, 1, true>();
    }
  }
  for (double* b : buffers) CUSH_CUDA_CHECK(cudaFree(b - lead));
  CUSH_CUDA_CHECK(cudaFree(bad));
  return 0;
}
