// cush::ProcessGroup under mpiexec (ctest runs this with 2 and 4 ranks, oversubscribed on one
// host): every rank checks the same facts, and bad input on one rank is an error on every rank,
// never a rank left waiting. Without GPUs every rank has none; with them, each rank sees its own.

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/process_group.hpp"

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

TEST(ProcessGroup, EveryRankSeesTheSameRanksHostsAndDevices) {
  const cush::ProcessGroup g(MPI_COMM_WORLD);
  EXPECT_EQ(g.rank(), world_rank());
  EXPECT_EQ(g.size(), world_size());
  // One host (ctest runs every rank here), every rank on it.
  ASSERT_EQ(g.hosts().size(), 1U) << g.describe();
  for (int r = 0; r < g.size(); ++r) EXPECT_EQ(g.host_of(r), 0);
  EXPECT_TRUE(g.same_host(0, g.size() - 1));
  // Each rank's devices, in rank order, as each rank gave them.
  const int mine = cush::DeviceSet::available();
  EXPECT_EQ(g.devices_of(g.rank()).size(), static_cast<std::size_t>(mine));
  int previous = -1;
  for (const cush::RankDevice& d : g.devices()) {
    EXPECT_GE(d.rank, previous);
    previous = d.rank;
    EXPECT_EQ(d.host, g.host_of(d.rank));
  }
  EXPECT_TRUE(contains(g.describe(), std::to_string(g.size()) + " ranks on 1 host")) << g.describe();
  EXPECT_THROW((void)g.host_of(g.size()), cush::InvalidArgument);
}

TEST(ProcessGroup, LocalRanksNumberTheRanksOfEachHost) {
  // One host here: the local rank is the rank.
  EXPECT_EQ(cush::ProcessGroup::local_rank(MPI_COMM_WORLD), world_rank());
  EXPECT_EQ(cush::ProcessGroup::local_size(MPI_COMM_WORLD), world_size());
  EXPECT_THROW((void)cush::ProcessGroup::local_rank(MPI_COMM_NULL), cush::InvalidArgument);
}

TEST(ProcessGroup, KeepsItsOwnCommunicator) {
  const cush::ProcessGroup g(MPI_COMM_WORLD);
  int same = MPI_UNEQUAL;
  ASSERT_EQ(MPI_Comm_compare(g.comm(), MPI_COMM_WORLD, &same), MPI_SUCCESS);
  EXPECT_EQ(same, MPI_CONGRUENT);  // the same ranks, another context: its messages never match the application's
  // The application's communicator still works around it.
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

TEST(ProcessGroup, WorksOnASubCommunicator) {
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, world_rank(), &half), MPI_SUCCESS);
  {
    const cush::ProcessGroup g(half);
    EXPECT_EQ(g.size(), (world_size() + 1 - world_rank() % 2) / 2);
    EXPECT_EQ(g.rank(), world_rank() / 2);
  }
  MPI_Comm_free(&half);
}

TEST(ProcessGroup, AgreeReturnsWhenEveryRankPassesTheSameValue) {
  const cush::ProcessGroup g(MPI_COMM_WORLD);
  EXPECT_NO_THROW(g.agree("test", "the element count", 12345));
}

TEST(ProcessGroup, DisagreementIsAnErrorOnEveryRankNamingEachValue) {
  const cush::ProcessGroup g(MPI_COMM_WORLD);
  try {
    g.agree("cush::test", "the element count", g.rank() == 1 ? 7 : 5);
    ADD_FAILURE() << "rank " << g.rank() << ": no error";
  } catch (const cush::InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "the ranks disagree on the element count")) << m;
    EXPECT_TRUE(contains(m, "rank 0 5")) << m;
    EXPECT_TRUE(contains(m, "rank 1 7")) << m;
  }
  // Every rank left the check: a collective after it completes.
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

TEST(ProcessGroup, ADeviceOneRankDoesNotHaveIsAnErrorOnEveryRank) {
  // The last rank names a device it does not have; the others pass none.
  const bool bad = world_rank() == world_size() - 1;
  std::vector<int> devices;
  if (bad) devices.push_back(cush::DeviceSet::available() + 3);
  try {
    const cush::ProcessGroup g(MPI_COMM_WORLD, devices);
    ADD_FAILURE() << "rank " << world_rank() << ": no error";
  } catch (const cush::InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "rank " + std::to_string(world_size() - 1) + ": device")) << m;
    EXPECT_TRUE(contains(m, "does not exist in this process")) << m;
  }
  // And a device listed twice, on rank 0 only where this process has a GPU to list.
  if (cush::DeviceSet::available() > 0) {
    std::vector<int> twice;
    if (world_rank() == 0) twice = {0, 0};
    EXPECT_THROW(cush::ProcessGroup(MPI_COMM_WORLD, twice), cush::InvalidArgument);
  }
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

TEST(ProcessGroup, IsMovedAndFreedOnce) {
  cush::ProcessGroup a(MPI_COMM_WORLD);
  const MPI_Comm comm = a.comm();
  cush::ProcessGroup b(std::move(a));
  EXPECT_EQ(b.comm(), comm);
  cush::ProcessGroup c(MPI_COMM_WORLD);
  c = std::move(b);
  EXPECT_EQ(c.comm(), comm);
}

}  // namespace

// MPI around GoogleTest: every rank runs every test; a failure on any rank fails mpiexec.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
