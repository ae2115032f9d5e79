// Case "fft", multi-GPU raw CUDA: each GPU holds N / K points in two buffers (the data and the
// target of the next transpose), its batched row FFTs, two streams and four events. A transpose
// launches, on every GPU g, one kernel per GPU h that stores g's tiles of h's rows straight into
// h's buffer through a peer pointer; g first waits for h's earlier work (h may still read that
// buffer), and h then waits for every g before it reads the result. Row FFTs followed by a
// transpose run chunk by chunk: a chunk's tiles move on the second stream after its FFTs, while
// the next chunk's FFTs run.

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"
#include "fft.hpp"
#include "kernels.hpp"

namespace cases {
namespace fft {

struct MultiCuda::Gpu {
  int device = -1;
  // mover: a pipelined transpose's chunks; copier: the staged copies
  cudaStream_t stream = nullptr, mover = nullptr, copier = nullptr;
  cudaEvent_t ready = nullptr, wrote = nullptr, chunk = nullptr, moved = nullptr, packed = nullptr, copied = nullptr;
  Complex* buf[2] = {nullptr, nullptr};
  Complex* scratch = nullptr;  // staged: the tiles bound for the other GPUs
  std::unique_ptr<RowFfts> ffts;
};

namespace {

// Peer access between every pair of GPUs: required where the transposes store into other GPUs, taken where
// possible when they are staged (copies between GPUs without it go through the host).
void enable_peers(const std::vector<int>& ids, bool required) {
  for (int a : ids)
    for (int b : ids) {
      if (a == b) continue;
      int can = 0;
      CUSH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can && !required) continue;
      if (!can)
        throw std::invalid_argument("cases::fft::MultiCuda: GPU " + std::to_string(a) + " cannot store into GPU " +
                                    std::to_string(b) + " (no peer access; Options::staged copies instead)");
      CUSH_CUDA_CHECK(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CUSH_CUDA_CHECK(e);
    }
}

}  // namespace

MultiCuda::MultiCuda(std::size_t n, const Devices& gpus, Options options) {
  if (gpus.cuda.empty()) throw std::invalid_argument("cases::fft::MultiCuda: no GPU given (gpus.cuda is empty)");
  const int k = static_cast<int>(gpus.cuda.size());
  shape_ = fft::shape(n, k, options.n1);
  chunks_ = options.chunks;
  staged_ = options.staged;
  enable_peers(gpus.cuda, !staged_);
  const std::size_t part = n / static_cast<std::size_t>(k);
  // A scratch buffer wherever a transpose may stage: Options::staged, or the automatic rule's case of
  // two GPUs and 4 or more chunks (the automatic count, or a forced count of 4 or more).
  for (int id : gpus.cuda) one_gpu_ = one_gpu_ && id == gpus.cuda[0];
  const bool may_stage = staged_ || (!one_gpu_ && (chunks_ == 0 || chunks_ >= 4));
  try {
    for (int id : gpus.cuda) {
      gpus_.push_back(Gpu{});
      Gpu& g = gpus_.back();
      g.device = id;
      CUSH_CUDA_CHECK(cudaSetDevice(id));
      for (cudaStream_t* st : {&g.stream, &g.mover, &g.copier})
        CUSH_CUDA_CHECK(cudaStreamCreateWithFlags(st, cudaStreamNonBlocking));
      for (cudaEvent_t* e : {&g.ready, &g.wrote, &g.chunk, &g.moved, &g.packed, &g.copied})
        CUSH_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
      for (Complex*& b : g.buf) CUSH_CUDA_CHECK(cudaMalloc(&b, part * sizeof(Complex)));
      if (may_stage && k > 1) CUSH_CUDA_CHECK(cudaMalloc(&g.scratch, part * sizeof(Complex)));
      g.ffts = std::make_unique<RowFfts>(id, g.stream, shape_, k);
    }
  } catch (...) {
    release();
    throw;
  }
}

MultiCuda::~MultiCuda() { release(); }

// Frees what the constructor got so far; never throws (CUSH_CUDA_CHECK_NOEXCEPT). Every GPU's streams are
// drained before any buffer is freed: a transpose stopped part way may still have another GPU storing into this
// one's buffers.
void MultiCuda::release() {
  drain();
  for (Gpu& g : gpus_) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(g.device));
    g.ffts.reset();
    for (Complex* b : g.buf)
      if (b != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(b));
    if (g.scratch != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(g.scratch));
    for (cudaEvent_t e : {g.ready, g.wrote, g.chunk, g.moved, g.packed, g.copied})
      if (e != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
    for (cudaStream_t st : {g.stream, g.mover, g.copier})
      if (st != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(st));
  }
  gpus_.clear();
}

// Waits for every stream of every GPU; never throws. After a failure part way through a transpose, the mover and
// copier streams may still store into other GPUs' buffers: nothing may reuse or free them before this.
void MultiCuda::drain() {
  for (Gpu& g : gpus_) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(g.device));
    for (cudaStream_t st : {g.stream, g.mover, g.copier})
      if (st != nullptr) CUSH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(st));
  }
}

