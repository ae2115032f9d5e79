// Case "lbm", multi-GPU raw CUDA: the duct split along z into one slab per GPU, each stored with
// one ghost layer below and above (kernels.hpp). Face g lies between GPU g and GPU g + 1 (a
// ring: the duct is periodic along z, so with one GPU its one face joins the slab to itself).
// After every step, GPU g's copy stream moves the population planes that cross face g, both
// ways, once both GPUs have finished the step (cudaMemcpyPeerAsync of whole (layer, population)
// planes): for A-B pull the populations the next step pulls across the face into the ghost
// layers of the lattice just written; for esoteric pull esoteric_exchange(parity): the slots the
// next step reads from the ghosts (fill), and the slots the step wrote into the ghosts back to the
// cells they stand for (return). The next step updates its interior layers meanwhile (they touch
// no plane that crosses), then its two boundary layers once both faces' copies are done. Events
// order the GPUs: `updated` after a GPU's step, `copied` after a face's copies.

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "lbm.hpp"

namespace cases {
namespace lbm {

namespace {

/// Populations of a slab are this many elements apart at least (rounded up to it).
constexpr std::size_t kStrideAlign = 64;

/// The address of the (z layer, population i) plane of `s` (pitch * ny elements of `element` bytes).
char* plane(const Slab& s, int z, int i, std::size_t element) {
  const std::size_t offset = static_cast<std::size_t>(i) * s.stride + s.pitch * s.ny * static_cast<std::size_t>(z + s.ghost);
  return static_cast<char*>(s.f) + offset * element;
}

/// Lets `device` reach `peer`'s memory directly where the two can.
void enable_peer_access(int device, int peer) {
  int possible = 0;
  CUSH_CUDA_CHECK(cudaDeviceCanAccessPeer(&possible, device, peer));
  if (!possible) return;  // cudaMemcpyPeerAsync goes through the host then
  CUSH_CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
  else CUSH_CUDA_CHECK(e);
}

}  // namespace

struct MultiCuda::Gpu {
  int device = 0;
  std::size_t first = 0;          ///< its first owned layer in the duct
  std::array<Slab, 2> f{};        ///< the lattices; f[1].f is null for esoteric pull
  float* moments = nullptr;       ///< rho, ux, uy, uz of the owned cells, nx * ny * nz each
  cudaStream_t compute = nullptr;
  cudaStream_t copy = nullptr;    ///< the copies across face g (this GPU's top face)
  cudaEvent_t updated = nullptr;  ///< on compute, after each step
  cudaEvent_t copied = nullptr;   ///< on copy, after each exchange

  void create(const Duct& duct, const Options& options, int layers);
  void step(const Options& options, int parity, Physics physics, int z0, int z1) const;
  template <std::size_t N>
  void copy_planes(const Gpu& to, int to_z, const Gpu& from, int from_z, int lattice, const std::array<int, N>& slots,
                   std::size_t element) const;
  void copy_face(const Gpu& upper, const Options& options, int parity) const;
  void synchronize();  // never throws (reports errors on stderr), as release()
  void release();
};

void MultiCuda::Gpu::create(const Duct& duct, const Options& options, int layers) {
  const std::size_t pitch = padded_pitch(duct.nx);
  const std::size_t cells = pitch * duct.ny * static_cast<std::size_t>(layers + 2);
  const std::size_t stride = (cells + kStrideAlign - 1) / kStrideAlign * kStrideAlign;
  CUSH_CUDA_CHECK(cudaSetDevice(device));
  CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&updated, cudaEventDisableTiming));
  CUSH_CUDA_CHECK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  CUSH_CUDA_CHECK(cudaMalloc(&moments, 4 * duct.nx * duct.ny * static_cast<std::size_t>(layers) * sizeof(float)));
  const int lattices = options.pattern == Pattern::ab ? 2 : 1;
  for (int l = 0; l < lattices; ++l) {
    f[l] = Slab{nullptr, stride, pitch, static_cast<int>(duct.nx), static_cast<int>(duct.ny), layers, 1};
    CUSH_CUDA_CHECK(cudaMalloc(&f[l].f, kQ * stride * storage_bytes(options.storage)));
    launch_rest(f[l], options.storage, compute);
    launch_perturb(f[l], static_cast<int>(first), static_cast<int>(duct.nz), options.perturbation, options.storage, compute);
  }
}

