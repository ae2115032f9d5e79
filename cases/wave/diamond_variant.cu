// Case "wave", the DiamondTorre variant (diamond_variant.hpp): the periodic grid in a block of
// z-fast columns with T ghost columns a side, a sweep of T steps at a time.

#include "diamond_variant.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "coefficients.hpp"
#include "cush/error.hpp"
#include "diamond.hpp"
#include "diamond_ghosts.cuh"

namespace cases {
namespace wave {
namespace {

constexpr int kThreads = 256;

/// The grid (x fastest, n^3) into the block's owned columns, or (`to_block` false) back.
__global__ void block_copy(const double* __restrict__ from, double* __restrict__ to, long n, long t, bool to_block) {
  const long side = n + 2 * t, total = n * n * n;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long>(gridDim.x) * blockDim.x) {
    const long x = i % n, y = (i / n) % n, z = i / (n * n);
    const long b = z + n * ((x + t) + side * (y + t));
    if (to_block) {
      to[b] = from[i];
    } else {
      to[i] = from[b];
    }
  }
}

/// Every ghost column of both levels from the grid column it stands for (diamond_ghosts.cuh): a
/// column a block (grid-stride), the z nodes over its threads.
__global__ void fill_ghost_columns(double* __restrict__ a, double* __restrict__ b, long n, long t) {
  const long side = n + 2 * t, columns = ghosts::count(n, t);
  for (long g = blockIdx.x; g < columns; g += gridDim.x) {
    const ghosts::Column c = ghosts::column(g, n, t);
    const long dst = n * (c.x + side * c.y), src = n * (c.sx + side * c.sy);
    for (long z = threadIdx.x; z < n; z += blockDim.x) {
      a[dst + z] = a[src + z];
      b[dst + z] = b[src + z];
    }
  }
}

unsigned blocks_for(long work) {
  const long wanted = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 65536 ? (wanted > 0 ? wanted : 1) : 65536);
}

}  // namespace

void Diamond::check(const Problem& p, const DiamondOptions& o) {
  const auto refuse = [&](const std::string& why) {
    return std::invalid_argument("cases::wave::Diamond: " + why);
  };
  if (p.order != 2) throw refuse("DiamondTorre runs order 2 only (asked: order " + std::to_string(p.order) + ")");
  if (p.n < 3 || p.n > 2048) throw refuse(std::to_string(p.n) + " nodes a side (3 .. 2048)");
  check_courant(2, p.courant);
  if (o.radius < 1 || o.radius > 3) throw refuse("radius " + std::to_string(o.radius) + " (1 .. 3)");
  if (o.steps < 1 || o.steps > 1024) throw refuse(std::to_string(o.steps) + " steps a sweep (1 .. 1024)");
  if (!known(o.reads)) throw refuse("not a DiamondReads");
  (void)diamond_chunks(p.n, o.chunks);  // std::invalid_argument for a split it cannot run
}

Diamond::Diamond(Problem p, const Devices& gpus, DiamondOptions options)
    : p_(p), options_(options), device_(gpus.cuda.at(0)), side_(p.n + 2 * options.steps) {
  check(p_, options_);
  try {
    const std::size_t block = side_ * side_ * p_.n, grid = p_.points();
    CUSH_CUDA_CHECK(cudaSetDevice(device_));
    CUSH_CUDA_CHECK(cudaStreamCreate(&stream_));
    CUSH_CUDA_CHECK(cudaMalloc(&older_, block * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMalloc(&current_, block * sizeof(double)));
    CUSH_CUDA_CHECK(cudaMalloc(&staging_, grid * sizeof(double)));
    (void)sweep_of(options_.steps);
  } catch (...) {
    release();
    throw;
  }
}

Diamond::~Diamond() {
  if (stream_ != nullptr) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
  }
  release();
}

void Diamond::release() noexcept {
  (void)cudaSetDevice(device_);  // releasing: a failure here leaves only what follows to fail
  sweeps_.clear();
  for (double** p : {&older_, &current_, &staging_})
    if (*p != nullptr) {
      CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(*p));
      *p = nullptr;
    }
  if (stream_ != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
  stream_ = nullptr;
}

const DiamondSweep& Diamond::sweep_of(std::size_t steps) {
  auto& s = sweeps_[steps];
  if (!s) s = std::make_unique<DiamondSweep>(options_.radius, side_, side_, p_.n, steps, options_.reads, options_.chunks);
  return *s;
}

void Diamond::upload(const double* prev, const double* cur) {
  const std::size_t bytes = p_.points() * sizeof(double);
  const auto n = static_cast<long>(p_.n), t = static_cast<long>(options_.steps);
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (const auto& [host, level] : {std::pair{prev, older_}, std::pair{cur, current_}}) {
    CUSH_CUDA_CHECK(cudaMemcpyAsync(staging_, host, bytes, cudaMemcpyHostToDevice, stream_));
    block_copy<<<blocks_for(n * n * n), kThreads, 0, stream_>>>(staging_, level, n, t, true);
    CUSH_CUDA_CHECK(cudaGetLastError());
  }
}

void Diamond::fill_ghosts() {
  const auto n = static_cast<long>(p_.n), t = static_cast<long>(options_.steps);
  const long columns = ghosts::count(n, t);
  fill_ghost_columns<<<static_cast<unsigned>(columns < 65536 ? columns : 65536), kThreads, 0, stream_>>>(older_, current_, n, t);
  CUSH_CUDA_CHECK(cudaGetLastError());
}

void Diamond::run(std::size_t steps) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (std::size_t done = 0; done < steps;) {
    const std::size_t t = std::min(options_.steps, steps - done);
    const DiamondSweep& sweep = sweep_of(t);
    // A shorter last sweep reads and spoils fewer ghost columns than the block has: the same
    // fill serves it.
    fill_ghosts();
    sweep.run(current_, older_, p_.courant, stream_);  // level 0 in `even`, -1 in `odd`
    if (t % 2 == 1) std::swap(current_, older_);     // level t is in the array of t's parity
    done += t;
  }
}

void Diamond::wait() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void Diamond::download(double* prev, double* cur) {
  const std::size_t bytes = p_.points() * sizeof(double);
  const auto n = static_cast<long>(p_.n), t = static_cast<long>(options_.steps);
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (const auto& [host, level] : {std::pair{prev, older_}, std::pair{cur, current_}}) {
    if (host == nullptr) continue;
    block_copy<<<blocks_for(n * n * n), kThreads, 0, stream_>>>(level, staging_, n, t, false);
    CUSH_CUDA_CHECK(cudaGetLastError());
    CUSH_CUDA_CHECK(cudaMemcpyAsync(host, staging_, bytes, cudaMemcpyDeviceToHost, stream_));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));  // staging is reused by the next level
  }
}

}  // namespace wave
}  // namespace cases
