#include "weight_cache.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace cases {
namespace rbffd {

namespace {

constexpr std::array<char, 8> magic{'C', 'U', 'S', 'H', 'R', 'B', 'F', 'W'};
constexpr std::uint64_t version = 1;

struct Header {
  std::array<char, 8> magic{};
  std::uint64_t version = 0;
  std::uint64_t nodes = 0;
  std::uint64_t entries = 0;
  std::int64_t degree = 0;
  std::uint64_t key = 0;
};

// FNV-1a, 64 bits, over bytes, continuing from `h`.
std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t key_of(std::span<const Point> nodes, const Stencils& stencils, int degree) {
  std::uint64_t h = fnv1a(nodes.data(), nodes.size_bytes());
  h = fnv1a(stencils.row_ptr.data(), stencils.row_ptr.size() * sizeof(std::int64_t), h);
  h = fnv1a(stencils.cols.data(), stencils.cols.size() * sizeof(std::int64_t), h);
  const std::int64_t d = degree;
  return fnv1a(&d, sizeof d, h);
}

std::array<std::vector<double>*, 4> arrays(Weights& w) { return {&w.dxi, &w.deta, &w.lap, &w.bilap}; }

std::uint64_t hash_of(Weights& w) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::vector<double>* a : arrays(w)) h = fnv1a(a->data(), a->size() * sizeof(double), h);
  return h;
}

// The weights of `file` if it is a valid file for `expect`; false otherwise.
bool read_file(const std::filesystem::path& file, const Header& expect, Weights& w) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  Header h;
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return false;
  if (h.magic != expect.magic || h.version != expect.version || h.nodes != expect.nodes || h.entries != expect.entries ||
      h.degree != expect.degree || h.key != expect.key)
    return false;
  for (std::vector<double>* a : arrays(w)) {
    a->resize(h.entries);
    if (!in.read(reinterpret_cast<char*>(a->data()), static_cast<std::streamsize>(h.entries * sizeof(double))))
      return false;
  }
  std::uint64_t stored = 0;
  if (!in.read(reinterpret_cast<char*>(&stored), sizeof stored)) return false;
  if (in.peek() != std::ifstream::traits_type::eof()) return false;  // longer than its header says
  return stored == hash_of(w);
}

// Writes `w` to `file` through a temporary name; a message on failure, empty on success.
std::string write_file(const std::filesystem::path& file, const Header& h, Weights& w) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return "cannot make " + file.parent_path().string() + ": " + ec.message();
  const std::filesystem::path temporary = file.string() + "." + std::to_string(::getpid()) + ".part";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + temporary.string();
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    for (const std::vector<double>* a : arrays(w))
      out.write(reinterpret_cast<const char*>(a->data()), static_cast<std::streamsize>(a->size() * sizeof(double)));
    const std::uint64_t hash = hash_of(w);
    out.write(reinterpret_cast<const char*>(&hash), sizeof hash);
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(temporary, ec);
      return "cannot write " + temporary.string() + " (disk full?)";
    }
  }
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return "cannot rename " + temporary.string() + ": " + ec.message();
  }
  return {};
}

Header header_of(std::span<const Point> nodes, const Stencils& stencils, int degree) {
  Header h;
  h.magic = magic;
  h.version = version;
  h.nodes = nodes.size();
  h.entries = stencils.cols.size();
  h.degree = degree;
  h.key = key_of(nodes, stencils, degree);
  return h;
}

// The file of the weights with header `h` in `folder`.
std::filesystem::path file_of(const Header& h, const std::filesystem::path& folder) {
  char key[17];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h.key));
  return folder / ("rbffd_weights_" + std::to_string(h.nodes) + "_" + key + ".bin");
}

}  // namespace

std::filesystem::path weights_file(std::span<const Point> nodes, const Stencils& stencils, int degree,
                                   const std::filesystem::path& folder) {
  return file_of(header_of(nodes, stencils, degree), folder);
}

Weights cached_weights(std::span<const Point> nodes, const Stencils& stencils, int degree,
                       const std::filesystem::path& folder, CacheUse* use) {
  const Header h = header_of(nodes, stencils, degree);  // one pass over nodes and stencils for the key
  const std::filesystem::path file = file_of(h, folder);
  Weights w;
  if (read_file(file, h, w)) {
    if (use != nullptr) *use = CacheUse::read;
    return w;
  }
  w = rbf_fd_weights(nodes, stencils, degree);
  if (const std::string why = write_file(file, h, w); !why.empty())
    std::fprintf(stderr, "rbffd: weights not cached: %s\n", why.c_str());
  if (use != nullptr) *use = CacheUse::computed;
  return w;
}

}  // namespace rbffd
}  // namespace cases
