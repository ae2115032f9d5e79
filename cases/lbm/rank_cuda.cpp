// Case "lbm", raw MPI + NCCL across processes: multi_cuda.cpp with one process per GPU. Each rank
// holds one z slab with a ghost layer below and above. Face r lies between rank r and rank r + 1
// (a ring). After every step the planes that cross the slab's two faces leave and arrive with
// ncclSend / ncclRecv on a copy stream, once this rank's step is done (NCCL starts a transfer when
// both ends have posted it, so the neighbour's step is done too); the next step updates its
// interior layers meanwhile, then its two boundary layers once the copies are done. NCCL pairs the
// transfers between two ranks in the order both post them: both ends walk their faces in the
// order of the faces' numbers and each face's plane lists in one order (with two ranks, both faces
// join the same pair).

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "ranks.hpp"

namespace cases {
namespace lbm {

namespace {

constexpr std::size_t kStrideAlign = 64;  // as multi_cuda.cpp

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("cases::lbm::RankCuda: ") + call + " failed");
}

void check_nccl(ncclResult_t rc, const char* call) {
  if (rc != ncclSuccess) throw std::runtime_error(std::string("cases::lbm::RankCuda: ") + call + ": " + ncclGetErrorString(rc));
}

char* plane(const Slab& s, int z, int i, std::size_t element) {
  const std::size_t offset = static_cast<std::size_t>(i) * s.stride + s.pitch * s.ny * static_cast<std::size_t>(z + s.ghost);
  return static_cast<char*>(s.f) + offset * element;
}

// One list of planes crossing a face: `slots` of layer `from_z` of the lower (`up`) or upper rank,
// into the same slots of layer `to_z` of the other.
struct Crossing {
  bool up = true;  // from the lower rank to the upper one
  int from_z = 0, to_z = 0;
  std::vector<int> slots;
};

// What crosses a face after a step of parity `parity` (multi_cuda.cpp's copy_face), for slabs of
// nz_low (the lower rank's layers); the upper rank's layers are numbered from 0, its ghost below -1.
std::vector<Crossing> crossings(const Options& o, int parity, int nz_low) {
  const int top = nz_low - 1, above = nz_low;
  const auto list = [](const auto& a) { return std::vector<int>(a.begin(), a.end()); };
  if (o.pattern == Pattern::ab) return {{true, top, -1, list(kAbUp)}, {false, 0, above, list(kAbDown)}};
  const EsotericExchange e = esoteric_exchange(parity);
  return {{true, top, -1, list(e.fill_up)},
          {false, 0, above, list(e.fill_down)},
          {true, above, 0, list(e.return_up)},
          {false, -1, top, list(e.return_down)}};
}

}  // namespace

RankCuda::RankCuda(MPI_Comm comm, int device, const Duct& duct, Options options)
    : comm_(comm), device_(device), duct_(duct), options_(options) {
  check(duct);
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &ranks_), "MPI_Comm_size");
  if (duct.nz < static_cast<std::size_t>(ranks_))
    throw std::invalid_argument("cases::lbm::RankCuda: " + std::to_string(duct.nz) + " z layers for " +
                                std::to_string(ranks_) + " ranks (at least one layer each)");
  int layers = 0, first = 0;
  for (int r = 0; r < ranks_; ++r) {
    const int n = static_cast<int>(duct.nz / ranks_ + (static_cast<std::size_t>(r) < duct.nz % ranks_ ? 1 : 0));
    counts_.push_back(n * static_cast<int>(duct.nx * duct.ny));
    offsets_.push_back(first);
    first += counts_.back();
    if (r == rank_) layers = n;
  }
  ncclUniqueId id{};
  if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm_), "MPI_Bcast");
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  check_nccl(ncclCommInitRank(&nccl_, ranks_, id, rank_), "ncclCommInitRank");
  const std::size_t pitch = padded_pitch(duct.nx);
  const std::size_t cells = pitch * duct.ny * static_cast<std::size_t>(layers + 2);
  const std::size_t stride = (cells + kStrideAlign - 1) / kStrideAlign * kStrideAlign;
  CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
  CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
  CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&updated_, cudaEventDisableTiming));
  CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
  CUSH_CUDA_CHECK(cudaMalloc(&moments_, 4 * duct.nx * duct.ny * static_cast<std::size_t>(layers) * sizeof(float)));
  const int lattices = options.pattern == Pattern::ab ? 2 : 1;
  for (int l = 0; l < lattices; ++l) {
    f_[l] = Slab{nullptr, stride, pitch, static_cast<int>(duct.nx), static_cast<int>(duct.ny), layers, 1};
    CUSH_CUDA_CHECK(cudaMalloc(&f_[l].f, kQ * stride * storage_bytes(options.storage)));
    launch_rest(f_[l], options.storage, compute_);
    launch_perturb(f_[l], offsets_[static_cast<std::size_t>(rank_)] / static_cast<int>(duct.nx * duct.ny),
                   static_cast<int>(duct.nz), options.perturbation, options.storage, compute_);
  }
  CUSH_CUDA_CHECK(cudaEventRecord(copied_, copy_));  // nothing to wait for before the first step
}

