// Case "advection" across processes (ranks.hpp), under mpiexec with 2 and 4 ranks, one GPU per
// rank (its local rank modulo the GPUs it sees): the cush variant (every schedule, deep halos) and
// the raw MPI + NCCL variant against the host reference step, every point compared on the root, on
// odd grids. The raw variant needs a GPU of its own per rank (NCCL); on a host with fewer GPUs than
// ranks only the cush variant runs (its field falls back to MPI between ranks sharing a GPU).
// Without a GPU on every rank the tests say SKIPPED.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "advection.hpp"
#include "cush/device_set.hpp"
#include "cush/process_group.hpp"
#include "mpi/mpi_gpus.hpp"
#include "mpi/mpi_test.hpp"
#include "ranks.hpp"
#include "support/random.hpp"

namespace adv = cases::advection;

namespace {

const std::array<double, 27> kCoefficients = adv::coefficients({1.0, -0.7, 0.4}, {0.9, 0.9, 0.9});

// This rank's one GPU (none without a GPU).
std::vector<int> my_gpu() {
  const int available = cush::DeviceSet::available();
  if (available == 0) return {};
  return {cush::ProcessGroup::local_rank(MPI_COMM_WORLD) % available};
}

std::vector<double> host_steps(std::vector<double> u, adv::Grid g, std::size_t steps) {
  std::vector<double> next(u.size());
  for (std::size_t s = 0; s < steps; ++s) {
    adv::step_host(u, next, g, kCoefficients);
    u.swap(next);
  }
  return u;
}

// `steps` steps as run(first) then run(steps - first) on the variant; the field on the root.
template <class V>
std::vector<double> rank_steps(V& v, const std::vector<double>& in, std::size_t steps, std::size_t first, bool root) {
  v.upload(root ? in.data() : nullptr);
  v.run(first);
  v.run(steps - first);
  v.wait();
  std::vector<double> out(root ? in.size() : 0, NAN);
  v.download(root ? out.data() : nullptr);
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << ": point " << i << " is " << got[i] << ", expected " << want[i];
  EXPECT_EQ(bad, 0U) << what;
}

const adv::Grid kGrids[] = {adv::Grid{17, 9, 23}, adv::Grid{33, 31, 20}, adv::Grid{5, 3, 8}};

TEST(CaseAdvectionRanks, CushAcrossProcessesMatchesTheHostStep) {
  const std::vector<int> gpu = my_gpu();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpu);
  const cush::ProcessGroup group(MPI_COMM_WORLD, gpu);
  const bool root = group.rank() == 0;
  for (const adv::Grid g : kGrids) {
    std::vector<double> in(g.points());
    cush_test::fill_random(std::span<double>(in));
    const std::vector<double> want = host_steps(in, g, 4);
    for (const adv::Options o : {adv::Options{adv::Schedule::bulk, 1}, adv::Options{adv::Schedule::overlap, 1},
                                 adv::Options{adv::Schedule::bulk, 2}, adv::Options{adv::Schedule::bulk, 1, 2},
                                 adv::Options{adv::Schedule::overlap, 1, 3}, adv::Options{adv::Schedule::bulk, 1, 1, true},
                                 adv::Options{adv::Schedule::overlap, 1, 2, true}}) {
      const std::size_t halo = o.depth * o.steps;
      if (g.nz / static_cast<std::size_t>(group.size()) < halo || g.nx < halo || g.ny < halo) continue;  // thinner than the halo
      const std::string what = "cush across " + std::to_string(group.size()) + " ranks, " + std::to_string(g.nx) + "x" +
                               std::to_string(g.ny) + "x" + std::to_string(g.nz) +
                               (o.schedule == adv::Schedule::overlap ? ", overlapped" : ", bulk") + ", depth " +
                               std::to_string(o.depth) + ", " + std::to_string(o.steps) + " steps fused" +
                               (o.factorized ? ", factorized" : "");
      adv::RankCush v(group, g, kCoefficients, o);
      const std::vector<double> got = rank_steps(v, in, 4, 1, root);
      if (root) expect_near(got, want, what);
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure())) << what;
    }
  }
}

TEST(CaseAdvectionRanks, RawMpiNcclAcrossProcessesMatchesTheHostStep) {
  const std::vector<int> gpu = my_gpu();
  REQUIRE_A_GPU_ON_EVERY_RANK(gpu);
  if (!cush_test::gpus_are_distinct(gpu)) GTEST_SKIP() << "NCCL needs a GPU of its own for each rank (ranks share GPUs here)";
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  for (const adv::Grid g : kGrids) {
    std::vector<double> in(g.points());
    cush_test::fill_random(std::span<double>(in));
    const std::vector<double> want = host_steps(in, g, 4);
    for (const adv::Schedule s : {adv::Schedule::bulk, adv::Schedule::overlap})
    for (const bool factorized : {false, true}) {
      const std::string what = "raw across " + std::to_string(ranks) + " ranks, " + std::to_string(g.nx) + "x" +
                               std::to_string(g.ny) + "x" + std::to_string(g.nz) +
                               (s == adv::Schedule::overlap ? ", overlapped" : ", bulk") + (factorized ? ", factorized" : "");
      adv::RankCuda v(MPI_COMM_WORLD, cush::physical_device(gpu[0]), g, kCoefficients, {s, 1, 1, factorized});
      const std::vector<double> got = rank_steps(v, in, 4, 1, rank == 0);
      if (rank == 0) expect_near(got, want, what);
      int ok = HasFailure() ? 0 : 1, all = 0;
      MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      ASSERT_EQ(all, 1) << what;
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
