#include "mpi/mpi_call.hpp"

#include <cstddef>

namespace cush::detail {

void mpi_failed(int code, const char* call) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw MpiError(code, call, std::string("cush: MPI call failed: ") + call + ": " + std::string(text, static_cast<std::size_t>(length)));
}

namespace {

// Counts and offsets of an MPI_Allgatherv of `count` items from every rank.
void gather_counts(MPI_Comm comm, int size, int count, std::vector<int>& counts, std::vector<int>& offsets) {
  counts.assign(static_cast<std::size_t>(size), 0);
  CUSH_MPI_CHECK(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
  offsets.assign(static_cast<std::size_t>(size), 0);
  for (std::size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
}

}  // namespace

std::vector<std::string> allgather_strings(MPI_Comm comm, int size, const std::string& mine) {
  std::vector<int> lengths, offsets;
  gather_counts(comm, size, static_cast<int>(mine.size()), lengths, offsets);
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  CUSH_MPI_CHECK(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(), lengths.data(),
                                offsets.data(), MPI_CHAR, comm));
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

std::vector<std::vector<std::uint64_t>> allgather_words(MPI_Comm comm, int size, const std::vector<std::uint64_t>& mine) {
  std::vector<int> counts, offsets;
  gather_counts(comm, size, static_cast<int>(mine.size()), counts, offsets);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(offsets.back() + counts.back()));
  CUSH_MPI_CHECK(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(), counts.data(),
                                offsets.data(), MPI_UINT64_T, comm));
  std::vector<std::vector<std::uint64_t>> out;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const auto from = all.begin() + offsets[r];
    out.emplace_back(from, from + counts[r]);
  }
  return out;
}

}  // namespace cush::detail
