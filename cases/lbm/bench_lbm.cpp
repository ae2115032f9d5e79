// Case "lbm" in bench_cases: the three variants of cases/lbm on a duct at rest, driven.
//
// Names (time: wall clock for the steps on data already on the GPUs, warm-up excluded):
//   case/lbm_<pattern>_<storage>/<variant>/<g>gpu/<M>       strong: M x M x 256 (the seed's series, M = 32 .. 320,
//                                                           and larger up to CUSH_BENCH_LBM_MAX_M where it fits)
//   case/lbm_weak_<pattern>_<storage>/<variant>/<g>gpu/<M>  weak: M x M x (M g), M^3 cells per GPU
//   case/lbm_bulk_esoteric_<storage>/multi_cush/<g>gpu/<M>  strong, cush without overlap (g >= 2; M = 128, 256,
//                                                           512, 1024)
//   exchange/lbm_esoteric_<storage>/<g>gpu/<M>              the same steps' exchanges alone, the parities
//                                                           alternating: the share of the exchange the
//                                                           overlapped step hides is (bulk - overlapped) / this
//   copy/lbm/d2d/<MiB>                                      cudaMemcpyAsync of a buffer on GPU 0 to another: the
//                                                           copy bandwidth the MLUPS are measured against
// pattern: ab (A-B pull) or esoteric (esoteric pull); storage: fp32 or fp16s. Steps per timed
// iteration: 1000 (the seed's count) up to M = 320, 100 above. Counters: MLUPS (cell updates,
// wall cells included, as the seed counts), GB/s (the bytes a step moves at least: 152 per cell
// FP32, 76 FP16S), gpus. A row whose lattice does not fit the GPUs' free memory is skipped.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "cush/error.hpp"
#include "cush_halo.hpp"
#include "harness.hpp"
#include "lbm.hpp"

namespace {

namespace lbm = cases::lbm;

std::size_t max_m() { return cush::detail::env::size("CUSH_BENCH_LBM_MAX_M"); }

// Bytes of the populations on each GPU, with room for the row padding and ghost layers.
bool fits(const lbm::Duct& d, int gpus, lbm::Options o) {
  const std::size_t lattices = o.pattern == lbm::Pattern::ab ? 2 : 1;
  const std::size_t per_gpu = lbm::padded_pitch(d.nx) * d.ny * (d.nz / gpus + 3) * lbm::kQ * lbm::storage_bytes(o.storage) * lattices;
  for (int device : cases::Devices::first(gpus).cuda) {  // virtual GPUs: the physical one, more than once
    std::size_t free = 0, total = 0;
    CUSH_CUDA_CHECK(cudaSetDevice(device));
    CUSH_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (per_gpu + (std::size_t{1} << 30) > free) return false;  // 1 GiB kept for the rest
  }
  return true;
}

// Skips the row (and says so) where its lattice does not fit the GPUs' free memory.
bool skipped_unless_it_fits(benchmark::State& state, const lbm::Duct& d, int gpus, lbm::Options o) {
  if (fits(d, gpus, o)) return false;
  state.SkipWithError("skipped: the lattice does not fit the GPUs' free memory");
  return true;
}

// Steps per timed iteration: the seed's 1000 up to M = 320, 100 above.
std::size_t steps_per_run(const lbm::Duct& d) { return d.nx <= 320 ? 1000 : 100; }

template <class V>
void steps(benchmark::State& state, lbm::Duct d, int gpus, lbm::Options o) {
  if (skipped_unless_it_fits(state, d, gpus, o)) return;
  const std::size_t count = steps_per_run(d);
  d.force = lbm::force_for(d, 0.05);
  V v(d, cases::Devices::first(gpus), o);
  v.run(10);  // warm-up
  v.wait();
  cush_bench::WallTimer timer;
  double seconds = 0;
  for (auto _ : state) {
    timer.start();
    v.run(count);
    v.wait();
    const double s = timer.stop();
    state.SetIterationTime(s);
    seconds += s;
  }
  const double updates = static_cast<double>(d.cells()) * static_cast<double>(count) * static_cast<double>(state.iterations());
  state.counters["MLUPS"] = updates / seconds / 1e6;
  state.counters["GB/s"] = updates * static_cast<double>(lbm::bytes_per_update(o.storage)) / seconds / 1e9;
  state.counters["gpus"] = gpus;
}

// One device-to-device copy of `bytes` on GPU 0: GB/s counts the bytes read and written.
void copy(benchmark::State& state, std::size_t bytes) {
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  cush::DeviceBuffer a(0, bytes), b(0, bytes);
  cush::Stream stream(0);
  CUSH_CUDA_CHECK(cudaMemsetAsync(a.data(), 1, bytes, stream.get()));
  CUSH_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));  // warm-up
  stream.synchronize();
  cush_bench::Throughput rate;
  cush_bench::WallTimer timer;
  for (auto _ : state) {
    timer.start();
    for (int r = 0; r < 20; ++r)
      CUSH_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    stream.synchronize();
    const double s = timer.stop();
    state.SetIterationTime(s);
    rate.add(s, 20.0 * 2.0 * static_cast<double>(bytes));
  }
  rate.report(state);
}

