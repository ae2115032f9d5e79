#include "mpi/together.hpp"

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "mpi/mpi_call.hpp"

namespace cush::detail {

void together(const ProcessGroup& group, const char* where, const std::function<void()>& f) {
  std::exception_ptr failure;
  std::string said;
  try {
    f();
  } catch (const std::exception& e) {
    failure = std::current_exception();
    said = e.what();
    if (said.empty()) said = "failed";
  } catch (...) {
    failure = std::current_exception();
    said = "failed";
  }
  const std::vector<std::string> all = allgather_strings(group.comm(), group.size(), said, where);
  if (failure) std::rethrow_exception(failure);
  std::string others;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty()) others += (others.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " + all[r];
  if (!others.empty()) throw InvalidArgument(where, "group", "another rank failed: " + others);
}

void check_root(const ProcessGroup& group, const void* host, bool needs_host, int root, const char* where) {
  group.agree(where, "the root", static_cast<std::uint64_t>(static_cast<std::int64_t>(root)));
  if (root < 0 || root >= group.size())
    throw InvalidArgument(where, "root", std::to_string(root) + " is not a rank of the group (" + std::to_string(group.size()) + " ranks)");
  // Only the root knows its pointer: it tells the others before anyone throws.
  int null_on_root = group.rank() == root && host == nullptr && needs_host ? 1 : 0;
  MPI_Request request = MPI_REQUEST_NULL;
  CUSH_MPI_CHECK(MPI_Ibcast(&null_on_root, 1, MPI_INT, root, group.comm(), &request));
  wait_for_ranks(std::span<MPI_Request>(&request, 1), group.comm(), where);
  if (null_on_root != 0) throw InvalidArgument(where, "host", "the root's host buffer is null");
}

}  // namespace cush::detail
