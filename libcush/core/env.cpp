#include "core/env.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "cush/error.hpp"

namespace cush::detail::env {

namespace {

constexpr double max_exact_count = 1e15;  // below 2^53: every whole number in range is exact

// The defaults come from measurements; each page named says which.
constexpr Variable variable_table[] = {
    // Devices (docs/guide.md, "Virtual GPUs").
    {"CUSH_VIRTUAL_GPUS", Unit::text, Scope::library, 0, 0, 0,
     "logical GPUs over the physical ones: a count (round robin, e.g. 4) or a list of physical ids (e.g. 0,0,1)"},
    // Host <-> GPU moves (docs/host_memory.md).
    {"CUSH_STAGING_CHUNK_MIB", Unit::mib, Scope::library, 32, 1, 1 << 20,
     "bytes per step of the pipeline that stages pageable host memory"},
    {"CUSH_STAGING_SLOTS", Unit::count, Scope::library, 2, 2, 64, "pinned staging buffers per device"},
    {"CUSH_DIRECT_TO_DEVICE_BELOW_KIB", Unit::kib, Scope::library, 4096, 0, 1 << 30,
     "pageable pieces below this go straight to cudaMemcpyAsync when the stream is idle (host to device)"},
    {"CUSH_DIRECT_TO_HOST_BELOW_KIB", Unit::kib, Scope::library, 256, 0, 1 << 30,
     "the same, device to host"},
    {"CUSH_COPY_THREADS", Unit::count, Scope::library, 0, 0, 1024,
     "host threads per staging copy; 0: min(16, cores)"},
    {"CUSH_REGISTRATION_CHUNK_MIB", Unit::mib, Scope::library, 1024, 1, 1 << 20,
     "HostRegistration pins large ranges in pieces of this size, in parallel"},
    // GPU <-> GPU operations (docs/device_ops.md).
    {"CUSH_TRANSPORTS", Unit::path, Scope::library, 0, 0, 0,
     "a transport table file (TransportTable::save) to use instead of the built-in one"},
    {"CUSH_STAGING_PEER_CHUNK_MIB", Unit::mib, Scope::library, 16, 1, 1 << 20,
     "bytes per pinned slot of the host_staging transport"},
    {"CUSH_LOCAL_AUX_MIN_KIB", Unit::kib, Scope::library, 1024, 0, 1 << 30,
     "a device's copy within itself, beside its copies to other devices, gets a second stream from this size"},
    {"CUSH_PEER_ALL_REDUCE_PUSH_MIN_KIB", Unit::kib, Scope::library, 0, 0, 1 << 30,
     "an all-reduce on the peer kernel above the one-shot slot runs in one pass, storing each device's combined share into every replica, from this size (below it: two shots)"},
    {"CUSH_PEER_REDUCE_SPREAD_MIN_KIB", Unit::kib, Scope::library, 2048, 0, 1 << 30,
     "a reduce on the peer kernel over three or more devices is combined by the devices other than the root from this size"},
    // Processes (docs/guide.md, "Failure across ranks").
    {"CUSH_MPI_WAIT_LIMIT_S", Unit::seconds, Scope::library, 600, 0, 86400,
     "the longest a rank waits in cush::mpi for the other ranks of its group before it ends the job with MPI_Abort; 0: no limit"},
    // Halo exchanges (docs/grid.md).
    {"CUSH_HALO_PIPELINE_MIB", Unit::mib, Scope::library, 256, 0, 1 << 30,
     "strided faces packed into a peer from this size up are sent in slabs, pipelined"},
    {"CUSH_HALO_CHUNKS", Unit::count, Scope::library, 8, 1, 64, "the most slabs of a pipelined face (1: off)"},
    // Benchmarks (bench/, cases/<name>/bench_<name>.cpp).
    {"CUSH_BENCH_MIN_TIME", Unit::seconds, Scope::benchmarks, 0, 1e-6, 3600,
     "minimum time per benchmark (unset: each binary's default)"},
    {"CUSH_BENCH_HOST_OPS_MAX_MIB", Unit::count, Scope::benchmarks, 4096, 1, 1 << 30,
     "largest buffer of bench_host_ops, in MiB"},
    {"CUSH_BENCH_DEVICE_OPS_MAX_MIB", Unit::count, Scope::benchmarks, 1024, 1, 1 << 30,
     "largest message per GPU of bench_device_ops, in MiB"},
    {"CUSH_BENCH_MAX_FACE", Unit::count, Scope::benchmarks, 4096, 1, 1 << 20,
     "largest face edge of bench_halo, in cells"},
    {"CUSH_BENCH_MAX_N", Unit::count, Scope::benchmarks, 1 << 28, 1, max_exact_count,
     "largest vector of the scale case's rows, in elements"},
    {"CUSH_BENCH_MATMUL_MAX_K", Unit::count, Scope::benchmarks, 40, 1, 1 << 16,
     "largest k of the matmul case's rows (n = 1024 k)"},
    {"CUSH_BENCH_ADVECTION_MAX_N", Unit::count, Scope::benchmarks, 1024, 1, 1 << 16,
     "largest grid edge of the advection case's rows"},
    {"CUSH_BENCH_WAVE_MAX_N", Unit::count, Scope::benchmarks, 1024, 1, 1 << 16,
     "largest grid edge of the wave case's rows"},
    {"CUSH_BENCH_LBM_MAX_M", Unit::count, Scope::benchmarks, 1024, 1, 1 << 16,
     "largest cross-section edge M of the lattice-Boltzmann case's rows"},
    {"CUSH_BENCH_FFT_LOG2_N1", Unit::count, Scope::benchmarks, 0, 0, 40,
     "log2 of the FFT case's first factor N1 in its rows (0: balanced, N1 = 2^floor(log2(N) / 2))"},
    // Tests (tests/support/gpu.hpp).
    {"CUSH_TEST_TOOL", Unit::text, Scope::tests, 0, 0, 0,
     "set (e.g. to memcheck) when the tests run under a CUDA tool: timing and free-memory checks are left to it"},
    {"CUSH_FAULT_SITES", Unit::path, Scope::tests, 0, 0, 0,
     "a folder: each process writes the checked CUDA/NCCL call sites it reached to sites-<pid>.txt there (scripts/fault_sites.sh)"},
};

std::span<const Variable> table() noexcept { return variable_table; }

const Variable& find(std::string_view name) {
  for (const Variable& v : table())
    if (name == v.name) return v;
  throw std::logic_error("cush: " + std::string(name) + " is not in the table of environment variables");
}

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::count: return "a whole number";
    case Unit::kib: return "a whole number of KiB";
    case Unit::mib: return "a whole number of MiB";
    case Unit::seconds: return "a number of seconds";
    case Unit::path: return "a path";
    case Unit::text: return "a text";
  }
  return "";
}

