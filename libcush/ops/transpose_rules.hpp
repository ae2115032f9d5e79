#pragma once
// cush::transpose's automatic choices (TransposeOptions::chunks = 0, Path::automatic), as pure
// functions so that host tests check them (tests/ops/test_transpose_rules.cpp).

#include <algorithm>
#include <cstddef>

namespace cush {
namespace detail {

/// The chunks of a source with `rows` rows of `bytes` bytes in all: `forced` (at most one a row),
/// or cush's choice: 1 where every target is on the source's own GPU (`all_local`: nothing to
/// overlap), else the most of 8, 4 and 2 that divides the rows and leaves at least 16 MiB a chunk.
inline std::size_t transpose_chunks(std::size_t forced, std::size_t rows, std::size_t bytes, bool all_local) {
  if (forced != 0) return std::min(forced, rows);
  if (all_local) return 1;
  constexpr std::size_t least = std::size_t{16} << 20;
  for (std::size_t c = 8; c > 1; c /= 2)
    if (rows % c == 0 && bytes / c >= least) return c;
  return 1;
}

/// Whether the automatic path stages a pair that could store directly: between two GPUs, when the
/// source's rows go in 4 or more chunks (copy engines then move a chunk while the SMs produce the
/// next; on 2 x H200 the FFT case ran 11-22 % faster so, at 1 or 2 chunks no faster).
inline bool transpose_stages_pipelined(std::size_t chunks, bool same_gpu) { return chunks >= 4 && !same_gpu; }

}  // namespace detail
}  // namespace cush
