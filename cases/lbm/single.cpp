// Case "lbm", single-GPU CUDA reference: the whole duct as one slab (no ghost layers) on
// gpus.cuda[0]; the kernels wrap z periodically themselves. A-B pull keeps two lattices and swaps
// them after every step; esoteric pull updates one lattice in place, step k (counted from 1 over
// the object's life) with parity k % 2.
//
// Layout (kernels.hpp): rows padded_pitch(nx) elements apart, populations `stride` elements
// apart with stride a multiple of 64 elements, so that with cudaMalloc's 256-byte alignment every
// row of every population starts 128-byte aligned (FP32 and FP16S alike).

#include <cuda_runtime.h>

#include <stdexcept>
#include <utility>

#include "cush/error.hpp"
#include "kernels.hpp"
#include "lbm.hpp"

namespace cases {
namespace lbm {

namespace {

constexpr std::size_t kStrideAlign = 64;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Frees what the constructor got so far (null pointers and streams are skipped).
void release(int device, cudaStream_t stream, void* a, void* b, float* out) {  // never throws (CUSH_CUDA_CHECK_NOEXCEPT); no noexcept keyword: pmccabe cannot parse it
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
  if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
  if (a != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(a));
  if (b != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(b));
  if (out != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(out));
  if (stream != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
}

}  // namespace

Single::Single(const Duct& duct, const Devices& gpus, Options options) : duct_(duct), options_(options), device_(-1) {
  check(duct);
  if (gpus.cuda.empty()) throw std::invalid_argument("cases::lbm::Single: no GPU given (gpus.cuda is empty)");
  device_ = gpus.cuda[0];
  const std::size_t pitch = padded_pitch(duct.nx);
  const std::size_t stride = round_up(pitch * duct.ny * duct.nz, kStrideAlign);
  Slab s;
  s.stride = stride;
  s.pitch = pitch;
  s.nx = static_cast<int>(duct.nx);
  s.ny = static_cast<int>(duct.ny);
  s.nz = static_cast<int>(duct.nz);
  s.ghost = 0;
  a_ = s;
  b_ = s;
  const std::size_t bytes = kQ * stride * storage_bytes(options.storage);
  try {
    CUSH_CUDA_CHECK(cudaSetDevice(device_));
    CUSH_CUDA_CHECK(cudaStreamCreate(&stream_));
    CUSH_CUDA_CHECK(cudaMalloc(&a_.f, bytes));
    if (options.pattern == Pattern::ab) CUSH_CUDA_CHECK(cudaMalloc(&b_.f, bytes));
    CUSH_CUDA_CHECK(cudaMalloc(&out_, 4 * stride * sizeof(float)));
    for (const Slab* f : {&a_, &b_}) {
      if (f->f == nullptr) continue;
      launch_rest(*f, options.storage, stream_);
      launch_perturb(*f, 0, static_cast<int>(duct.nz), options.perturbation, options.storage, stream_);
    }
  } catch (...) {
    release(device_, stream_, a_.f, b_.f, out_);
    throw;
  }
}

Single::~Single() { release(device_, stream_, a_.f, b_.f, out_); }

void Single::run(std::size_t steps) {
  const Physics p = physics(duct_);
  const int nz = a_.nz;
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  for (std::size_t s = 0; s < steps; ++s) {
    ++steps_;
    if (options_.pattern == Pattern::ab) {
      launch_ab_step(a_, b_, 0, nz, options_.storage, p, stream_);
      std::swap(a_, b_);  // a_ holds the current populations
    } else {
      launch_esoteric_step(a_, 0, nz, static_cast<int>(steps_ % 2), options_.storage, p, stream_);
    }
  }
}

void Single::wait() {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

Moments Single::moments() {
  Slab out = a_;
  out.f = out_;
  const std::size_t nx = duct_.nx, rows = duct_.ny * duct_.nz;
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  launch_moments(options_.pattern, a_, static_cast<int>((steps_ + 1) % 2), options_.storage, physics(duct_), out,
                 stream_);
  Moments m;
  std::vector<float>* parts[4] = {&m.rho, &m.ux, &m.uy, &m.uz};
  for (int c = 0; c < 4; ++c) {
    parts[c]->resize(duct_.cells());
    CUSH_CUDA_CHECK(cudaMemcpy2DAsync(parts[c]->data(), nx * sizeof(float), out_ + c * out.stride,
                                      out.pitch * sizeof(float), nx * sizeof(float), rows, cudaMemcpyDeviceToHost,
                                      stream_));
  }
  CUSH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return m;
}

}  // namespace lbm
}  // namespace cases
