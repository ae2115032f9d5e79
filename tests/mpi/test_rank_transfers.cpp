// Transfer lists over MPI ranks on host arrays (ctest runs this with 2 and 4 ranks): every
// operation's list on random layouts (the same draws on every rank), its positions on random
// ranks; each rank holds only its own positions' buffers, runs its steps (mpi/rank_lists.hpp)
// with MPI messages between ranks, and compares every element with the list run in order. Ranks
// that disagree fail together.

#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "cush/process_group.hpp"
#include "mpi/rank_lists.hpp"
#include "mpi_test.hpp"
#include "support/rank_executor.hpp"
#include "support/transfer_cases.hpp"

namespace {

using cush_test::Case;
using cush_test::Value;

// Non-blocking MPI point to point on the group's communicator, the list index as the tag.
struct MpiComm {
  struct Handle {
    MPI_Request request = MPI_REQUEST_NULL;
    std::shared_ptr<std::vector<Value>> data;  // a receive's buffer
  };
  MPI_Comm comm;
  Handle send(int peer, std::size_t tag, const Value* data, std::size_t count) {
    Handle h;
    EXPECT_EQ(MPI_Isend(data, static_cast<int>(count), MPI_INT64_T, peer, static_cast<int>(tag), comm, &h.request), MPI_SUCCESS);
    return h;
  }
  void wait_send(Handle& h) { EXPECT_EQ(MPI_Wait(&h.request, MPI_STATUS_IGNORE), MPI_SUCCESS); }
  Handle receive(int peer, std::size_t tag, std::size_t count) {
    Handle h;
    h.data = std::make_shared<std::vector<Value>>(count);
    EXPECT_EQ(MPI_Irecv(h.data->data(), static_cast<int>(count), MPI_INT64_T, peer, static_cast<int>(tag), comm, &h.request),
              MPI_SUCCESS);
    return h;
  }
  std::vector<Value> wait_receive(Handle& h) {
    EXPECT_EQ(MPI_Wait(&h.request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    return *h.data;
  }
};


TEST(RankTransfersMpi, EveryOperationEqualsTheListInOrderOnEveryRank) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  std::mt19937_64 rng(4949);  // the same draws on every rank
  for (int trial = 0; trial < 40; ++trial)
    for (const Case& c : cush_test::random_cases(rng)) {
      SCOPED_TRACE(c.what + ", trial " + std::to_string(trial) + ", rank " + std::to_string(group.rank()));
      const std::vector<int> src_rank = cush_test::random_ranks(rng, c.src.devices(), group.size());
      const std::vector<int> dst_rank = c.one_plan ? src_rank : cush_test::random_ranks(rng, c.dst.devices(), group.size());
      const int root = static_cast<int>(rng() % static_cast<unsigned>(group.size()));
      std::vector<std::vector<Value>> src0 = cush_test::buffers(rng, c.src), dst0 = c.one_plan ? src0 : cush_test::buffers(rng, c.dst);
      std::vector<Value> host0 = cush_test::random_values(rng, std::max(c.src.size(), c.dst.size()));
      // The reference, computed on every rank: the whole list in order.
      std::vector<std::vector<Value>> ref_src = src0, ref_dst = dst0;
      std::vector<Value> ref_host = host0;
      cush_test::run_in_order<Value>(c.list, {&ref_src, c.one_plan ? &ref_src : &ref_dst, &ref_host});
      // This rank's own buffers only.
      std::vector<std::vector<Value>> src(src0.size()), dst(dst0.size());
      for (std::size_t p = 0; p < src0.size(); ++p)
        if (src_rank[p] == group.rank()) src[p] = src0[p];
      for (std::size_t p = 0; p < dst0.size(); ++p)
        if (dst_rank[p] == group.rank()) dst[p] = dst0[p];
      std::vector<Value> host = group.rank() == root ? host0 : std::vector<Value>{};
      const auto steps = cush::detail::rank_steps(group, c.list, {src_rank, dst_rank, root});
      MpiComm comm{group.comm()};
      cush_test::run_rank_steps<Value>(steps, {&src, c.one_plan ? &src : &dst, &host}, comm);
      for (std::size_t p = 0; p < src0.size(); ++p)
        if (src_rank[p] == group.rank()) EXPECT_EQ(src[p], ref_src[p]) << "source position " << p;
      if (!c.one_plan)
        for (std::size_t p = 0; p < dst0.size(); ++p)
          if (dst_rank[p] == group.rank()) EXPECT_EQ(dst[p], ref_dst[p]) << "destination position " << p;
      if (group.rank() == root) EXPECT_EQ(host, ref_host) << "the root's host buffer";
      ASSERT_TRUE(cush_test::all_ranks(group, !HasFailure()));
    }
}


TEST(RankTransfersMpi, RanksThatDisagreeFailTogether) {
  const cush::ProcessGroup group(MPI_COMM_WORLD, {});
  const cush::Layout l = cush::Layout::partitioned(std::vector<std::size_t>{3, 5});
  // Rank 0 scatters another part: every rank throws, naming the transfers.
  const cush::TransferList list = cush::scatter_transfers(l, cush::Range{0, group.rank() == 0 ? 8U : 7U});
  const std::vector<int> ranks{0, 1};
  try {
    (void)cush::detail::rank_steps(group, list, {{}, ranks, 0});
    ADD_FAILURE() << "no error";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), "the ranks disagree on the transfers of the operation")) << e.what();
  }
  // Another root on the last rank.
  const cush::TransferList same = cush::scatter_transfers(l, cush::Range{0, 8});
  try {
    (void)cush::detail::rank_steps(group, same, {{}, ranks, group.rank() == group.size() - 1 ? 1 : 0});
    ADD_FAILURE() << "no error";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), "the ranks disagree on the ranks of the positions")) << e.what();
  }
  // A rank the group lacks, the same everywhere.
  const std::vector<int> beyond{0, group.size()};
  try {
    (void)cush::detail::rank_steps(group, same, {{}, beyond, 0});
    ADD_FAILURE() << "no error";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), "destination position 1 is on rank " + std::to_string(group.size()))) << e.what();
  }
  EXPECT_TRUE(cush_test::all_ranks(group, !HasFailure()));
}

}  // namespace

int main(int argc, char** argv) { return cush_test::run_mpi_tests(argc, argv); }
