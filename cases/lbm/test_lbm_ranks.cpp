// Case "lbm" across processes (ranks.hpp), under mpiexec with 2 and 4 ranks, one GPU per rank (its
// local rank modulo the GPUs it sees): the cush variant and the raw MPI + NCCL variant, every
// pattern and storage, with and without overlap, 100 steps run as 37 + 63, against the single-GPU
// reference run on rank 0's GPU, bit for bit, every cell. The duct's 24 layers give each rank a
// slab of several layers, and with 4 ranks of 6. The raw variant needs a GPU of its own per rank
// (NCCL); on a host with fewer GPUs than ranks only the cush variant runs (over MPI). Without a
// GPU on every rank the tests say SKIPPED.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/process_group.hpp"
#include "cush/virtual_gpus.hpp"
#include "lbm.hpp"
#include "mpi/mpi_gpus.hpp"
#include "mpi/mpi_test.hpp"
#include "ranks.hpp"
#include "test_support.hpp"

namespace lbm = cases::lbm;

namespace {

const lbm::Duct kDuct{19, 23, 24, 0.8, 2e-5};
constexpr float kPerturbation = 1e-3f;

std::vector<int> my_gpu() {
  const int available = cush::DeviceSet::available();
  if (available == 0) return {};
  return {cush::ProcessGroup::local_rank(MPI_COMM_WORLD) % available};
}

const char* name(lbm::Pattern p) { return p == lbm::Pattern::ab ? "A-B" : "esoteric"; }
const char* name(lbm::Storage s) { return s == lbm::Storage::fp32 ? "fp32" : "fp16s"; }

// The single-GPU reference on this rank's GPU (rank 0 calls it).
lbm::Moments reference(int gpu, lbm::Options o) {
  lbm::Single v(kDuct, cases::Devices::of({gpu}), o);
  v.run(100);
  v.wait();
  return v.moments();
}

template <class V>
lbm::Moments run_37_63(V& v) {
  v.run(37);
  v.run(63);
  v.wait();
  return v.moments();
}

// Every pattern, storage and overlap: `make(options)` builds the variant on every rank; rank 0
// compares its moments with the reference.
template <class Make>
void every_option(const std::vector<int>& gpu, const char* variant, Make make) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (lbm::Pattern pattern : {lbm::Pattern::ab, lbm::Pattern::esoteric})
    for (lbm::Storage storage : {lbm::Storage::fp32, lbm::Storage::fp16s}) {
      const lbm::Moments want = rank == 0 ? reference(gpu[0], {pattern, storage, true, kPerturbation}) : lbm::Moments{};
      for (bool overlap : {true, false}) {
        auto v = make(lbm::Options{pattern, storage, overlap, kPerturbation});
        const lbm::Moments got = run_37_63(*v);
        if (rank == 0)
          EXPECT_TRUE(lbm_test::same_bits(got, want))
              << variant << " " << name(pattern) << " " << name(storage) << (overlap ? ", overlap" : ", no overlap");
        int ok = ::testing::Test::HasFailure() ? 0 : 1, all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        ASSERT_EQ(all, 1) << variant << " " << name(pattern) << " " << name(storage);
      }
    }
}

TEST(CaseLbmRanks, CushAcrossProcessesMatchesTheSingleGpuReferenceBitForBit) {
  const std::vector<int> gpu = my_gpu();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpu);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpu);
  every_option(gpu, "cush", [&](lbm::Options o) { return std::make_unique<lbm::RankCush>(group, kDuct, o); });
}

TEST(CaseLbmRanks, RawMpiNcclAcrossProcessesMatchesTheSingleGpuReferenceBitForBit) {
  const std::vector<int> gpu = my_gpu();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpu);
  if (!cush_test::gpus_are_distinct(gpu)) GTEST_SKIP() << "NCCL needs a GPU of its own for each rank (ranks share GPUs here)";
  every_option(gpu, "raw", [&](lbm::Options o) {
    return std::make_unique<lbm::RankCuda>(MPI_COMM_WORLD, cush::physical_device(gpu[0]), kDuct, o);
  });
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