void MultiCuda::load(const Complex* host) {
  const std::size_t part = shape_.n / gpus_.size();
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    CUSH_CUDA_CHECK(cudaSetDevice(gpus_[g].device));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(gpus_[g].buf[current_], host + g * part, part * sizeof(Complex),
                                    cudaMemcpyHostToDevice, gpus_[g].stream));
  }
}

void MultiCuda::store(Complex* host) {
  const std::size_t part = shape_.n / gpus_.size();
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    CUSH_CUDA_CHECK(cudaSetDevice(gpus_[g].device));
    CUSH_CUDA_CHECK(cudaMemcpyAsync(host + g * part, gpus_[g].buf[current_], part * sizeof(Complex),
                                    cudaMemcpyDeviceToHost, gpus_[g].stream));
  }
}

// The chunks of a GPU's `rows` rows in a pipelined transpose: Options::chunks, at most one a row,
// or cush::TransposeOptions's rule written out (1 on one GPU, else the most of 8, 4, 2 dividing
// the rows with at least 16 MiB a chunk).
std::size_t MultiCuda::chunks(std::size_t rows) const {
  if (chunks_ != 0) return std::min(chunks_, rows);
  if (one_gpu_) return 1;
  const std::size_t bytes = shape_.n / gpus_.size() * sizeof(Complex);
  for (std::size_t c = 8; c > 1; c /= 2)
    if (rows % c == 0 && bytes / c >= (std::size_t{16} << 20)) return c;
  return 1;
}

// A transpose, after the row FFTs `fft` if given (then chunk by chunk: on every GPU chunk c's FFTs
// run on its stream and its tiles move on the mover stream after them, while chunk c + 1's FFTs
// run). Staged, a chunk's tiles for another GPU go to the scratch buffer, and the copier stream
// copies them over after the chunk's kernels, beside the next chunk's: with Options::staged, else
// cush::TransposeOptions's automatic rule written out (between two GPUs in 4 or more chunks).
void MultiCuda::transpose(const Step* fft, const Step& step) {
  try {
    enqueue_transpose(fft, step);
  } catch (...) {
    drain();  // what was enqueued finishes before the caller may touch the buffers again
    throw;
  }
  current_ = 1 - current_;
}

