#pragma once
/// @file version.hpp
/// @brief cush's version and the versions of the CUDA software it runs on.

#include <string>

namespace cush {

/// @brief Versions as "major.minor[.patch]" strings; "none" where a component is missing
/// (e.g. the driver on a machine without a GPU).
struct RuntimeVersions {
  std::string cush;
  std::string cuda_runtime;
  std::string cuda_driver;
  std::string nccl;
};

/// Queries the versions now (never throws).
[[nodiscard]] RuntimeVersions runtime_versions() noexcept;

}  // namespace cush
