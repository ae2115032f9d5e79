#pragma once
// FNV-1a over 64-bit words: what the ranks compare to check that they describe the same thing
// (ProcessGroup::agree) without sending the thing itself.

#include <cstdint>

namespace cush::detail {

struct Fingerprint {
  std::uint64_t h = 14695981039346656037ULL;
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xffU;
      h *= 1099511628211ULL;
    }
  }
};

}  // namespace cush::detail
