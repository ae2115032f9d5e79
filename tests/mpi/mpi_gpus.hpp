#pragma once
// The GPUs of the tests under mpiexec (tests/mpi): which GPUs each rank takes, whether every rank
// has one, whether every device of every rank is a GPU of its own (NCCL needs it), and the check
// that a call is refused.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/process_group.hpp"
#include "cush/virtual_gpus.hpp"
#include "mpi_test.hpp"

namespace cush_test {

// This rank's GPUs: two of its own where the host has at least two GPUs per rank (2 ranks on 4
// GPUs: 2 x 2, in reverse order), else one (its local rank modulo the GPUs it sees; 4 ranks on 4
// GPUs: 4 x 1; several ranks may share one GPU); none without a GPU.
inline std::vector<int> my_gpus() {
  const int available = cush::DeviceSet::available();
  if (available == 0) return {};
  const int local = cush::ProcessGroup::local_rank(MPI_COMM_WORLD);
  if (available >= 2 * cush::ProcessGroup::local_size(MPI_COMM_WORLD)) return {2 * local + 1, 2 * local};
  return {local % available};
}

inline bool every_rank_has_a_gpu(const std::vector<int>& gpus) {
  int mine = gpus.empty() ? 0 : 1, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

#define REQUIRE_A_GPU_ON_EVERY_RANK(gpus) \
  if (!cush_test::every_rank_has_a_gpu(gpus)) GTEST_SKIP() << "needs a GPU on every rank"

// Whether every device of every rank is a GPU of its own (NCCL needs it): the PCI bus ids of the
// physical GPUs behind the ranks' devices, gathered from every rank, have no repeat. Ranks share a
// GPU where the host has fewer GPUs than ranks, and with virtual GPUs (CUSH_VIRTUAL_GPUS) where
// the logical devices of different ranks are one physical GPU.
inline bool gpus_are_distinct(const std::vector<int>& gpus) {
  constexpr std::size_t id_chars = 32;
  // Every rank sends as many ids as the rank with the most devices has.
  int count = static_cast<int>(gpus.size()), most = 0;
  MPI_Allreduce(&count, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);  // MPI errors end the test (MPI_ERRORS_ARE_FATAL)
  std::string mine(static_cast<std::size_t>(most) * id_chars, '\0');
  for (std::size_t k = 0; k < gpus.size(); ++k)
    CUSH_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.data() + k * id_chars, id_chars, cush::physical_device(gpus[k])));
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::string all(static_cast<std::size_t>(ranks) * mine.size(), '\0');
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(), static_cast<int>(mine.size()), MPI_CHAR,
                MPI_COMM_WORLD);
  std::vector<std::string> ids;
  for (std::size_t at = 0; at < all.size(); at += id_chars)
    if (all[at] != '\0') ids.emplace_back(all.c_str() + at);
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

// Whether every two GPUs of this host reach each other (peer access both ways), asked on every
// rank: what RankTransport::ipc needs between ranks of one host on different GPUs (ranks on one
// GPU always may).
inline bool gpus_reach_each_other() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  int mine = 1, all = 0;
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      int can = 1;
      if (a != b) CUSH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (can == 0) mine = 0;
    }
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// `call` throws InvalidArgument with `text` in its message.
template <class F>
void refused(F&& call, const std::string& text) {
  try {
    call();
    ADD_FAILURE() << "no error (expected: " << text << ")";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_TRUE(cush_test::contains(e.what(), text)) << e.what();
  }
}

}  // namespace cush_test
