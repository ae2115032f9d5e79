#pragma once
// Case "lbm" across processes: the multi-GPU variants with one MPI rank per GPU, for the
// comparison with one process driving every GPU (cases/lbm/README.md, "Across processes"). Needs
// MPI and NCCL (built where cush::mpi is). The interface is the other variants' (lbm.hpp), with
// the moments on rank 0 only (empty elsewhere):
//
//     RankCush v(group, duct, options);   // collective: every rank, its own GPU
//     v.run(steps);  v.wait();
//     Moments m = v.moments();            // collective; every cell's on rank 0

#include <mpi.h>
#include <nccl.h>

#include <array>
#include <cstddef>
#include <memory>

#include <cuda_runtime_api.h>

#include "cush/process_group.hpp"
#include "cush/rank_field.hpp"
#include "lbm.hpp"

namespace cases {
namespace lbm {

/// cush across processes: MultiCush with a cush::RankField over the group's GPUs (one block per
/// device of every rank, split along z) instead of a cush::Field over one process's GPUs.
class RankCush {
 public:
  /// `transport`: how faces cross processes (the default picks CUDA IPC on one host).
  RankCush(const cush::ProcessGroup& group, const Duct& duct, Options options = {},
           cush::RankTransport transport = cush::RankTransport::automatic);
  ~RankCush();
  RankCush(RankCush&&) noexcept;
  void run(std::size_t steps);
  void wait();
  Moments moments();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Raw MPI + NCCL across processes, one GPU per rank: MultiCuda's z slab with one ghost layer below
/// and above; after every step the population planes that cross the slab's two faces leave and
/// arrive with ncclSend / ncclRecv on a copy stream (an NCCL communicator made by hand: rank 0's id
/// broadcast over MPI); the moments gathered to rank 0 with MPI_Gatherv.
class RankCuda {
 public:
  /// Collective over `comm`; this rank drives CUDA device `device`.
  RankCuda(MPI_Comm comm, int device, const Duct& duct, Options options = {});
  ~RankCuda();
  RankCuda(const RankCuda&) = delete;
  RankCuda& operator=(const RankCuda&) = delete;
  void run(std::size_t steps);
  void wait();
  Moments moments();

 private:
  void step();
  void exchange();
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1, device_ = 0;
  Duct duct_;
  Options options_;
  std::vector<int> counts_, offsets_;  // cells of each rank's layers and the first of them
  ncclComm_t nccl_ = nullptr;
  std::array<Slab, 2> f_{};  // the lattices; f_[1].f is null for esoteric pull
  float* moments_ = nullptr;
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  cudaEvent_t updated_ = nullptr, copied_ = nullptr;
  std::size_t steps_ = 0;
};

}  // namespace lbm
}  // namespace cases
