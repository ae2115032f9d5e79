#include "core/fault_injection.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>

#include "core/env.hpp"
#include "cush/error.hpp"

namespace cush {
namespace detail {

namespace {

struct State {
  std::mutex mutex;
  bool armed = false;
  std::optional<std::size_t> fail_at;
  faults::Record record;
  std::string sites_folder;     // CUSH_FAULT_SITES
  std::set<faults::Site> reached;  // every site this process reached, for CUSH_FAULT_SITES
};

// Never destroyed: checked calls may run in other static objects' destructors.
State& state() {
  static State* s = new State;
  return *s;
}

void write_reached_sites() {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  const std::string path = s.sites_folder + "/sites-" + std::to_string(::getpid()) + ".txt";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cush: CUSH_FAULT_SITES: cannot write %s\n", path.c_str());
    return;
  }
  for (const faults::Site& site : s.reached) std::fprintf(f, "%s\n", site.str().c_str());
  std::fclose(f);
}

// Recording for CUSH_FAULT_SITES starts before main; the folder must exist.
bool record_sites_from_environment() {
  std::string folder = env::text("CUSH_FAULT_SITES");
  if (folder.empty()) return false;
  state().sites_folder = std::move(folder);
  std::atexit(write_reached_sites);
  return true;
}

const bool recording = record_sites_from_environment();

}  // namespace

std::atomic<bool> faults_armed{recording};

bool fault_here(const char* call, const char* file, int line) noexcept {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  try {
    faults::Site site{file, line, call};
    if (recording) s.reached.insert(site);
    if (!s.armed) return false;
    const std::size_t number = s.record.calls++;
    s.record.sites.emplace(site, number);  // kept only the first time
    if (!s.fail_at || number != *s.fail_at) return false;
    s.record.failed = std::move(site);
    return true;
  } catch (...) {  // out of host memory while counting: let the call run
    return false;
  }
}

cudaError_t injected_cuda_error(const char* call) noexcept {
  for (const char* allocation : {"cudaMalloc", "cudaHostAlloc", "cudaMallocHost", "cudaMallocAsync"})
    if (std::strncmp(call, allocation, std::strlen(allocation)) == 0) return cudaErrorMemoryAllocation;
  return cudaErrorUnknown;
}

bool fails_after_the_call(const char* call) noexcept { return std::strstr(call, "Synchronize(") != nullptr; }

namespace faults {

std::string Site::str() const {
  // __FILE__ is an absolute path in CMake builds; the part from the source tree's top folders on
  // reads the same on every host.
  std::string shown = file;
  for (const char* top : {"/libcush/", "/include/", "/cases/", "/tests/"}) {
    const std::size_t at = shown.rfind(top);
    if (at != std::string::npos) {
      shown = shown.substr(at + 1);
      break;
    }
  }
  return shown + ":" + std::to_string(line) + "\t" + call;
}

void arm(std::optional<std::size_t> fail_at) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.armed) throw std::logic_error("cush::detail::faults::arm: already armed");
  s.armed = true;
  s.fail_at = fail_at;
  s.record = Record{};
  faults_armed.store(true);
}

Record disarm() {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.armed = false;
  faults_armed.store(recording);
  return std::move(s.record);
}

}  // namespace faults
}  // namespace detail
}  // namespace cush
