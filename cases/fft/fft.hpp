#pragma once
// Case "fft" (seed 002 §2.6.5, Listings A.5/A.6): a large single-precision complex 1D FFT of
// N = N1 * N2 points over K GPUs, computed by the four-step algorithm with the transposes between
// GPUs as all-to-alls. README.md has the algorithm, the measurements and ../shared/specs/fft.md's
// background.
//
// Every variant has one interface, so one test checks them all and one benchmark times them all:
//
//     Variant v(n, gpus);            // allocates (throws std::invalid_argument for a bad n)
//     v.load(host);                  // n values, in the order the next transform reads
//     v.forward(Order::natural, Order::transposed);   // asynchronous
//     v.store(host);                 // n values, in the order the last transform wrote
//     v.wait();
//
// and a circular convolution, the kernel's spectrum made once and kept:
//
//     Variant k(n, gpus);  k.load(kernel); k.forward(Order::natural, Order::transposed);
//     v.load(signal);      v.convolve(k);  v.store(result);  v.wait();
//
// convolve() reads the kernel's spectrum on the signal's streams: change or destroy the kernel's
// transform only after the signal's wait() has returned.
//
// Transforms are unnormalised: inverse(forward(x)) = N x. The single-GPU reference (one cuFFT
// call) and cufftXt take natural orders only.

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "devices.hpp"

namespace cases {
namespace fft {

using Complex = float2;  // cufftComplex

/// How a signal of N points is laid out over the GPUs (concatenated in device order).
///  - natural: element j at position j.
///  - transposed: the time signal x as the N2 x N1 matrix x_t[b][a] = x[N2 a + b], the spectrum X
///    as the N1 x N2 matrix X_t[k1][k2] = X[k1 + N1 k2]: what the four-step algorithm reads and
///    writes without its outer transposes. A forward transform with transposed output and an
///    inverse with transposed input need one all-to-all fewer each; with both ends transposed
///    (a convolution that stays in that order) one all-to-all each way.
enum class Order { natural, transposed };
enum class Domain { time, frequency };

/// N = n1 * n2, both powers of two.
struct Shape {
  std::size_t n = 0, n1 = 0, n2 = 0;
};

/// The shape of an N-point transform over `gpus` GPUs: n1 = 2^floor(log2(N) / 2) unless `n1` is
/// given. Throws std::invalid_argument, saying why, unless N is a power of two >= 4, n1 and n2
/// are powers of two >= 2, and `gpus` divides both n1 and n2 (every GPU holds whole rows of both
/// matrices).
Shape shape(std::size_t n, int gpus, std::size_t n1 = 0);

/// The position, in `order`, of element `index` of a signal in `domain` (natural index).
std::size_t position(const Shape& s, Domain domain, Order order, std::size_t index);

/// Puts a natural-order signal into `order` (a host permutation, for tests and examples).
std::vector<Complex> arrange(const Shape& s, Domain domain, Order order, const std::vector<Complex>& natural);

enum class Direction { forward, inverse };

/// One step of the four-step algorithm on the distributed data, as the multi-GPU variants run it.
struct Step {
  enum Kind { transpose, fft } kind = transpose;
  /// transpose: the source matrix, rows x cols, split by rows; fft: `rows` transforms of length `cols`.
  std::size_t rows = 0, cols = 0;
  /// transpose: multiply element (r, c) by exp(twiddle * 2 pi i r c / N) on the way (-1, +1), or not (0).
  int twiddle = 0;
  Direction direction = Direction::forward;  // fft
};

/// The steps of a transform (forward: [transpose], row FFTs, twiddle + transpose, row FFTs,
/// [transpose]; inverse mirrored): 1, 2 or 3 transposes by the two orders.
std::vector<Step> program(const Shape& s, Direction d, Order in, Order out);

/// All-to-alls (transposes) of a transform.
int all_to_alls(Direction d, Order in, Order out);

/// What a variant does.
struct Options {
  std::size_t n1 = 0;  ///< the first factor (0: balanced, see shape())
  /// The multi-GPU variants: each row-FFT step is cut into this many chunks per GPU, and a chunk's
  /// rows start moving in the transpose after them while the next chunk is transformed (a
  /// transpose that follows no FFT step is not cut). 0: cush::TransposeOptions's rule (1 on one
  /// GPU; else the most of 2, 4, 8 dividing the rows with at least 16 MiB a chunk), which the raw
  /// variant writes out.
  std::size_t chunks = 0;
  /// The multi-GPU variants: each GPU transposes the tiles bound for another GPU into a scratch
  /// buffer of its own, and copy engines move them (cudaMemcpy3DPeerAsync, a chunk's copies beside the
  /// next chunk's transpose), in every transpose; false: cush::TransposeOptions's automatic path,
  /// which the raw variant writes out (staged between two GPUs in a transpose of 4 or more chunks,
  /// else the transpose kernel stores them into the other GPU).
  bool staged = false;
};

/// Single-GPU reference on gpus.cuda[0]: one cuFFT plan of N points (cufftMakePlanMany64),
/// out of place, natural orders only.
class Single {
 public:
  Single(std::size_t n, const Devices& gpus, Options options = {});
  ~Single();
  Single(const Single&) = delete;
  Single& operator=(const Single&) = delete;
  void load(const Complex* host);
  void forward(Order in = Order::natural, Order out = Order::natural);
  void inverse(Order in = Order::natural, Order out = Order::natural);
  /// Circular convolution in place: the signal loaded becomes y = signal (*) kernel,
  /// y[j] = sum_i signal[i] kernel[(j - i) mod N]. `kernel`, a transform of the same N on the same
  /// GPU, holds the kernel's spectrum as kernel.forward() left it. A forward transform, the
  /// pointwise product scaled by 1 / N and an inverse. Asynchronous, ordered after the kernel's
  /// transform; std::invalid_argument for a kernel of another size or GPU, the object itself, or a
  /// transposed signal (one cuFFT call has natural orders only).
  void convolve(const Single& kernel, Order signal = Order::natural);
  void store(Complex* host);
  void wait();
  [[nodiscard]] const Shape& shape() const { return shape_; }

