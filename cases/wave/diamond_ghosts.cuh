#pragma once
// Case "wave": where the DiamondTorre variant (diamond_variant.hpp) keeps the periodic n^3 grid:
// a block of (n + 2T)^2 columns of n nodes, z fastest, the grid's column (x, y) at block column
// (x + T, y + T), and T ghost columns on each side in x and y that stand for the periodic images.
// The same functions run on the host, where a test checks that the ghost columns are enumerated
// once each and point at the right images (test_diamond_tower.cu).

namespace cases {
namespace wave {
namespace ghosts {

/// Ghost column g (0 .. count(n, T) - 1) of the block: its place (x, y) and the block column
/// (sx, sy) of the grid column it stands for.
struct Column {
  long x, y, sx, sy;
};

/// (n + 2T)^2 - n^2: the T full rows below the grid and above it, and T columns on each side of
/// every grid row.
__host__ __device__ inline long count(long n, long t) { return (n + 2 * t) * (n + 2 * t) - n * n; }

__host__ __device__ inline long image(long b, long n, long t) { return ((b - t) % n + n) % n + t; }

__host__ __device__ inline Column column(long g, long n, long t) {
  const long side = n + 2 * t;
  long x = 0, y = 0;
  if (g < t * side) {  // below
    y = g / side;
    x = g % side;
  } else if (g < 2 * t * side) {  // above
    g -= t * side;
    y = n + t + g / side;
    x = g % side;
  } else {  // beside each grid row: the T columns left of it, then the T right of it
    g -= 2 * t * side;
    y = t + g / (2 * t);
    const long c = g % (2 * t);
    x = c < t ? c : n + c;
  }
  return {x, y, image(x, n, t), image(y, n, t)};
}

}  // namespace ghosts
}  // namespace wave
}  // namespace cases
