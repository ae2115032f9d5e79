#pragma once
// Case "advection" across processes: the multi-GPU variants with one MPI rank per GPU, for the
// comparison with one process driving every GPU (cases/advection/README.md, "Across processes").
// Needs MPI and NCCL (built where cush::mpi is). The interface is the other variants' (advection.hpp),
// with the data on the root rank 0 only:
//
//     RankCush v(group, grid, coefficients, options);   // collective: every rank, its own GPU
//     v.upload(rank == 0 ? in : nullptr);               // the root's initial field to every rank
//     v.run(steps);  v.wait();
//     v.download(rank == 0 ? out : nullptr);            // every rank's slab to the root

#include <mpi.h>
#include <nccl.h>

#include <array>
#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "advection.hpp"
#include "cush/process_group.hpp"
#include "cush/rank_field.hpp"

namespace cases {
namespace advection {

/// cush across processes: MultiCush with a cush::RankField over the group's GPUs (one block per
/// device of every rank, split along z) instead of a cush::Field over one process's GPUs.
class RankCush {
 public:
  /// `transport`: how faces cross processes (the default picks CUDA IPC on one host).
  RankCush(const cush::ProcessGroup& group, Grid grid, const std::array<double, 27>& a, Options options = {},
           cush::RankTransport transport = cush::RankTransport::automatic);
  void upload(const double* in);
  void run(std::size_t steps);
  void wait();
  void download(double* out);

 private:
  cush::RankField<double>& current() { return swapped_ ? v_ : u_; }
  cush::RankField<double>& next() { return swapped_ ? u_ : v_; }
  std::array<double, 27> a_;
  Options options_;
  cush::RankField<double> u_, v_;
  bool swapped_ = false;
};

/// Raw MPI + NCCL across processes, one GPU per rank: MultiCuda's z slabs with one ghost layer, the
/// first and last planes sent to the ranks below and above with ncclSend / ncclRecv on a second
/// stream (an NCCL communicator made by hand: rank 0's id broadcast over MPI), the slabs
/// scattered and gathered with MPI_Scatterv / MPI_Gatherv. One step per exchange: options.steps
/// must be 1 (std::invalid_argument otherwise).
class RankCuda {
 public:
  /// Collective over `comm`; this rank drives CUDA device `device`.
  RankCuda(MPI_Comm comm, int device, Grid grid, const std::array<double, 27>& a, Options options = {});
  ~RankCuda();
  RankCuda(const RankCuda&) = delete;
  RankCuda& operator=(const RankCuda&) = delete;
  void upload(const double* in);
  void run(std::size_t steps);
  void wait();
  void download(double* out);

 private:
  void step();
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1, device_ = 0;
  Grid g_;
  std::array<double, 27> a_;
  Options options_;
  std::vector<int> counts_, offsets_;  // points of each rank's slab and where it starts
  std::size_t planes_ = 0;
  ncclComm_t nccl_ = nullptr;
  cudaStream_t compute_ = nullptr, comm_stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, sent_ = nullptr;
  double* u_ = nullptr;
  double* v_ = nullptr;
  std::vector<double> slab_;  // this rank's slab on the host, for upload and download
};

}  // namespace advection
}  // namespace cases
