#include "cush/process_group.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "cush/device_set.hpp"
#include "mpi/mpi_call.hpp"

namespace cush {

using detail::allgather_strings;
using detail::allgather_words;

namespace {

constexpr const char* where = "cush::ProcessGroup";

// What is wrong with this process's device list, or empty.
std::string check_devices(const std::vector<int>& devices) {
  int available = 0;
  try {
    available = DeviceSet::available();
  } catch (const Error& e) {  // a malformed CUSH_VIRTUAL_GPUS
    return e.what();
  }
  std::set<int> seen;
  for (int d : devices) {
    if (d < 0 || d >= available)
      return "device " + std::to_string(d) + " does not exist in this process (it has " + std::to_string(available) +
             " GPU" + (available == 1 ? "" : "s") + ")";
    if (!seen.insert(d).second) return "device " + std::to_string(d) + " is listed twice";
  }
  return {};
}

std::vector<int> every_device() {
  std::vector<int> ids;
  try {
    ids.resize(static_cast<std::size_t>(DeviceSet::available()));
  } catch (const Error&) {
    return ids;  // check_devices() says what is wrong, on every rank
  }
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  return ids;
}

// "0-3", "0, 2, 5-6": ascending ranks as ranges.
std::string ranges(const std::vector<int>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    s += std::to_string(ranks[i]);
    if (j > i) s.append("-").append(std::to_string(ranks[j]));
    i = j + 1;
  }
  return s;
}

// The rank and size of this process's host's part of `comm` (collective over `comm`).
std::pair<int, int> on_this_host(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) throw InvalidArgument("cush::ProcessGroup::local_rank", "comm", "MPI_COMM_NULL is not a communicator");
  MPI_Comm host = MPI_COMM_NULL;
  CUSH_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host));
  int rank = 0;
  int size = 0;
  const int rc_rank = MPI_Comm_rank(host, &rank);
  const int rc_size = MPI_Comm_size(host, &size);
  (void)MPI_Comm_free(&host);
  CUSH_MPI_CHECK(rc_rank);
  CUSH_MPI_CHECK(rc_size);
  return {rank, size};
}

}  // namespace

int ProcessGroup::local_rank(MPI_Comm comm) { return on_this_host(comm).first; }
int ProcessGroup::local_size(MPI_Comm comm) { return on_this_host(comm).second; }

ProcessGroup::ProcessGroup(MPI_Comm comm) : ProcessGroup(comm, every_device()) {}

ProcessGroup::ProcessGroup(MPI_Comm comm, std::vector<int> devices) {
  if (comm == MPI_COMM_NULL) throw InvalidArgument(where, "comm", "MPI_COMM_NULL is not a communicator");
  int initialized = 0;
  CUSH_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized == 0) throw InvalidArgument(where, "comm", "MPI is not initialized: call MPI_Init first (cush never does)");
  CUSH_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  try {
    CUSH_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    CUSH_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    CUSH_MPI_CHECK(MPI_Comm_size(comm_, &size_));
    // Every rank's input first, checked together: a rank with bad input must not leave the
    // others waiting in a collective it never enters.
    const std::vector<std::string> problems = allgather_strings(comm_, size_, check_devices(devices), where);
    std::string said;
    for (int r = 0; r < size_; ++r)
      if (!problems[static_cast<std::size_t>(r)].empty())
        said += (said.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " + problems[static_cast<std::size_t>(r)];
    if (!said.empty()) throw InvalidArgument(where, "devices", said);

    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    CUSH_MPI_CHECK(MPI_Get_processor_name(name, &length));
    const std::vector<std::string> names = allgather_strings(comm_, size_, std::string(name, static_cast<std::size_t>(length)), where);
    for (const std::string& n : names) {
      const auto at = std::find(hosts_.begin(), hosts_.end(), n);
      host_of_.push_back(static_cast<int>(at - hosts_.begin()));
      if (at == hosts_.end()) hosts_.push_back(n);
    }

    // Device ids were checked above: non-negative, so they pass through 64-bit words unchanged.
    const std::vector<std::uint64_t> mine(devices.begin(), devices.end());
    const auto ids = allgather_words(comm_, size_, mine, where);
    for (int r = 0; r < size_; ++r)
      for (std::uint64_t id : ids[static_cast<std::size_t>(r)])
        devices_.push_back(RankDevice{r, static_cast<int>(id), host_of_[static_cast<std::size_t>(r)]});
  } catch (...) {
    release();
    throw;
  }
}