// The exchanges that steps_per_run(d) esoteric-pull steps of the cush variant make, alone, on a
// lattice laid out as that variant's (its populations left as allocated: only bytes move).
template <class T>
void exchanges(benchmark::State& state, lbm::Duct d, int gpus, lbm::Options o) {
  if (skipped_unless_it_fits(state, d, gpus, o)) return;
  const std::size_t count = steps_per_run(d);
  cush::Field<T> f(cush::DeviceSet(cases::Devices::first(gpus).cush), {d.nx, d.ny, d.nz}, 3, lbm::lattice_options(), lbm::kQ);
  const cush::HaloComponents halo[2] = {lbm::esoteric_halo(0), lbm::esoteric_halo(1)};
  f.exchange(halo[0]);  // warm-up
  f.wait();
  cush_bench::WallTimer timer;
  for (auto _ : state) {
    timer.start();
    for (std::size_t s = 0; s < count; ++s) f.exchange(halo[(s + 1) % 2]);
    f.wait();
    state.SetIterationTime(timer.stop());
  }
  state.counters["gpus"] = gpus;
}

const char* name(lbm::Options o) {
  if (o.pattern == lbm::Pattern::ab) return o.storage == lbm::Storage::fp32 ? "ab_fp32" : "ab_fp16s";
  return o.storage == lbm::Storage::fp32 ? "esoteric_fp32" : "esoteric_fp16s";
}

// The three variants on `d` (the single reference on one GPU only) under `family`.
void add_variants(const std::string& family, lbm::Duct d, int g, lbm::Options o, const std::string& size) {
  const std::string on = "/" + std::to_string(g) + "gpu/" + size;
  const std::string base = "case/" + family + "_" + name(o);
  if (g == 1) cush_bench::add_timed(base + "/single" + on, [=](benchmark::State& s) { steps<lbm::Single>(s, d, 1, o); });
  cush_bench::add_timed(base + "/multi_cuda" + on, [=](benchmark::State& s) { steps<lbm::MultiCuda>(s, d, g, o); });
  cush_bench::add_timed(base + "/multi_cush" + on, [=](benchmark::State& s) { steps<lbm::MultiCush>(s, d, g, o); });
}

// What the share of the exchange hidden needs beside the overlapped row: cush without overlap, and
// the exchanges alone.
void add_hidden(lbm::Duct d, int g, lbm::Options o, const std::string& size) {
  const std::string on = "/" + std::to_string(g) + "gpu/" + size;
  lbm::Options bulk = o;
  bulk.overlap = false;
  cush_bench::add_timed(std::string("case/lbm_bulk_") + name(o) + "/multi_cush" + on,
                        [=](benchmark::State& s) { steps<lbm::MultiCush>(s, d, g, bulk); });
  cush_bench::add_timed(std::string("exchange/lbm_") + name(o) + on, [=](benchmark::State& s) {
    if (o.storage == lbm::Storage::fp32) exchanges<float>(s, d, g, o);
    else exchanges<__half>(s, d, g, o);
  });
}

}  // namespace

void register_lbm() {
  const int available = cush_bench::gpus_for_rows();
  if (available == 0) return;
  cush_bench::add_timed("copy/lbm/d2d/2048", [](benchmark::State& s) { copy(s, std::size_t{2048} << 20); });
  std::vector<std::size_t> edges;
  for (std::size_t m = 32; m <= 320; m += 32) edges.push_back(m);
  for (std::size_t m : {384U, 512U, 768U, 1024U, 1536U, 2048U}) edges.push_back(m);
  for (lbm::Pattern p : {lbm::Pattern::esoteric, lbm::Pattern::ab})
    for (lbm::Storage st : {lbm::Storage::fp32, lbm::Storage::fp16s}) {
      const lbm::Options o{p, st, true};
      for (std::size_t m : edges) {
        if (m > max_m()) continue;
        for (int g = 1; g <= available; ++g) {
          add_variants("lbm", lbm::Duct{m, m, 256, 0.8, 0.0}, g, o, std::to_string(m));
          if (m <= 512) add_variants("lbm_weak", lbm::Duct{m, m, m * static_cast<std::size_t>(g), 0.8, 0.0}, g, o, std::to_string(m));
          if (g >= 2 && p == lbm::Pattern::esoteric && (m == 128 || m == 256 || m == 512 || m == 1024))
            add_hidden(lbm::Duct{m, m, 256, 0.8, 0.0}, g, o, std::to_string(m));
        }
      }
    }
}
