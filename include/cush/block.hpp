#pragma once
/// @file block.hpp
/// @brief The part of a Field that one device holds, as a kernel needs it.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cush/grid.hpp"
#include "cush/host_device.hpp"

namespace cush {

/// @brief A non-owning view of one device's block of a Field: its buffer with ghost layers,
/// where the block lies in the grid, its device, position in the device set, and stream. Work
/// enqueued on stream() is ordered after the field's earlier operations and before its later
/// ones (see Field's exchanges for what may run beside them).
///
/// A field of several components (Field's `components`, e.g. the populations of a
/// lattice-Boltzmann model) stores them one after another (SoA): component c's cells are laid
/// out like component 0's, component_stride() elements further on (data(c)), every component's
/// rows aligned alike.
///
/// A view is cheap to copy and may be passed to a kernel by value: data(), index(), pitch(),
/// rows(), components() and component_stride() work in device code (alloc(), halo() and owned()
/// return std::array-based values, whose operator[] is host code unless nvcc runs with
/// --expt-relaxed-constexpr).
template <class T>
class Block {
 public:
  Block(T* data, const Extent3& alloc, const Extent3& halo, const Box& owned, int device, std::size_t pos,
        cudaStream_t stream, std::size_t components = 1, std::size_t component_stride = 0) noexcept
      : data_(data),
        alloc_{alloc[0], alloc[1], alloc[2]},
        halo_{halo[0], halo[1], halo[2]},
        components_(components),
        component_stride_(component_stride),
        owned_(owned),
        device_(device),
        pos_(pos),
        stream_(stream) {}

  /// The buffer's first ghost cell (x fastest, ghost layers included); of component 0.
  [[nodiscard]] CUSH_HOST_DEVICE T* data() const noexcept { return data_; }
  /// Component c's first ghost cell: data() + c * component_stride().
  [[nodiscard]] CUSH_HOST_DEVICE T* data(std::size_t c) const noexcept { return data_ + c * component_stride_; }
  /// The field's components (1 for a field of one value per cell).
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t components() const noexcept { return components_; }
  /// Elements from a component's first ghost cell to the next component's (a multiple of the
  /// row alignment, and 256 bytes apart or a multiple thereof).
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t component_stride() const noexcept { return component_stride_; }
  /// The buffer's sizes; alloc()[0] is the row pitch (GridOptions::row_align).
  [[nodiscard]] Extent3 alloc() const noexcept { return {alloc_[0], alloc_[1], alloc_[2]}; }
  /// Ghost layers per side along each axis.
  [[nodiscard]] Extent3 halo() const noexcept { return {halo_[0], halo_[1], halo_[2]}; }
  /// Cells from one row of the buffer to the next (alloc()[0]).
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t pitch() const noexcept { return alloc_[0]; }
  /// Rows from one plane of the buffer to the next (alloc()[1]).
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t rows() const noexcept { return alloc_[1]; }
  /// The buffer position of the cell at local coordinates (x, y, z); ghosts are negative or
  /// >= the owned size.
  [[nodiscard]] CUSH_HOST_DEVICE std::size_t index(std::ptrdiff_t x, std::ptrdiff_t y, std::ptrdiff_t z) const noexcept {
    return static_cast<std::size_t>(x + static_cast<std::ptrdiff_t>(halo_[0])) +
           alloc_[0] * (static_cast<std::size_t>(y + static_cast<std::ptrdiff_t>(halo_[1])) +
                        alloc_[1] * static_cast<std::size_t>(z + static_cast<std::ptrdiff_t>(halo_[2])));
  }
  /// The owned cells, in global coordinates.
  [[nodiscard]] const Box& owned() const noexcept { return owned_; }
  /// CUDA ordinal of the device holding the block.
  [[nodiscard]] int device() const noexcept { return device_; }
  /// Position of that device in the field's device set (the block's number in the Decomposition).
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  /// The field's stream on that device.
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  // Plain arrays, not Extent3: index() runs in kernels, where std::array's operator[] is host code.
  T* data_;
  std::size_t alloc_[3];
  std::size_t halo_[3];
  std::size_t components_;
  std::size_t component_stride_;
  Box owned_;
  int device_;
  std::size_t pos_;
  cudaStream_t stream_;
};

}  // namespace cush