/// Layers [z0, z1) of the step with parity `parity` on the compute stream.
void MultiCuda::Gpu::step(const Options& options, int parity, Physics physics, int z0, int z1) const {
  if (options.pattern == Pattern::ab) launch_ab_step(f[1 - parity], f[parity], z0, z1, options.storage, physics, compute);
  else launch_esoteric_step(f[0], z0, z1, parity, options.storage, physics, compute);
}

/// Planes `slots` of layer from_z of `from`'s lattice `lattice` into the same slots of layer
/// to_z of `to`'s, on the copy stream.
template <std::size_t N>
void MultiCuda::Gpu::copy_planes(const Gpu& to, int to_z, const Gpu& from, int from_z, int lattice,
                                 const std::array<int, N>& slots, std::size_t element) const {
  const Slab& t = to.f[lattice];
  const Slab& s = from.f[lattice];
  const std::size_t bytes = s.pitch * s.ny * element;
  for (int i : slots)
    CUSH_CUDA_CHECK(cudaMemcpyPeerAsync(plane(t, to_z, i, element), to.device, plane(s, from_z, i, element),
                                        from.device, bytes, copy));
}

/// The copies across the face between this GPU (below) and `upper`, after a step of parity
/// `parity`. No two of them touch the same plane, even with one-layer slabs or upper == *this.
void MultiCuda::Gpu::copy_face(const Gpu& upper, const Options& options, int parity) const {
  const std::size_t element = storage_bytes(options.storage);
  const int top = f[0].nz - 1;
  const int above = f[0].nz;
  if (options.pattern == Pattern::ab) {  // the lattice just written, f[parity]
    copy_planes(upper, -1, *this, top, parity, kAbUp, element);
    copy_planes(*this, above, upper, 0, parity, kAbDown, element);
    return;
  }
  const EsotericExchange e = esoteric_exchange(parity);
  copy_planes(upper, -1, *this, top, 0, e.fill_up, element);
  copy_planes(*this, above, upper, 0, 0, e.fill_down, element);
  copy_planes(upper, 0, *this, above, 0, e.return_up, element);
  copy_planes(*this, top, upper, -1, 0, e.return_down, element);
}

void MultiCuda::Gpu::synchronize() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(compute));
  if (copy != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(copy));
}

/// Frees what create() made (all of it or a part).
void MultiCuda::Gpu::release() {
  if (compute == nullptr) return;  // create() made nothing: this stream comes first
  synchronize();
  for (Slab& s : f) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(s.f));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(moments));
  if (updated != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(updated));
  if (copied != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(copied));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(compute));
  if (copy != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(copy));
}

MultiCuda::MultiCuda(const Duct& duct, const Devices& gpus, Options options) : duct_(duct), options_(options) {
  check(duct);
  const int count = gpus.count();
  if (count < 1) throw std::invalid_argument("cases::lbm::MultiCuda: no GPUs");
  if (duct.nz < static_cast<std::size_t>(count))
    throw std::invalid_argument("cases::lbm::MultiCuda: " + std::to_string(duct.nz) + " z layers for " +
                                std::to_string(count) + " GPUs (at least one layer each)");
  gpus_.resize(count);
  try {
    std::size_t z = 0;
    for (int g = 0; g < count; ++g) {
      const int layers = static_cast<int>(duct.nz / count + (static_cast<std::size_t>(g) < duct.nz % count ? 1 : 0));
      gpus_[g].device = gpus.cuda[g];
      gpus_[g].first = z;
      z += layers;
      gpus_[g].create(duct, options, layers);
      for (int peer : {(g + count - 1) % count, (g + 1) % count})
        if (gpus.cuda[peer] != gpus.cuda[g]) enable_peer_access(gpus.cuda[g], gpus.cuda[peer]);
    }
  } catch (...) {
    for (Gpu& gpu : gpus_) gpu.release();
    throw;
  }
}

