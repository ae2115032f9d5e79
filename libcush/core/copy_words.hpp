#pragma once
// The word a copy kernel moves elements in: the widest of 16, 8, 4, 2 or 1 bytes that divides the
// element size and every address involved, so a double moves as one 8-byte load and store and a
// 12-byte struct as three 4-byte ones. Shared by the box copy (grid/box_copy.cu) and the graph
// exchange's gather (graph/gather.cu). Include from .cu files only (uint4).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace cush::detail {

/// A 16-byte word (uint4's alignment).
struct Bytes16 {
  uint4 v;
};

/// Calls f(static_cast<W*>(nullptr), element_size / sizeof(W)) with W the widest word that
/// divides the element size and every pointer's address.
template <class F>
void with_word(std::size_t element_size, std::span<const void* const> pointers, F&& f) {
  const auto aligned = [&](std::size_t w) {
    if (element_size % w != 0) return false;
    for (const void* p : pointers)
      if (reinterpret_cast<std::uintptr_t>(p) % w != 0) return false;
    return true;
  };
  if (aligned(16)) return f(static_cast<Bytes16*>(nullptr), element_size / 16);
  if (aligned(8)) return f(static_cast<unsigned long long*>(nullptr), element_size / 8);
  if (aligned(4)) return f(static_cast<unsigned*>(nullptr), element_size / 4);
  if (aligned(2)) return f(static_cast<unsigned short*>(nullptr), element_size / 2);
  f(static_cast<unsigned char*>(nullptr), element_size);
}

}  // namespace cush::detail