void MultiCuda::enqueue_transpose(const Step* fft, const Step& step) {
  const std::size_t k = gpus_.size();
  const std::size_t rows = step.rows / k, cols = step.cols / k;  // per GPU: source rows, target rows
  const std::size_t count = fft != nullptr ? chunks(rows) : 1;
  for (Gpu& h : gpus_) CUSH_CUDA_CHECK(cudaEventRecord(h.ready, h.stream));
  for (Gpu& g : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(g.device));
    for (Gpu& h : gpus_) CUSH_CUDA_CHECK(cudaStreamWaitEvent(g.stream, h.ready, 0));
  }
  for (std::size_t c = 0; c < count; ++c)
    for (std::size_t g = 0; g < k; ++g) {
      Gpu& src = gpus_[g];
      const std::size_t begin = c * rows / count, n = (c + 1) * rows / count - begin;
      Complex* part = src.buf[current_] + begin * step.cols;
      CUSH_CUDA_CHECK(cudaSetDevice(src.device));
      if (fft != nullptr) src.ffts->run(part, n, fft->cols, fft->direction, src.stream);
      const cudaStream_t move = count > 1 ? src.mover : src.stream;
      if (count > 1) {
        CUSH_CUDA_CHECK(cudaEventRecord(src.chunk, src.stream));
        CUSH_CUDA_CHECK(cudaStreamWaitEvent(src.mover, src.chunk, 0));
      }
      const auto staged = [&](std::size_t h) {
        return h != g && src.scratch != nullptr && (staged_ || (count >= 4 && gpus_[h].device != src.device));
      };
      bool any = false;
      for (std::size_t h = 0; h < k; ++h) {
        const bool direct = !staged(h);
        any = any || !direct;
        Complex* to = direct ? gpus_[h].buf[1 - current_] + g * rows + begin : src.scratch + h * cols * rows + begin * cols;
        launch_transpose(part, n, step.cols, g * rows + begin, h * cols, cols, to, direct ? step.rows : n, shape_.n,
                         step.twiddle, move);
      }
      if (!any) continue;
      const cudaStream_t copy = count > 1 ? src.copier : move;
      if (count > 1) {
        CUSH_CUDA_CHECK(cudaEventRecord(src.packed, move));
        CUSH_CUDA_CHECK(cudaStreamWaitEvent(copy, src.packed, 0));
      }
      for (std::size_t h = 0; h < k; ++h) {  // cols rows of n values, into rows of step.rows on GPU h
        if (!staged(h)) continue;
        const std::size_t width = n * sizeof(Complex);
        cudaMemcpy3DPeerParms p{};
        p.srcPtr = make_cudaPitchedPtr(src.scratch + h * cols * rows + begin * cols, width, width, cols);
        p.srcDevice = src.device;
        p.dstPtr = make_cudaPitchedPtr(gpus_[h].buf[1 - current_] + g * rows + begin, step.rows * sizeof(Complex), width, cols);
        p.dstDevice = gpus_[h].device;
        p.extent = make_cudaExtent(width, cols, 1);
        CUSH_CUDA_CHECK(cudaMemcpy3DPeerAsync(&p, copy));
      }
    }
  for (Gpu& g : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(g.device));
    if (count > 1) {
      CUSH_CUDA_CHECK(cudaEventRecord(g.moved, g.mover));
      CUSH_CUDA_CHECK(cudaStreamWaitEvent(g.stream, g.moved, 0));
      if (g.scratch != nullptr) {
        CUSH_CUDA_CHECK(cudaEventRecord(g.copied, g.copier));
        CUSH_CUDA_CHECK(cudaStreamWaitEvent(g.stream, g.copied, 0));
      }
    }
    CUSH_CUDA_CHECK(cudaEventRecord(g.wrote, g.stream));
  }
  for (Gpu& h : gpus_)
    for (Gpu& g : gpus_) CUSH_CUDA_CHECK(cudaStreamWaitEvent(h.stream, g.wrote, 0));
}

void MultiCuda::run(const std::vector<Step>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    if (step.kind == Step::transpose) {
      transpose(nullptr, step);
    } else if (i + 1 < steps.size()) {
      transpose(&step, steps[++i]);
    } else {
      for (Gpu& g : gpus_) {
        CUSH_CUDA_CHECK(cudaSetDevice(g.device));
        g.ffts->run(g.buf[current_], step.rows / gpus_.size(), step.cols, step.direction);
      }
    }
  }
}

void MultiCuda::forward(Order in, Order out) { run(program(shape_, Direction::forward, in, out)); }
void MultiCuda::inverse(Order in, Order out) { run(program(shape_, Direction::inverse, in, out)); }

void MultiCuda::convolve(const MultiCuda& kernel, Order signal) {
  if (&kernel == this) throw std::invalid_argument("cases::fft::MultiCuda::convolve: the kernel must be another transform");
  bool same = kernel.shape_.n == shape_.n && kernel.shape_.n1 == shape_.n1 && kernel.gpus_.size() == gpus_.size();
  for (std::size_t g = 0; same && g < gpus_.size(); ++g) same = kernel.gpus_[g].device == gpus_[g].device;
  if (!same)
    throw std::invalid_argument("cases::fft::MultiCuda::convolve: the kernel is a transform of another shape or GPUs");
  forward(signal, Order::transposed);
  const std::size_t part = shape_.n / gpus_.size();
  for (std::size_t g = 0; g < gpus_.size(); ++g) {  // each GPU: its part of both spectra, after the kernel's
    Gpu& mine = gpus_[g];
    CUSH_CUDA_CHECK(cudaSetDevice(mine.device));
    CUSH_CUDA_CHECK(cudaEventRecord(mine.ready, kernel.gpus_[g].stream));
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(mine.stream, mine.ready, 0));
    launch_multiply(mine.buf[current_], kernel.gpus_[g].buf[kernel.current_], part, 1.0f / static_cast<float>(shape_.n),
                    mine.stream);
  }
  inverse(Order::transposed, signal);
}

void MultiCuda::wait() {
  for (Gpu& g : gpus_) {
    CUSH_CUDA_CHECK(cudaSetDevice(g.device));
    for (cudaStream_t st : {g.stream, g.mover, g.copier}) CUSH_CUDA_CHECK(cudaStreamSynchronize(st));
  }
}

}  // namespace fft
}  // namespace cases
