// Case "lbm" across processes in bench_ranks (bench/bench_ranks.cpp; mpiexec, one process per
// GPU). Names (time: wall clock for the steps on a duct already on the GPUs, warm-up excluded, the
// slowest rank's time after a barrier):
//   case/lbm_ranks_<pattern>_<storage>/<variant>/<p>proc/<M>   M x M x 256, driven
// with <variant> rank_cush (cush::RankField, automatic: CUDA IPC between ranks of one host),
// rank_cush_nccl (the same, faces over NCCL) or rank_cuda (raw MPI + NCCL); compare with
// bench_cases' case/lbm_<pattern>_<storage>/multi_*/<p>gpu/<M> (one process driving p GPUs).
// Steps per iteration as bench_lbm's (1000 up to M = 320, 100 above); counters MLUPS, GB/s, gpus
// (every rank's GPUs). A row whose slab does not fit a rank's GPU is skipped (on every rank: the ranks
// decide together). CUSH_BENCH_LBM_MAX_M caps M (default 1024).

#include <mpi.h>

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <type_traits>

#include "core/env.hpp"
#include "cush/error.hpp"
#include "harness.hpp"
#include "lbm.hpp"
#include "rank_harness.hpp"
#include "ranks.hpp"

namespace {

namespace lbm = cases::lbm;
namespace ranks = cush_bench::ranks;

// Whether every rank's slab fits its GPU's free memory with 1 GiB to spare (collective).
bool fits(const lbm::Duct& d, lbm::Options o) {
  const ranks::Setup& s = ranks::setup();
  const std::size_t lattices = o.pattern == lbm::Pattern::ab ? 2 : 1;
  const std::size_t per_gpu = lbm::padded_pitch(d.nx) * d.ny * (d.nz / s.group->devices().size() + 3) *
                              lbm::kQ * lbm::storage_bytes(o.storage) * lattices;
  std::size_t free = 0, total = 0;
  CUSH_CUDA_CHECK(cudaSetDevice(s.device));
  CUSH_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  int mine = per_gpu + (std::size_t{1} << 30) <= free ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, s.group->comm());
  return all == 1;
}

template <class V>
void steps(benchmark::State& state, const std::string& row, lbm::Duct d, lbm::Options o,
           cush::RankTransport t = cush::RankTransport::automatic) {
  if (!fits(d, o)) {
    state.SkipWithError("skipped: the slab does not fit a rank's GPU");
    return;
  }
  const std::size_t count = d.nx <= 320 ? 1000 : 100;
  d.force = lbm::force_for(d, 0.05);
  V* v = cush_bench::kept<V>(row, [&] {
    const ranks::Setup& s = ranks::setup();
    std::unique_ptr<V> made;
    if constexpr (std::is_same_v<V, lbm::RankCush>) {
      made = std::make_unique<V>(*s.group, d, o, t);
    } else {
      made = std::make_unique<V>(s.group->comm(), s.device, d, o);
    }
    made->run(10);  // warm-up
    made->wait();
    return made;
  });
  double seconds = 0;
  for (auto _ : state) seconds += ranks::time_iteration(state, [&] {
    v->run(count);
    v->wait();
  });
  const double updates = static_cast<double>(d.cells()) * static_cast<double>(count) * static_cast<double>(state.iterations());
  state.counters["MLUPS"] = updates / seconds / 1e6;
  state.counters["GB/s"] = updates * static_cast<double>(lbm::bytes_per_update(o.storage)) / seconds / 1e9;
  state.counters["gpus"] = static_cast<double>(ranks::setup().group->devices().size());
}

const char* name(lbm::Options o) {
  if (o.pattern == lbm::Pattern::ab) return o.storage == lbm::Storage::fp32 ? "ab_fp32" : "ab_fp16s";
  return o.storage == lbm::Storage::fp32 ? "esoteric_fp32" : "esoteric_fp16s";
}

}  // namespace

void register_lbm_ranks() {
  for (lbm::Pattern p : {lbm::Pattern::esoteric, lbm::Pattern::ab})
    for (lbm::Storage st : {lbm::Storage::fp32, lbm::Storage::fp16s}) {
      const lbm::Options o{p, st, true};
      for (std::size_t m : {256U, 512U, 1024U}) {
        if (m > cush::detail::env::size("CUSH_BENCH_LBM_MAX_M")) continue;
        const lbm::Duct d{m, m, 256, 0.8, 0.0};
        const std::string on = ranks::on(m);
        const std::string base = std::string("case/lbm_ranks_") + name(o);
        const std::string raw = base + "/rank_cuda" + on, cush = base + "/rank_cush" + on;
        if (ranks::setup().gpus_per_rank == 1)  // the raw twin takes one GPU a process
          ranks::add_row(raw, [raw, d, o](benchmark::State& s) { steps<lbm::RankCuda>(s, raw, d, o); });
        ranks::add_row(cush, [cush, d, o](benchmark::State& s) { steps<lbm::RankCush>(s, cush, d, o); });
        const std::string nccl = base + "/rank_cush_nccl" + on;
        ranks::add_row(nccl, [nccl, d, o](benchmark::State& s) {
          steps<lbm::RankCush>(s, nccl, d, o, cush::RankTransport::nccl);
        });
      }
    }
}
