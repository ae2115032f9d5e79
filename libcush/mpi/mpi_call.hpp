#pragma once
// Checked MPI calls for cush::mpi: a call that does not return MPI_SUCCESS throws MpiError naming
// it (a group's communicator returns errors instead of aborting), and the gathers the group's
// checks are made of.

#include <mpi.h>

#include <cstdint>
#include <span>
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

/// Waits for `requests` (nonblocking calls on a group's communicator `comm`, made for `where`) at
/// most CUSH_MPI_WAIT_LIMIT_S seconds (default 600; 0: no limit). Past it, prints on stderr which
/// rank waited in which call, and ends the job with MPI_Abort(comm): a rank that left the
/// program's order of collective calls (an exception it did not pass on, a hang) cannot leave the
/// others waiting for ever. Every wait of cush::mpi on other ranks goes through here.
void wait_for_ranks(std::span<MPI_Request> requests, MPI_Comm comm, const char* where);

/// Every rank's string, by rank (collective over `comm` of `size` ranks, for `where`).
[[nodiscard]] std::vector<std::string> allgather_strings(MPI_Comm comm, int size, const std::string& mine,
                                                         const char* where);

/// Every rank's 64-bit words, by rank (collective; the ranks may pass different counts).
[[nodiscard]] std::vector<std::vector<std::uint64_t>> allgather_words(MPI_Comm comm, int size,
                                                                      const std::vector<std::uint64_t>& mine,
                                                                      const char* where);

/// MPI_Allgather of one value of `type` per rank, waited for as wait_for_ranks does.
void allgather_one(const void* mine, void* all, MPI_Datatype type, MPI_Comm comm, const char* where);

/// A nonblocking send (receive) of `bytes` bytes to (from) rank `peer`, in pieces of at most
/// 1 GiB (MPI counts are ints), each piece's request appended to `requests`. MPI keeps the order
/// of one sender's messages with one tag, so the pieces, and messages sent one after another,
/// arrive in order.
void send_bytes(const void* data, std::size_t bytes, int peer, int tag, MPI_Comm comm, std::vector<MPI_Request>& requests);
void receive_bytes(void* data, std::size_t bytes, int peer, int tag, MPI_Comm comm, std::vector<MPI_Request>& requests);

}  // namespace cush::detail
