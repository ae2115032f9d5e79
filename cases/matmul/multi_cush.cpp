// Case "matmul", multi-GPU cush (seed 002 Listing A.2's shape): B broadcast, A's rows scattered
// and C's rows gathered slice by slice. Each plan's streams are one lane of the pipeline: A's
// carry the uploads, B's the products, C's the downloads.

#include "matmul.hpp"

namespace cases {
namespace matmul {

template <class T>
MultiCush<T>::MultiCush(Dims d, const Devices& gpus, std::size_t blocks)
    : d_(check_dims(d, "cases::matmul::MultiCush")),
      blocks_(blocks > 0 ? blocks : block_count(d, gpus.count(), sizeof(T))),
      a_(cush::DeviceSet(gpus.cush), d.m * d.n, cush::Distribution::uniform().with_granularity(d.n)),
      c_(a_.devices(), d.m * d.p, cush::Distribution::uniform().with_granularity(d.p)),
      b_(a_.devices(), d.n * d.p, cush::Distribution::replicated()) {}

template <class T>
void MultiCush<T>::product(std::size_t block) {
  b_.for_each([&](cush::Segment<T> b) {
    const cush::Segment<T> a = a_.segment(b.pos(), cush::Slice{block, blocks_});
    const cush::Segment<T> c = c_.segment(b.pos(), cush::Slice{block, blocks_});
    gemm_rows(b.stream(), b.pos(), a.size() / d_.n, d_, a.data(), b.data(), c.data());
  });
}

template <class T>
void MultiCush<T>::run(const T* a, const T* b, T* c) {
  b_.broadcast(b);
  a_.after(b_);  // A's slices follow B over the host links: sharing them would delay both
  for (std::size_t i = 0; i < blocks_; ++i) {
    a_.scatter(a, cush::Slice{i, blocks_});
    b_.after(a_);
    product(i);
    c_.after(b_);
    c_.gather(c, cush::Slice{i, blocks_});
  }
  c_.wait();
}

template <class T>
void MultiCush<T>::multiply() {
  for (std::size_t i = 0; i < blocks_; ++i) product(i);
}

template <class T>
void MultiCush<T>::wait() {
  b_.wait();
}

template <class T>
void MultiCush<T>::download(T* c) {
  c_.after(b_);
  c_.gather(c);
  c_.wait();
}

template class MultiCush<float>;
template class MultiCush<double>;

}  // namespace matmul
}  // namespace cases