 private:
  void run(Order in, Order out, int direction);
  void release();
  Shape shape_;
  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  int plan_ = 0;  // cufftHandle
  bool planned_ = false;
  Complex* x_ = nullptr;
  Complex* y_ = nullptr;
  void* work_ = nullptr;
  cudaEvent_t kernel_done_ = nullptr;  // convolve(): the kernel's transform, on this stream's terms
};

/// Multi-GPU raw CUDA: per-GPU buffers, cuFFT plans and streams; the transposes store each tile
/// straight into the GPU that owns it (peer pointers) and the GPUs order themselves with events.
class MultiCuda {
 public:
  MultiCuda(std::size_t n, const Devices& gpus, Options options = {});
  ~MultiCuda();
  MultiCuda(const MultiCuda&) = delete;
  MultiCuda& operator=(const MultiCuda&) = delete;
  void load(const Complex* host);
  void forward(Order in = Order::natural, Order out = Order::natural);
  void inverse(Order in = Order::natural, Order out = Order::natural);
  /// Circular convolution in place: the signal loaded (in order `signal`) becomes y = signal (*)
  /// kernel, y[j] = sum_i signal[i] kernel[(j - i) mod N], in the same order. `kernel`, a transform
  /// of the same shape on the same GPUs in the same order, holds the kernel's spectrum as
  /// kernel.forward(any order, Order::transposed) left it. A forward transform into the transposed
  /// order, the pointwise product scaled by 1 / N and an inverse back: 2 all-to-alls each way for a
  /// natural-order signal, 1 for a transposed one (3 each way through natural spectra).
  /// Asynchronous, ordered after the kernel's transform; std::invalid_argument for a kernel of
  /// another shape or other GPUs, or the object itself.
  void convolve(const MultiCuda& kernel, Order signal = Order::natural);
  void store(Complex* host);
  void wait();
  [[nodiscard]] const Shape& shape() const { return shape_; }

 private:
  struct Gpu;
  void run(const std::vector<Step>& steps);
  void transpose(const Step* fft, const Step& transpose);
  void enqueue_transpose(const Step* fft, const Step& transpose);
  void drain();  // never throws
  void release();
  [[nodiscard]] std::size_t chunks(std::size_t rows) const;
  Shape shape_;
  std::size_t chunks_ = 0;
  bool staged_ = false;
  bool one_gpu_ = true;  // every part on one physical GPU (virtual GPUs): nothing to chunk or stage
  std::vector<Gpu> gpus_;
  int current_ = 0;  // which buffer holds the data
};

/// Multi-GPU cush: two plans of N points, cush::transpose for the all-to-alls (the twiddle fused
/// into one of them), cuFFT on each segment.
class MultiCush {
 public:
  MultiCush(std::size_t n, const Devices& gpus, Options options = {});
  ~MultiCush();
  MultiCush(MultiCush&&) noexcept;
  void load(const Complex* host);
  void forward(Order in = Order::natural, Order out = Order::natural);
  void inverse(Order in = Order::natural, Order out = Order::natural);
  /// As MultiCuda::convolve.
  void convolve(const MultiCush& kernel, Order signal = Order::natural);
  void store(Complex* host);
  void wait();
  [[nodiscard]] const Shape& shape() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// cufftXt on gpus.cuda (2, 4, 8 or 16 entries; repeats allowed: one GPU given twice), the
/// library a user would pick instead: natural orders only, the reorder of its permuted output
/// into natural order included in every transform.
class Xt {
 public:
  Xt(std::size_t n, const Devices& gpus, Options options = {});
  ~Xt();
  Xt(const Xt&) = delete;
  Xt& operator=(const Xt&) = delete;
  void load(const Complex* host);
  void forward(Order in = Order::natural, Order out = Order::natural);
  void inverse(Order in = Order::natural, Order out = Order::natural);
  void store(Complex* host);
  void wait();
  [[nodiscard]] const Shape& shape() const { return shape_; }

 private:
  struct State;
  void run(Order in, Order out, int direction);
  Shape shape_;
  std::unique_ptr<State> s_;
};

/// The FLOP count the benchmarks divide by: 5 N log2 N.
double flops(std::size_t n);

}  // namespace fft
}  // namespace cases