RankCuda::~RankCuda() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
  if (nccl_ != nullptr) (void)ncclCommDestroy(nccl_);
  for (Slab& s : f_) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(s.f));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(moments_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(updated_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(copied_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(compute_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(copy_));
}

// Step k = steps_: the interior while the exchange after step k - 1 is in flight, then the two
// boundary layers once it is done.
void RankCuda::step() {
  ++steps_;
  const int parity = static_cast<int>(steps_ % 2);
  const Physics p = physics(duct_);
  const int nz = f_[0].nz;
  const auto update = [&](int z0, int z1) {
    if (options_.pattern == Pattern::ab) launch_ab_step(f_[1 - parity], f_[parity], z0, z1, options_.storage, p, compute_);
    else launch_esoteric_step(f_[0], z0, z1, parity, options_.storage, p, compute_);
  };
  const bool split = options_.overlap && nz > 2;
  if (split) update(1, nz - 1);
  CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_, copied_, 0));
  if (split) {
    update(0, 1);
    update(nz - 1, nz);
  } else {
    update(0, nz);
  }
  CUSH_CUDA_CHECK(cudaEventRecord(updated_, compute_));
}

// The exchange after step steps_: this rank's two faces, bottom (with the rank below) and top
// (with the rank above), in the order of the faces' numbers, on the copy stream.
void RankCuda::exchange() {
  const int parity = static_cast<int>(steps_ % 2);
  const int lattice = options_.pattern == Pattern::ab ? parity : 0;
  const std::size_t element = storage_bytes(options_.storage);
  const Slab& s = f_[lattice];
  const std::size_t count = s.pitch * s.ny * element;
  const int below = (rank_ + ranks_ - 1) % ranks_, above = (rank_ + 1) % ranks_;
  // Face r joins rank r (lower) and rank r + 1 (upper): this rank is the lower end of face rank_
  // and the upper end of face `below`. With one rank both are face 0, with this rank at both ends.
  std::vector<std::pair<int, bool>> faces{{below, false}, {rank_, true}};  // (face, this rank is its lower end)
  std::sort(faces.begin(), faces.end());
  if (ranks_ == 1) faces = {{0, true}};
  CUSH_CUDA_CHECK(cudaStreamWaitEvent(copy_, updated_, 0));
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (const auto& [face, lower] : faces) {
    const int peer = lower ? above : below;
    // Each end uses only its own layer numbers: the lower end's from its slab's top, the upper
    // end's (-1 and 0) from its first layer.
    for (const Crossing& c : crossings(options_, parity, s.nz)) {
      for (int i : c.slots) {
        if (ranks_ == 1) {  // this slab at both ends: a copy within the GPU
          CUSH_CUDA_CHECK(cudaMemcpyAsync(plane(s, c.to_z, i, element), plane(s, c.from_z, i, element), count,
                                          cudaMemcpyDeviceToDevice, copy_));
          continue;
        }
        const bool sending = c.up == lower;  // up: the lower end sends
        const int z = sending ? c.from_z : c.to_z;
        if (sending) check_nccl(ncclSend(plane(s, z, i, element), count, ncclChar, peer, nccl_, copy_), "ncclSend");
        else check_nccl(ncclRecv(plane(s, z, i, element), count, ncclChar, peer, nccl_, copy_), "ncclRecv");
      }
    }
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  CUSH_CUDA_CHECK(cudaEventRecord(copied_, copy_));
}

void RankCuda::run(std::size_t steps) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (std::size_t s = 0; s < steps; ++s) {
    step();
    exchange();
  }
}

void RankCuda::wait() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(compute_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(copy_));
}

// The ghost layers are already what the next step reads: the moments wait for the exchange, then
// every rank's go to rank 0.
Moments RankCuda::moments() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  const Slab& f = f_[options_.pattern == Pattern::ab ? steps_ % 2 : 0];
  const std::size_t n = duct_.nx * duct_.ny * static_cast<std::size_t>(f.nz);
  const Slab out{moments_, n, duct_.nx, f.nx, f.ny, f.nz, 0};
  const int parity = static_cast<int>((steps_ + 1) % 2);
  CUSH_CUDA_CHECK(cudaStreamWaitEvent(compute_, copied_, 0));
  launch_moments(options_.pattern, f, parity, options_.storage, physics(duct_), out, compute_);
  std::vector<float> mine(4 * n);
  CUSH_CUDA_CHECK(cudaMemcpyAsync(mine.data(), moments_, mine.size() * sizeof(float), cudaMemcpyDeviceToHost, compute_));
  wait();
  const bool root = rank_ == 0;
  Moments m;
  for (std::vector<float>* part : {&m.rho, &m.ux, &m.uy, &m.uz}) part->resize(root ? duct_.cells() : 0);
  const std::array<std::vector<float>*, 4> parts{&m.rho, &m.ux, &m.uy, &m.uz};
  for (std::size_t a = 0; a < parts.size(); ++a)
    check_mpi(MPI_Gatherv(mine.data() + a * n, static_cast<int>(n), MPI_FLOAT, root ? parts[a]->data() : nullptr,
                          counts_.data(), offsets_.data(), MPI_FLOAT, 0, comm_),
              "MPI_Gatherv");
  return m;
}

}  // namespace lbm
}  // namespace cases
