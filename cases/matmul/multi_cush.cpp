// Case "matmul", multi-GPU cush (seed 002 Listing A.2's shape): A's rows scattered, B broadcast,
// each GPU's rows of C computed where they lie, C gathered.

#include "matmul.hpp"

namespace cases {
namespace matmul {

template <class T>
MultiCush<T>::MultiCush(const T* a, const T* b, Dims d, int gpus)
    : d_(check_dims(d, "cases::matmul::MultiCush")),
      a_(cush::DeviceSet::first(gpus), d.m * d.n, cush::Distribution::uniform().with_granularity(d.n)),
      b_(cush::DeviceSet::first(gpus), d.n * d.p, cush::Distribution::replicated()),
      c_(cush::DeviceSet::first(gpus), d.m * d.p, cush::Distribution::uniform().with_granularity(d.p)) {
  a_.scatter(a);
  b_.broadcast(b);
  c_.after(a_);
  c_.after(b_);
}

template <class T>
void MultiCush<T>::multiply() {
  c_.for_each([this](cush::Segment<T> c) {
    gemm_rows(c.stream(), c.size() / d_.p, d_, a_.segment(c.index()).data(), b_.segment(c.index()).data(), c.data());
  });
}

template <class T>
void MultiCush<T>::wait() {
  c_.wait();
}

template <class T>
void MultiCush<T>::download(T* c) {
  c_.gather(c);
  c_.wait();
}

template class MultiCush<float>;
template class MultiCush<double>;

}  // namespace matmul
}  // namespace cases