ProcessGroup::~ProcessGroup() { release(); }

void ProcessGroup::release() noexcept {
  nccl_.reset();  // before the communicator it was made over
  if (comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    // After MPI_Finalize nothing may be freed (and nothing needs to be).
    if (MPI_Finalized(&finalized) == MPI_SUCCESS && finalized == 0) (void)MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }
}

ProcessGroup::ProcessGroup(ProcessGroup&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      rank_(other.rank_),
      size_(other.size_),
      devices_(std::move(other.devices_)),
      hosts_(std::move(other.hosts_)),
      host_of_(std::move(other.host_of_)),
      nccl_(std::move(other.nccl_)) {}

ProcessGroup& ProcessGroup::operator=(ProcessGroup&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
    devices_ = std::move(other.devices_);
    hosts_ = std::move(other.hosts_);
    host_of_ = std::move(other.host_of_);
    nccl_ = std::move(other.nccl_);
  }
  return *this;
}

std::vector<int> ProcessGroup::devices_of(int rank) const {
  (void)host_of(rank);  // checks the rank
  std::vector<int> ids;
  for (const RankDevice& d : devices_)
    if (d.rank == rank) ids.push_back(d.device);
  return ids;
}

int ProcessGroup::host_of(int rank) const {
  if (rank < 0 || rank >= size_)
    throw InvalidArgument("cush::ProcessGroup::host_of", "rank",
                          "rank " + std::to_string(rank) + " is not in the group (" + std::to_string(size_) + " ranks)");
  return host_of_[static_cast<std::size_t>(rank)];
}

std::string ProcessGroup::describe() const {
  std::string s = std::to_string(size_) + (size_ == 1 ? " rank on " : " ranks on ") + std::to_string(hosts_.size()) +
                  (hosts_.size() == 1 ? " host (" : " hosts (");
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    std::vector<int> on;
    for (int r = 0; r < size_; ++r)
      if (host_of_[static_cast<std::size_t>(r)] == static_cast<int>(h)) on.push_back(r);
    s += (h > 0 ? "; " : "") + hosts_[h] + ": rank" + (on.size() == 1 ? " " : "s ") + ranges(on);
  }
  s += "), " + std::to_string(devices_.size()) + (devices_.size() == 1 ? " GPU" : " GPUs");
  for (int r = 0; r < size_; ++r) {
    const std::vector<int> ids = devices_of(r);
    s += (r == 0 ? ": " : "; ") + std::string("rank ") + std::to_string(r) + ": ";
    if (ids.empty()) s += "none";
    for (std::size_t i = 0; i < ids.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(ids[i]);
  }
  return s;
}

void ProcessGroup::agree(const char* asker, const char* what, std::uint64_t value) const {
  std::vector<std::uint64_t> values(static_cast<std::size_t>(size_));
  detail::allgather_one(&value, values.data(), MPI_UINT64_T, comm_, asker);
  if (std::all_of(values.begin(), values.end(), [&](std::uint64_t v) { return v == values.front(); })) return;
  std::string said = std::string("the ranks disagree on ") + what + ":";
  for (int r = 0; r < size_; ++r) {
    if (r == 16 && size_ > 17) {
      said.append(" ... (").append(std::to_string(size_ - 16)).append(" more ranks)");
      break;
    }
    said.append(r > 0 ? ", rank " : " rank ").append(std::to_string(r)).append(" ").append(std::to_string(values[static_cast<std::size_t>(r)]));
  }
  throw InvalidArgument(asker, what, said);
}

}  // namespace cush
