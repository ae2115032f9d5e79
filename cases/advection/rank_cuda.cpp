// Case "advection", raw MPI + NCCL across processes: multi_cuda.cpp with one process per GPU. Each
// rank holds one z slab with one ghost layer; per step it fills its x and y ghosts (periodic within
// a plane), sends its first plane to the rank below and its last to the rank above with ncclSend /
// ncclRecv on a second stream, and updates its slab (with Schedule::overlap, the planes that need no
// ghost plane while the planes travel). The NCCL communicator is made by hand: rank 0's unique id
// broadcast over MPI, then ncclCommInitRank on every rank.

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "ranks.hpp"

namespace cases {
namespace advection {

namespace {

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("cases::advection::RankCuda: ") + call + " failed");
}

void check_nccl(ncclResult_t rc, const char* call) {
  if (rc != ncclSuccess)
    throw std::runtime_error(std::string("cases::advection::RankCuda: ") + call + ": " + ncclGetErrorString(rc));
}

}  // namespace

RankCuda::RankCuda(MPI_Comm comm, int device, Grid g, const std::array<double, 27>& a, Options options)
    : comm_(comm), device_(device), g_(g), a_(checked_coefficients(a, options)), options_(options) {
  if (options.steps != 1)
    throw std::invalid_argument("cases::advection::RankCuda: one step per exchange (options.steps 1), not " +
                                std::to_string(options.steps));
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &ranks_), "MPI_Comm_size");
  if (g.nz < static_cast<std::size_t>(ranks_)) throw std::invalid_argument("cases::advection::RankCuda: fewer z planes than ranks");
  int first = 0;
  for (int r = 0; r < ranks_; ++r) {
    const std::size_t planes = g.nz / ranks_ + (static_cast<std::size_t>(r) < g.nz % ranks_ ? 1 : 0);
    counts_.push_back(static_cast<int>(planes * g.nx * g.ny));
    offsets_.push_back(first);
    first += counts_.back();
    if (r == rank_) planes_ = planes;
  }
  ncclUniqueId id{};
  if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm_), "MPI_Bcast");
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  check_nccl(ncclCommInitRank(&nccl_, ranks_, id, rank_), "ncclCommInitRank");
  const std::size_t plane = padded_pitch(g.nx) * (g.ny + 2);
  CUSH_CUDA_CHECK(cudaStreamCreate(&compute_));
  CUSH_CUDA_CHECK(cudaStreamCreate(&comm_stream_));
  CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&sent_, cudaEventDisableTiming));
  CUSH_CUDA_CHECK(cudaMalloc(&u_, (lead(1) + plane * (planes_ + 2)) * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMalloc(&v_, (lead(1) + plane * (planes_ + 2)) * sizeof(double)));
  u_ += lead(1);  // the first ghost cell; rows' first owned cells 128-byte aligned
  v_ += lead(1);
  slab_.resize(static_cast<std::size_t>(counts_[static_cast<std::size_t>(rank_)]));
}

RankCuda::~RankCuda() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
  if (nccl_ != nullptr) (void)ncclCommDestroy(nccl_);
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(u_ - lead(1)));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(v_ - lead(1)));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(ready_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(sent_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(compute_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(comm_stream_));
}

void RankCuda::upload(const double* in) {
  check_mpi(MPI_Scatterv(in, counts_.data(), offsets_.data(), MPI_DOUBLE, slab_.data(), static_cast<int>(slab_.size()),
                         MPI_DOUBLE, 0, comm_),
            "MPI_Scatterv");
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  const cudaMemcpy3DParms p = slab_copy(g_.nx, g_.ny, slab_.data(), u_, 0, planes_, true);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&p, compute_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(compute_));  // slab_ is reused by download
}

void RankCuda::step() {
  const std::size_t plane = padded_pitch(g_.nx) * (g_.ny + 2);
  const Coefficients c = kernel_coefficients(a_, options_.factorized);
  auto box = [&](std::size_t z0, std::size_t nz) {
    return Box{1, 1, static_cast<long>(z0), static_cast<long>(g_.nx), static_cast<long>(g_.ny), static_cast<long>(nz),
               static_cast<long>(padded_pitch(g_.nx)), static_cast<long>(g_.ny + 2)};
  };
  launch_xy_halo(u_, g_.nx, g_.ny, 1, planes_ + 1, compute_);
  CUSH_CUDA_CHECK(cudaEventRecord(ready_, compute_));
  // First plane down, last plane up, into the neighbours' ghost planes; the ghost planes here
  // from them. NCCL orders each receive after this stream's earlier work, which read them.
  const int below = (rank_ + ranks_ - 1) % ranks_;
  const int above = (rank_ + 1) % ranks_;
  CUSH_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, ready_, 0));
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  check_nccl(ncclSend(u_ + plane, plane, ncclDouble, below, nccl_, comm_stream_), "ncclSend");
  check_nccl(ncclRecv(u_ + (planes_ + 1) * plane, plane, ncclDouble, above, nccl_, comm_stream_), "ncclRecv");
  check_nccl(ncclSend(u_ + planes_ * plane, plane, ncclDouble, above, nccl_, comm_stream_), "ncclSend");
  check_nccl(ncclRecv(u_, plane, ncclDouble, below, nccl_, comm_stream_), "ncclRecv");
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  CUSH_CUDA_CHECK(cudaEventRecord(sent_, comm_stream_));
  const std::size_t n = planes_;
  const bool overlap = options_.schedule == Schedule::overlap && n > 2;
  if (overlap) launch_stencil(u_, v_, box(2, n - 2), c, compute_);
  CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_, sent_, 0));
  if (overlap) {
    launch_stencil(u_, v_, box(1, 1), c, compute_);
    launch_stencil(u_, v_, box(n, 1), c, compute_);
  } else {
    launch_stencil(u_, v_, box(1, n), c, compute_);
  }
  std::swap(u_, v_);
}

void RankCuda::run(std::size_t steps) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (std::size_t s = 0; s < steps; ++s) step();
}

void RankCuda::wait() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(compute_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(comm_stream_));
}

void RankCuda::download(double* out) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  const cudaMemcpy3DParms p = slab_copy(g_.nx, g_.ny, slab_.data(), u_, 0, planes_, false);
  CUSH_CUDA_CHECK(cudaMemcpy3DAsync(&p, compute_));
  wait();
  check_mpi(MPI_Gatherv(slab_.data(), static_cast<int>(slab_.size()), MPI_DOUBLE, out, counts_.data(), offsets_.data(),
                        MPI_DOUBLE, 0, comm_),
            "MPI_Gatherv");
}

}  // namespace advection
}  // namespace cases
