#pragma once
// Decoders and printers shared by the layout and transfer harnesses (fuzz_layout.cpp,
// fuzz_host_transfers.cpp): counts, granularities and slices on the scales that find bugs.

#include <cstddef>
#include <cstdint>
#include <string>

#include "cush/layout.hpp"
#include "fuzz.hpp"

namespace cush_fuzz {

inline std::string str(std::size_t v) { return std::to_string(v); }
inline std::string str(cush::Range r) { return "[" + str(r.offset) + ", +" + str(r.count) + ")"; }

/// A count on one of several scales: mostly small, sometimes anywhere in std::size_t or at its top.
inline std::size_t any_count(Bytes& in, std::size_t typical) {
  switch (in.in<int>(0, 7)) {
    case 0: case 1: case 2: return in.in<std::size_t>(0, 16);
    case 3: case 4: case 5: return in.in<std::size_t>(0, typical);
    case 6: return in.in<std::size_t>(0, SIZE_MAX);
    default: return SIZE_MAX - in.in<std::size_t>(0, 16);
  }
}

/// A granularity: mostly 1 or small, sometimes anything (0, which is invalid, included).
inline std::size_t any_granularity(Bytes& in) {
  switch (in.in<int>(0, 3)) {
    case 0: return 1;
    case 1: case 2: return in.in<std::size_t>(1, 16);
    default: return any_count(in, 4096);
  }
}

/// A slice: mostly a part that exists, sometimes any index and count (huge ones included).
inline cush::Slice any_slice(Bytes& in) {
  cush::Slice s;
  switch (in.in<int>(0, 7)) {
    case 0: case 1: case 2: case 3: case 4:
      s.count = in.in<std::size_t>(1, 16);
      s.index = in.in<std::size_t>(0, s.count - 1);
      break;
    case 5:
      s.count = any_count(in, 4096);
      s.index = any_count(in, 4096);
      break;
    case 6:  // far more parts than any segment has elements
      s.count = in.in<std::size_t>(std::size_t{1} << 48, SIZE_MAX);
      s.index = in.flag() ? in.in<std::size_t>(0, 16) : s.count - 1 - in.in<std::size_t>(0, 16);
      break;
    default:  // a part that does not exist
      s.count = in.in<std::size_t>(0, 16);
      s.index = s.count + in.in<std::size_t>(0, 4);
  }
  return s;
}

/// Whether `part` lies within an extent of n elements (offset + count may pass SIZE_MAX).
inline bool inside(cush::Range part, std::size_t n) { return part.offset <= n && part.count <= n - part.offset; }

}  // namespace cush_fuzz
