#pragma once
// Case "rbffd": the matrix in ELL form, the layout the stage kernel reads (kernels.hpp). Every
// row holds `width` entries (the longest row's count; shorter rows padded with weight 0), stored
// column-major: entry k of row r at k * rows + r, so the threads of a warp, one per row, read
// consecutive addresses. Each row keeps its CSR entry order, so a row's sum is the same on one GPU
// and on many (bit for bit). Columns are int32, values FP64.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cases {
namespace rbffd {

struct Ell {
  std::size_t rows = 0;
  std::size_t width = 0;
  std::vector<std::int32_t> cols;  ///< width * rows
  std::vector<double> values;      ///< width * rows
};

/// CSR rows (row_ptr: rows + 1 offsets from 0; cols and values: one per entry) to ELL. A padding
/// entry of a short row repeats the row's last column (or column 0 in an empty row) with weight 0.
/// Throws std::invalid_argument for a malformed row_ptr or cols / values of the wrong length.
Ell ell_from_csr(std::span<const std::int64_t> row_ptr, std::span<const std::int32_t> cols,
                 std::span<const double> values);

/// The rows [first, first + count) of CSR rows (as ell_from_csr's), as an ELL matrix of `count`
/// rows (row first + i is row i). Throws std::invalid_argument for rows outside row_ptr.
Ell ell_of_rows(std::span<const std::int64_t> row_ptr, std::span<const std::int32_t> cols, std::span<const double> values,
                std::size_t first, std::size_t count);

/// int64 column indices as int32. Throws std::invalid_argument for one outside [0, 2^31).
std::vector<std::int32_t> narrow_columns(std::span<const std::int64_t> cols);

/// What a kernel needs of an ELL matrix on a GPU (device pointers).
struct EllView {
  const std::int32_t* cols = nullptr;
  const double* values = nullptr;
  std::size_t rows = 0;  ///< also the distance between a row's consecutive entries
  std::size_t width = 0;
};

/// An ELL matrix copied to CUDA device `device` (cudaMalloc; freed on destruction).
class DeviceEll {
 public:
  DeviceEll(const Ell& a, int device);
  ~DeviceEll();
  DeviceEll(const DeviceEll&) = delete;
  DeviceEll& operator=(const DeviceEll&) = delete;
  [[nodiscard]] EllView view() const noexcept { return {cols_, values_, rows_, width_}; }

 private:
  int device_;
  std::int32_t* cols_ = nullptr;
  double* values_ = nullptr;
  std::size_t rows_;
  std::size_t width_;
};

}  // namespace rbffd
}  // namespace cases
