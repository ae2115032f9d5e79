#pragma once
// Case "rbffd": the node set. N Fibonacci nodes on the unit sphere (spec rbffd.md §3 "Nodes"):
//
//     z_i = 1 - (2 i + 1) / N,   phi_i = i pi (3 - sqrt 5),   (x, y) = sqrt(1 - z_i^2) (cos phi_i, sin phi_i)
//
// Nearly uniform (every node covers about 4 pi / N of the sphere) and, since z falls with i, the
// index order is the latitude order: contiguous index ranges are the seed's latitude slices.

#include <cstddef>
#include <vector>

namespace cases {
namespace rbffd {

/// A point of R^3 (on the unit sphere for the nodes).
struct Point {
  double x = 0;
  double y = 0;
  double z = 0;
};

inline double dot(Point a, Point b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Point cross(Point a, Point b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
inline Point operator-(Point a, Point b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline double distance2(Point a, Point b) { return dot(a - b, a - b); }

/// The N Fibonacci nodes, node i at index i. N = 0 gives no node.
std::vector<Point> fibonacci_nodes(std::size_t n);

}  // namespace rbffd
}  // namespace cases
