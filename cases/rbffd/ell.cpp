#include "ell.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"

namespace cases {
namespace rbffd {

Ell ell_from_csr(std::span<const std::int64_t> row_ptr, std::span<const std::int32_t> cols,
                 std::span<const double> values) {
  const auto bad = [](const std::string& what) { return std::invalid_argument("cases::rbffd::ell_from_csr: " + what); };
  if (row_ptr.empty() || row_ptr[0] != 0) throw bad("row_ptr must start at 0");
  const std::size_t rows = row_ptr.size() - 1;
  for (std::size_t r = 0; r < rows; ++r)
    if (row_ptr[r + 1] < row_ptr[r]) throw bad("row_ptr decreases at row " + std::to_string(r));
  if (static_cast<std::size_t>(row_ptr[rows]) != cols.size() || values.size() != cols.size())
    throw bad("row_ptr ends at " + std::to_string(row_ptr[rows]) + ", cols has " + std::to_string(cols.size()) +
              " entries, values " + std::to_string(values.size()));
  Ell e;
  e.rows = rows;
  for (std::size_t r = 0; r < rows; ++r) e.width = std::max(e.width, static_cast<std::size_t>(row_ptr[r + 1] - row_ptr[r]));
  e.cols.assign(e.width * rows, 0);
  e.values.assign(e.width * rows, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    const auto first = static_cast<std::size_t>(row_ptr[r]);
    const auto count = static_cast<std::size_t>(row_ptr[r + 1]) - first;
    for (std::size_t k = 0; k < e.width; ++k) {
      const bool real = k < count;
      e.cols[k * rows + r] = real ? cols[first + k] : (count > 0 ? cols[first + count - 1] : 0);
      e.values[k * rows + r] = real ? values[first + k] : 0.0;
    }
  }
  return e;
}

Ell ell_of_rows(std::span<const std::int64_t> row_ptr, std::span<const std::int32_t> cols, std::span<const double> values,
                std::size_t first, std::size_t count) {
  if (row_ptr.empty() || first + count > row_ptr.size() - 1)
    throw std::invalid_argument("cases::rbffd::ell_of_rows: rows [" + std::to_string(first) + ", " +
                                std::to_string(first + count) + ") of " + std::to_string(row_ptr.empty() ? 0 : row_ptr.size() - 1));
  const auto begin = static_cast<std::size_t>(row_ptr[first]), end = static_cast<std::size_t>(row_ptr[first + count]);
  if (begin > end || end > cols.size() || end > values.size()) throw std::invalid_argument("cases::rbffd::ell_of_rows: malformed rows");
  std::vector<std::int64_t> sub(count + 1);
  for (std::size_t r = 0; r <= count; ++r) sub[r] = row_ptr[first + r] - row_ptr[first];
  return ell_from_csr(sub, cols.subspan(begin, end - begin), values.subspan(begin, end - begin));
}

std::vector<std::int32_t> narrow_columns(std::span<const std::int64_t> cols) {
  std::vector<std::int32_t> out(cols.size());
  for (std::size_t k = 0; k < cols.size(); ++k) {
    if (cols[k] < 0 || cols[k] > INT32_MAX)
      throw std::invalid_argument("cases::rbffd::narrow_columns: entry " + std::to_string(k) + " is column " +
                                  std::to_string(cols[k]) + ", outside [0, 2^31)");
    out[k] = static_cast<std::int32_t>(cols[k]);
  }
  return out;
}

DeviceEll::DeviceEll(const Ell& a, int device) : device_(device), rows_(a.rows), width_(a.width) {
  CUSH_CUDA_CHECK(cudaSetDevice(device_));
  const std::size_t n = a.cols.size();
  CUSH_CUDA_CHECK(cudaMalloc(&cols_, std::max<std::size_t>(n, 1) * sizeof(std::int32_t)));
  if (cudaMalloc(&values_, std::max<std::size_t>(n, 1) * sizeof(double)) != cudaSuccess) {
    (void)cudaGetLastError();
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(cols_));
    throw cush::Error("cases::rbffd::DeviceEll: out of device memory for " + std::to_string(n) + " entries");
  }
  try {
    CUSH_CUDA_CHECK(cudaMemcpy(cols_, a.cols.data(), n * sizeof(std::int32_t), cudaMemcpyHostToDevice));
    CUSH_CUDA_CHECK(cudaMemcpy(values_, a.values.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    // A copy from pageable memory may return before it lands, and the variants' streams do not
    // wait for the default stream.
    CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (...) {
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(cols_));
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(values_));
    throw;
  }
}

DeviceEll::~DeviceEll() {
  CUSH_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(cols_));
  CUSH_CUDA_CHECK_NOEXCEPT(cudaFree(values_));
}

}  // namespace rbffd
}  // namespace cases
