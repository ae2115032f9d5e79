#pragma once
// Checked MPI calls for cush::mpi: a call that does not return MPI_SUCCESS throws MpiError naming
// it (a group's communicator returns errors instead of aborting), and the gathers the group's
// checks are made of.

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cush/process_group.hpp"

namespace cush::detail {

[[noreturn]] void mpi_failed(int code, const char* call);

#define CUSH_MPI_CHECK(call)                                                     \
  do {                                                                           \
    const int cush_mpi_rc_ = (call);                                             \
    if (cush_mpi_rc_ != MPI_SUCCESS) ::cush::detail::mpi_failed(cush_mpi_rc_, #call); \
  } while (0)

/// Every rank's string, by rank (collective over `comm` of `size` ranks).
[[nodiscard]] std::vector<std::string> allgather_strings(MPI_Comm comm, int size, const std::string& mine);

/// Every rank's 64-bit words, by rank (collective; the ranks may pass different counts).
[[nodiscard]] std::vector<std::vector<std::uint64_t>> allgather_words(MPI_Comm comm, int size,
                                                                      const std::vector<std::uint64_t>& mine);

}  // namespace cush::detail
