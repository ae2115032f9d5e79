#pragma once
// Case "rbffd": the RBF-FD weights cached on disk (spec rbffd.md §3 "Weights": host, thread pool, cached on
// disk). Weights of a million nodes take the host seconds to minutes (one small LU per stencil); a run that
// needs the same ones again reads them back.
//
// A file per (nodes, stencils, degree), named rbffd_weights_<N>_<key>.bin in the cache's folder, where <key> is
// a 64-bit FNV-1a hash of the node coordinates, the stencils' row_ptr and cols and the degree (as bytes). It
// holds a header (magic "CUSHRBFW", format version, N, entries, degree, key), the four weight arrays (dxi,
// deta, lap, bilap, entries doubles each, in Stencils::cols order) and the hash of those bytes. A file whose
// header, size or hash does not match is not used: the weights are computed and the file written again. The
// file is written to a temporary name of the writing process and renamed, so a reader never sees half of one. A folder that cannot
// be made or written is not an error: the weights are computed, a line on stderr says why none were kept.

#include <cstdint>
#include <filesystem>
#include <span>

#include "nodes.hpp"
#include "stencils.hpp"
#include "weights.hpp"

namespace cases {
namespace rbffd {

/// Where the weights came from.
enum class CacheUse {
  read,      ///< a valid file of the same nodes, stencils and degree
  computed,  ///< none (or one not valid): computed, and written if the folder allows
};

/// rbf_fd_weights(nodes, stencils, degree), read from `folder` when an earlier call kept them there, else
/// computed and kept (the folder is made if missing). Throws what rbf_fd_weights throws. `use`, if not null,
/// says which happened.
Weights cached_weights(std::span<const Point> nodes, const Stencils& stencils, int degree,
                       const std::filesystem::path& folder, CacheUse* use = nullptr);

/// The file cached_weights keeps those weights in (inside `folder`).
std::filesystem::path weights_file(std::span<const Point> nodes, const Stencils& stencils, int degree,
                                   const std::filesystem::path& folder);

}  // namespace rbffd
}  // namespace cases