MultiCuda::~MultiCuda() {
  for (Gpu& gpu : gpus_) gpu.synchronize();  // copies read and write the neighbours' memory
  for (Gpu& gpu : gpus_) gpu.release();
}

// Step k = steps_: the interior while the exchange after step k - 1 is in flight, then the two
// boundary layers once the copies across both faces of the slab are done.
void MultiCuda::step() {
  ++steps_;
  const int parity = static_cast<int>(steps_ % 2);
  const Physics p = physics(duct_);
  const int count = static_cast<int>(gpus_.size());
  for (int g = 0; g < count; ++g) {
    const Gpu& gpu = gpus_[g];
    const Gpu& below = gpus_[(g + count - 1) % count];
    const int nz = gpu.f[0].nz;
    const bool split = options_.overlap && nz > 2;
    CUSH_CUDA_CHECK(cudaSetDevice(gpu.device));
    if (split) gpu.step(options_, parity, p, 1, nz - 1);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(gpu.compute, gpu.copied, 0));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(gpu.compute, below.copied, 0));
    if (split) {
      gpu.step(options_, parity, p, 0, 1);
      gpu.step(options_, parity, p, nz - 1, nz);
    } else {
      gpu.step(options_, parity, p, 0, nz);
    }
    CUSH_CUDA_CHECK(cudaEventRecord(gpu.updated, gpu.compute));
  }
}

// The exchange after step steps_: face g's copies on GPU g's copy stream, after both GPUs of
// the face finished the step.
void MultiCuda::exchange() {
  const int parity = static_cast<int>(steps_ % 2);
  const int count = static_cast<int>(gpus_.size());
  for (int g = 0; g < count; ++g) {
    const Gpu& gpu = gpus_[g];
    const Gpu& upper = gpus_[(g + 1) % count];
    CUSH_CUDA_CHECK(cudaSetDevice(gpu.device));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(gpu.copy, gpu.updated, 0));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(gpu.copy, upper.updated, 0));
    gpu.copy_face(upper, options_, parity);
    CUSH_CUDA_CHECK(cudaEventRecord(gpu.copied, gpu.copy));
  }
}

void MultiCuda::run(std::size_t steps) {
  for (std::size_t s = 0; s < steps; ++s) {
    step();
    exchange();
  }
}

void MultiCuda::wait() {
  for (Gpu& gpu : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(gpu.device));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(gpu.compute));
    CUSH_CUDA_CHECK(cudaStreamSynchronize(gpu.copy));
  }
}

// The ghost layers are already what the next step reads (the exchange follows every step; at
// rest before the first): the moments wait for the copies across both faces, like a boundary update.
Moments MultiCuda::moments() {
  const std::size_t layer = duct_.nx * duct_.ny;
  Moments m{std::vector<float>(duct_.cells()), std::vector<float>(duct_.cells()), std::vector<float>(duct_.cells()),
            std::vector<float>(duct_.cells())};
  const std::array<float*, 4> host{m.rho.data(), m.ux.data(), m.uy.data(), m.uz.data()};
  const int parity = static_cast<int>((steps_ + 1) % 2);
  const int count = static_cast<int>(gpus_.size());
  for (int g = 0; g < count; ++g) {
    const Gpu& gpu = gpus_[g];
    const Slab& f = gpu.f[options_.pattern == Pattern::ab ? steps_ % 2 : 0];
    const std::size_t n = layer * static_cast<std::size_t>(f.nz);
    const Slab out{gpu.moments, n, duct_.nx, f.nx, f.ny, f.nz, 0};
    CUSH_CUDA_CHECK(cudaSetDevice(gpu.device));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(gpu.compute, gpu.copied, 0));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(gpu.compute, gpus_[(g + count - 1) % count].copied, 0));
    launch_moments(options_.pattern, f, parity, options_.storage, physics(duct_), out, gpu.compute);
    for (std::size_t a = 0; a < host.size(); ++a)
      CUSH_CUDA_CHECK(cudaMemcpyAsync(host[a] + gpu.first * layer, gpu.moments + a * n, n * sizeof(float),
                                      cudaMemcpyDeviceToHost, gpu.compute));
  }
  wait();
  return m;
}

}  // namespace lbm
}  // namespace cases