std::string format(double x) {
  std::string s = std::to_string(x);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

InvalidArgument bad(const Variable& v, const std::string& text, const std::string& why) {
  return InvalidArgument("cush (environment)", v.name,
                         "'" + text + "' " + why + " (expected " + unit_name(v.unit) + " from " + format(v.min) +
                             " to " + format(v.max) + ")");
}

// The value of `v` in its own unit.
double parse(const Variable& v, const std::string& text) {
  double x = 0;
  if (v.unit == Unit::seconds) {
    // from_chars, not strtod: a plain decimal number only (strtod would take leading blanks, a '+'
    // and hexadecimal floats, which the documented syntax does not allow).
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), x, std::chars_format::general);
    if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(x)) throw bad(v, text, "is not a number");
  } else {
    unsigned long long n = 0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, n);
    if (ec == std::errc::result_out_of_range) throw bad(v, text, "is too large");
    if (ec != std::errc() || ptr != last) throw bad(v, text, "is not a whole number");
    x = static_cast<double>(n);
  }
  if (x < v.min || x > v.max) throw bad(v, text, "is out of range");
  return x;
}

struct Cache {
  std::mutex mutex;
  std::map<std::string, double, std::less<>> numbers;
  std::map<std::string, std::string, std::less<>> texts;
};

Cache& cache() {
  static Cache c;
  return c;
}

std::string raw(const Variable& v) {
  const char* text = std::getenv(v.name);
  return text != nullptr ? std::string(text) : std::string();
}

double number(std::string_view name, bool want_seconds) {
  const Variable& v = find(name);
  if (v.unit == Unit::path || v.unit == Unit::text || (v.unit == Unit::seconds) != want_seconds)
    throw std::logic_error("cush: " + std::string(name) + " is read with the wrong function");
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  if (const auto it = c.numbers.find(name); it != c.numbers.end()) return it->second;
  const std::string text = raw(v);
  const double x = text.empty() ? v.fallback : parse(v, text);  // a bad value is not cached
  c.numbers.emplace(std::string(name), x);
  return x;
}

}  // namespace

std::span<const Variable> variables() noexcept { return table(); }

std::size_t size(std::string_view name) {
  const double x = number(name, false);
  switch (find(name).unit) {
    case Unit::kib: return static_cast<std::size_t>(x) << 10;
    case Unit::mib: return static_cast<std::size_t>(x) << 20;
    default: return static_cast<std::size_t>(x);
  }
}

double seconds(std::string_view name) { return number(name, true); }

std::string text(std::string_view name) {
  const Variable& v = find(name);
  if (v.unit != Unit::path && v.unit != Unit::text)
    throw std::logic_error("cush: " + std::string(name) + " is not a path or text");
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  if (const auto it = c.texts.find(name); it != c.texts.end()) return it->second;
  return c.texts.emplace(std::string(name), raw(v)).first->second;
}

bool is_set(std::string_view name) { return !raw(find(name)).empty(); }

void refresh() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.numbers.clear();
  c.texts.clear();
}

}  // namespace cush::detail::env
