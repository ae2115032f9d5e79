// Case "fft", multi-GPU cush: the data is a plan of N points over the GPUs, and a second plan on
// the same streams takes each transpose; cush::transpose moves every tile straight to the GPU
// that owns its place and applies the twiddle on the way; cuFFT runs the row FFTs on each segment,
// as the transpose's producer where a transpose follows them (chunk by chunk, overlapped).

#include <stdexcept>
#include <utility>
#include <vector>

#include "cush/cush.hpp"
#include "cush/transpose.cuh"
#include "fft.hpp"
#include "kernels.hpp"
#include "twiddle.cuh"

namespace cases {
namespace fft {

struct MultiCush::State {
  State(std::size_t n, const Devices& gpus, Options o);
  void run(const std::vector<Step>& steps);
  Shape shape;
  Options options;
  std::vector<RowFfts> ffts;  // per segment; destroyed after the plans, which wait for their streams
  cush::Plan<Complex> a, b;   // the data, the next transpose's target
};

// (Defined out of the class, where pmccabe, which the complexity report uses, counts them.)
MultiCush::State::State(std::size_t n, const Devices& gpus, Options o)
    : shape(fft::shape(n, gpus.count(), o.n1)), options(o), ffts(), a(cush::DeviceSet(gpus.cush), n), b(cush::Plan<Complex>::alike(a, n)) {
  a.for_each([&](cush::Segment<Complex> s) {
    ffts.emplace_back(cush::physical_device(s.device()), s.stream(), shape, gpus.count());
  });
}

void MultiCush::State::run(const std::vector<Step>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    if (step.kind == Step::fft && i + 1 == steps.size()) {
      a.for_each([&](cush::Segment<Complex> s) {
        ffts[s.pos()].run(s.data(), step.rows / ffts.size(), step.cols, step.direction);
      });
      continue;
    }
    cush::TransposeOptions o;
    if (options.staged) o.path = cush::TransposeOptions::Path::staged;
    if (step.kind == Step::fft) {  // the row FFTs chunk by chunk, each chunk's transpose after it
      o.chunks = options.chunks;
      o.produce = [&](const cush::TransposeChunk& c) {
        ffts[c.pos].run(static_cast<Complex*>(c.data), c.rows, step.cols, step.direction, c.stream);
      };
    }
    const Step& t = steps[step.kind == Step::fft ? ++i : i];
    cush::transpose(a, b, t.rows, t.cols, Twiddle{shape.n, t.twiddle}, o);
    std::swap(a, b);
  }
}

MultiCush::MultiCush(std::size_t n, const Devices& gpus, Options options)
    : s_(std::make_unique<State>(n, gpus, options)) {}
MultiCush::~MultiCush() = default;
MultiCush::MultiCush(MultiCush&&) noexcept = default;

void MultiCush::load(const Complex* host) { s_->a.scatter(host); }
void MultiCush::store(Complex* host) { s_->a.gather(host); }
void MultiCush::forward(Order in, Order out) { s_->run(program(s_->shape, Direction::forward, in, out)); }
void MultiCush::inverse(Order in, Order out) { s_->run(program(s_->shape, Direction::inverse, in, out)); }
void MultiCush::convolve(const MultiCush& kernel, Order signal) {
  if (&kernel == this) throw std::invalid_argument("cases::fft::MultiCush::convolve: the kernel must be another transform");
  if (kernel.s_ == nullptr || kernel.s_->shape.n != s_->shape.n || kernel.s_->shape.n1 != s_->shape.n1 ||
      !(kernel.s_->a.devices() == s_->a.devices()))
    throw std::invalid_argument("cases::fft::MultiCush::convolve: the kernel is a transform of another shape or GPUs");
  forward(signal, Order::transposed);
  s_->a.after(kernel.s_->a);
  s_->a.for_each([&](cush::Segment<Complex> s) {
    launch_multiply(s.data(), kernel.s_->a.segment(s.pos()).data(), s.size(), 1.0f / static_cast<float>(s_->shape.n), s.stream());
  });
  inverse(Order::transposed, signal);
}

void MultiCush::wait() { s_->a.wait(); }
const Shape& MultiCush::shape() const { return s_->shape; }

}  // namespace fft
}  // namespace cases
