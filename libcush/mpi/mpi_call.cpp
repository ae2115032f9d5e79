#include "mpi/mpi_call.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/env.hpp"

namespace cush::detail {

void mpi_failed(int code, const char* call) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw MpiError(code, call, std::string("cush: MPI call failed: ") + call + ": " + std::string(text, static_cast<std::size_t>(length)));
}

namespace {

[[noreturn]] void abort_job(MPI_Comm comm, const char* where, double limit) {
  int rank = -1;
  (void)MPI_Comm_rank(comm, &rank);
  std::fprintf(stderr,
               "cush: rank %d: %s waited %g s for the other ranks of its group (CUSH_MPI_WAIT_LIMIT_S): a rank has "
               "left the program's order of collective calls (an exception, a hang); ending the job with MPI_Abort\n",
               rank, where, limit);
  std::fflush(stderr);
  (void)MPI_Abort(comm, 3);
  std::abort();  // MPI_Abort does not return; if it did, the process must not go on
}

}  // namespace

void wait_for_ranks(std::span<MPI_Request> requests, MPI_Comm comm, const char* where) {
  if (requests.empty()) return;
  const int n = static_cast<int>(requests.size());
  const double limit = env::seconds("CUSH_MPI_WAIT_LIMIT_S");
  if (limit <= 0) {
    CUSH_MPI_CHECK(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE));
    return;
  }
  using clock = std::chrono::steady_clock;
  const clock::time_point start = clock::now();
  std::chrono::microseconds pause{0};
  for (;;) {
    int done = 0;
    CUSH_MPI_CHECK(MPI_Testall(n, requests.data(), &done, MPI_STATUSES_IGNORE));
    if (done != 0) return;
    const std::chrono::duration<double> waited = clock::now() - start;
    if (waited.count() > limit) abort_job(comm, where, limit);
    // Asked again at once for the first millisecond (a collective of ranks that arrive together),
    // then with pauses growing to 1 ms, which keep a long wait off the core.
    if (waited.count() > 1e-3) {
      pause = std::min(pause * 2 + std::chrono::microseconds(10), std::chrono::microseconds(1000));
      std::this_thread::sleep_for(pause);
    }
  }
}

void allgather_one(const void* mine, void* all, MPI_Datatype type, MPI_Comm comm, const char* where) {
  MPI_Request request = MPI_REQUEST_NULL;
  CUSH_MPI_CHECK(MPI_Iallgather(mine, 1, type, all, 1, type, comm, &request));
  wait_for_ranks(std::span<MPI_Request>(&request, 1), comm, where);
}

namespace {

// Counts and offsets of an MPI_Allgatherv of `count` items from every rank.
void gather_counts(MPI_Comm comm, int size, int count, std::vector<int>& counts, std::vector<int>& offsets,
                   const char* where) {
  counts.assign(static_cast<std::size_t>(size), 0);
  allgather_one(&count, counts.data(), MPI_INT, comm, where);
  offsets.assign(static_cast<std::size_t>(size), 0);
  for (std::size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
}

}  // namespace

std::vector<std::string> allgather_strings(MPI_Comm comm, int size, const std::string& mine, const char* where) {
  std::vector<int> lengths, offsets;
  gather_counts(comm, size, static_cast<int>(mine.size()), lengths, offsets, where);
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  MPI_Request request = MPI_REQUEST_NULL;
  CUSH_MPI_CHECK(MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(), lengths.data(),
                                 offsets.data(), MPI_CHAR, comm, &request));
  wait_for_ranks(std::span<MPI_Request>(&request, 1), comm, where);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

std::vector<std::vector<std::uint64_t>> allgather_words(MPI_Comm comm, int size, const std::vector<std::uint64_t>& mine,
                                                        const char* where) {
  std::vector<int> counts, offsets;
  gather_counts(comm, size, static_cast<int>(mine.size()), counts, offsets, where);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(offsets.back() + counts.back()));
  MPI_Request request = MPI_REQUEST_NULL;
  CUSH_MPI_CHECK(MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(), counts.data(),
                                 offsets.data(), MPI_UINT64_T, comm, &request));
  wait_for_ranks(std::span<MPI_Request>(&request, 1), comm, where);
  std::vector<std::vector<std::uint64_t>> out;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const auto from = all.begin() + offsets[r];
    out.emplace_back(from, from + counts[r]);
  }
  return out;
}

namespace {
constexpr std::size_t piece = std::size_t{1} << 30;
}  // namespace

void send_bytes(const void* data, std::size_t bytes, int peer, int tag, MPI_Comm comm, std::vector<MPI_Request>& requests) {
  const auto* p = static_cast<const std::byte*>(data);
  for (std::size_t at = 0; at < bytes; at += piece) {
    requests.emplace_back();
    CUSH_MPI_CHECK(MPI_Isend(p + at, static_cast<int>(std::min(piece, bytes - at)), MPI_BYTE, peer, tag, comm, &requests.back()));
  }
}

void receive_bytes(void* data, std::size_t bytes, int peer, int tag, MPI_Comm comm, std::vector<MPI_Request>& requests) {
  auto* p = static_cast<std::byte*>(data);
  for (std::size_t at = 0; at < bytes; at += piece) {
    requests.emplace_back();
    CUSH_MPI_CHECK(MPI_Irecv(p + at, static_cast<int>(std::min(piece, bytes - at)), MPI_BYTE, peer, tag, comm, &requests.back()));
  }
}

}  // namespace cush::detail
