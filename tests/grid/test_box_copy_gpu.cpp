// The box-copy kernels on a GPU (grid/box_copy.hpp): one launch of several boxes
// (launch_box_copies) against a host copy of the same boxes, for element sizes of 1 to 24 bytes
// at offsets that leave each word width (16, 8, 4, 2, 1 bytes) the widest that fits, and with few
// thread blocks (grid-stride loops, blocks shared between boxes), on every GPU.

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include "cush/device_buffer.hpp"
#include "cush/device_guard.hpp"
#include "cush/error.hpp"
#include "grid/box_copy.hpp"
#include "support/gpu.hpp"

namespace {

using cush::Extent3;
using cush::detail::BoxCopy;
using cush::detail::BoxSide;

// A box of `size` at `lo` in a buffer of `alloc` cells of `element` bytes, copied on the host.
void host_copy(const std::vector<unsigned char>& src, std::vector<unsigned char>& dst, const Extent3& alloc,
               const Extent3& src_lo, const Extent3& dst_lo, const Extent3& size, std::size_t element) {
  for (std::size_t z = 0; z < size[2]; ++z)
    for (std::size_t y = 0; y < size[1]; ++y)
      for (std::size_t x = 0; x < size[0]; ++x) {
        const auto at = [&](const Extent3& lo) {
          return (((lo[2] + z) * alloc[1] + lo[1] + y) * alloc[0] + lo[0] + x) * element;
        };
        std::memcpy(&dst[at(dst_lo)], &src[at(src_lo)], element);
      }
}

}  // namespace

TEST(BoxCopies, OneLaunchOfSeveralBoxesCopiesWhatEachBoxCopies) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937_64 rng(46);
  const auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
  const std::size_t elements[] = {1, 2, 4, 8, 12, 16, 24};
  const std::size_t offsets[] = {0, 16, 8, 4, 2, 1};  // bytes: the widest word that divides it
  for (int device = 0; device < cush::DeviceSet::available(); ++device) {
    const cush::DeviceGuard guard(device);
    for (int trial = 0; trial < 60; ++trial) {
      const std::size_t element = elements[pick(0, 6)];
      const std::size_t offset = offsets[pick(0, 5)];
      const Extent3 alloc{pick(8, 70), pick(4, 20), pick(2, 9)};
      const std::size_t bytes = alloc[0] * alloc[1] * alloc[2] * element;
      // Source and destination: two buffers, the destination's boxes one per slice of x so that
      // no two boxes write the same cell.
      std::vector<unsigned char> src(bytes), dst(bytes);
      for (auto& b : src) b = static_cast<unsigned char>(rng());
      for (auto& b : dst) b = static_cast<unsigned char>(rng());
      cush::DeviceBuffer d_src(device, bytes + offset), d_dst(device, bytes + offset);
      auto* s = static_cast<unsigned char*>(d_src.data()) + offset;
      auto* d = static_cast<unsigned char*>(d_dst.data()) + offset;
      CUSH_CUDA_CHECK(cudaMemcpy(s, src.data(), bytes, cudaMemcpyHostToDevice));
      CUSH_CUDA_CHECK(cudaMemcpy(d, dst.data(), bytes, cudaMemcpyHostToDevice));
      const std::size_t n = pick(1, cush::detail::box_copy_max_batch);
      const std::size_t slice = alloc[0] / n;
      std::vector<BoxCopy> boxes;
      std::vector<unsigned char> want = dst;
      for (std::size_t k = 0; k < n; ++k) {
        Extent3 size{pick(0, slice), pick(1, alloc[1]), pick(1, alloc[2])};
        if (pick(0, 9) == 0) size[1] = 0;  // now and then an empty box
        const Extent3 dst_lo{k * slice + pick(0, slice - std::min(size[0], slice)), pick(0, alloc[1] - std::max<std::size_t>(size[1], 1)),
                             pick(0, alloc[2] - size[2])};
        const Extent3 src_lo{pick(0, alloc[0] - size[0]), pick(0, alloc[1] - std::max<std::size_t>(size[1], 1)),
                             pick(0, alloc[2] - size[2])};
        boxes.push_back(BoxCopy{BoxSide{s, alloc, src_lo}, BoxSide{d, alloc, dst_lo}, size});
        host_copy(src, want, alloc, src_lo, dst_lo, size, element);
      }
      const unsigned max_blocks[] = {1, 2, 3, cush::detail::box_copy_max_blocks};
      cush::detail::launch_box_copies(boxes, element, nullptr, max_blocks[pick(0, 3)]);
      CUSH_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<unsigned char> got(bytes);
      CUSH_CUDA_CHECK(cudaMemcpy(got.data(), d, bytes, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < bytes; ++i)
        ASSERT_EQ(got[i], want[i]) << "GPU " << device << ", trial " << trial << ": byte " << i << " of " << bytes
                                   << " (element " << element << " bytes, offset " << offset << ", " << n << " boxes)";
    }
  }
}

TEST(BoxCopies, MoreBoxesThanALaunchTakesAreRefused) {
  const std::vector<BoxCopy> boxes(cush::detail::box_copy_max_batch + 1);
  EXPECT_THROW(cush::detail::launch_box_copies(boxes, 4, nullptr), cush::InvalidArgument);
}
