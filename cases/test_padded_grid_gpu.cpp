// The periodic ghost kernels the stencil cases share (padded_grid.hpp): every ghost cell equals
// the owned cell it stands for, nothing else changes, for ghost layers 1 to 8, grids whose axes
// are shorter than the layers (the general kernels) or not (the fast passes), in a whole grid
// (launch_periodic_halo) and in z slabs of one (launch_xy_halo).

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "padded_grid.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace {

// The owned index (0 .. n - 1) a stored index of an axis with h ghost layers stands for.
std::size_t owned_of(std::size_t stored, std::size_t n, std::size_t h) {
  const long r = static_cast<long>(stored) - static_cast<long>(h);
  const long m = static_cast<long>(n);
  return static_cast<std::size_t>((r % m + m) % m);
}

// A padded grid of nx x ny x (planes + 2 h) stored cells, random everywhere (ghosts and padding
// too), runs `fill` on it and checks each cell: the ghosts of the planes [z_begin, z_end) (all
// of them with `z_ghosts`, and then the ghost planes too) hold their owned cell's value, every
// other cell is unchanged.
template <class Fill>
void check(std::size_t nx, std::size_t ny, std::size_t planes, std::size_t h, bool z_ghosts, std::size_t z_begin,
           std::size_t z_end, Fill fill) {
  const std::size_t pitch = cases::padded_pitch(nx, h), py = ny + 2 * h, pz = planes + 2 * h;
  const std::size_t cells = pitch * py * pz;
  std::vector<double> before(cells);
  cush_test::fill_random(std::span<double>(before));
  double* d = nullptr;
  CUSH_CUDA_CHECK(cudaMalloc(&d, cells * sizeof(double)));
  CUSH_CUDA_CHECK(cudaMemcpy(d, before.data(), cells * sizeof(double), cudaMemcpyHostToDevice));
  fill(d);
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> after(cells);
  CUSH_CUDA_CHECK(cudaMemcpy(after.data(), d, cells * sizeof(double), cudaMemcpyDeviceToHost));
  CUSH_CUDA_CHECK(cudaFree(d));
  const auto at = [&](std::size_t i, std::size_t j, std::size_t k) { return (k * py + j) * pitch + i; };
  const std::string what = std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(planes) + ", " +
                           std::to_string(h) + " layers" + (z_ghosts ? ", periodic in z" : ", planes " +
                           std::to_string(z_begin) + ".." + std::to_string(z_end));
  std::size_t bad = 0;
  for (std::size_t k = 0; k < pz; ++k)
    for (std::size_t j = 0; j < py; ++j)
      for (std::size_t i = 0; i < pitch; ++i) {
        if (i >= nx + 2 * h) continue;  // padding, which whole ghost planes may copy: never read
        const bool owned_x = i >= h && i < nx + h, owned_y = j >= h && j < ny + h, owned_z = k >= h && k < planes + h;
        const bool ghost = z_ghosts ? !(owned_x && owned_y && owned_z) : k >= z_begin && k < z_end && !(owned_x && owned_y);
        std::size_t from = at(i, j, k);
        if (ghost)
          from = at(owned_of(i, nx, h) + h, owned_of(j, ny, h) + h, z_ghosts ? owned_of(k, planes, h) + h : k);
        if (std::memcmp(&after[at(i, j, k)], &before[from], sizeof(double)) != 0 && bad++ < 5)
          ADD_FAILURE() << what << ": cell (" << i << ", " << j << ", " << k << ") is " << after[at(i, j, k)]
                        << ", expected " << before[from] << (ghost ? " (a ghost)" : " (not a ghost: unchanged)");
      }
  EXPECT_EQ(bad, 0U) << what;
}

}  // namespace

TEST(PaddedGrid, PeriodicHaloFillsEveryGhostFromItsOwnedCell) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for (const auto& [nx, ny, nz, h] : std::vector<std::array<std::size_t, 4>>{
           {1, 1, 1, 1}, {3, 2, 5, 4}, {9, 9, 9, 4}, {37, 19, 13, 1}, {37, 19, 13, 4}, {64, 30, 21, 8}, {130, 3, 6, 2}})
    for (const auto fill : {cases::launch_periodic_halo, cases::launch_periodic_halo_general})
      check(nx, ny, nz, h, true, 0, 0, [&](double* u) { fill(u, nx, ny, nz, nullptr, h); });
}

TEST(PaddedGrid, XyHaloFillsTheGhostsOfItsPlanesOnly) {
  CUSH_REQUIRE_GPUS(1);
  CUSH_CUDA_CHECK(cudaSetDevice(0));
  for (const auto& [nx, ny, planes, h] : std::vector<std::array<std::size_t, 4>>{
           {1, 1, 3, 1}, {3, 2, 5, 4}, {37, 19, 13, 1}, {37, 19, 13, 4}, {64, 30, 21, 8}, {130, 3, 6, 2}})
    for (const auto& [z_begin, z_end] : std::vector<std::array<std::size_t, 2>>{{h, planes + h}, {0, planes + 2 * h}, {h + 1, h + 2}})
      check(nx, ny, planes, h, false, z_begin, z_end,
            [&](double* u) { cases::launch_xy_halo(u, nx, ny, z_begin, z_end, nullptr, h); });
}
