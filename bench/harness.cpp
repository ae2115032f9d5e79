#include "harness.hpp"

#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cush/device_guard.hpp"
#include "cush/device_set.hpp"
#include "cush/error.hpp"
#include "cush/version.hpp"
#include "cush/virtual_gpus.hpp"

namespace cush_bench {

EventTimer::EventTimer(std::span<const int> devices) : devices_(devices.begin(), devices.end()) {
  for (int d : devices_) {
    start_.emplace_back(d, true);
    stop_.emplace_back(d, true);
  }
}

void EventTimer::start(std::span<const cudaStream_t> streams) {
  synchronize(devices_);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    cush::DeviceGuard guard(devices_[i]);
    start_[i].record(streams[i]);
  }
}

double EventTimer::stop(std::span<const cudaStream_t> streams) {
  double longest = 0;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    cush::DeviceGuard guard(devices_[i]);
    stop_[i].record(streams[i]);
  }
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    stop_[i].synchronize();
    longest = std::max(longest, static_cast<double>(stop_[i].elapsed_since(start_[i])) * 1e-3);
  }
  return longest;
}

void synchronize(std::span<const int> devices) {
  for (int d : devices) {
    cush::DeviceGuard guard(d);
    CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

double min_time(double fallback) {
  return cush::detail::env::is_set("CUSH_BENCH_MIN_TIME") ? cush::detail::env::seconds("CUSH_BENCH_MIN_TIME") : fallback;
}

std::vector<int> all_devices() {
  const int n = cush::DeviceSet::available();
  std::vector<int> ids(static_cast<std::size_t>(n > 0 && cush::virtual_gpus_active() ? 1 : n));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  return ids;
}

int gpus_for_rows() { return static_cast<int>(all_devices().size()); }

void add_context() {
  const cush::RuntimeVersions v = cush::runtime_versions();
  benchmark::AddCustomContext("cush", v.cush);
  benchmark::AddCustomContext("cuda_runtime", v.cuda_runtime);
  benchmark::AddCustomContext("cuda_driver", v.cuda_driver);
  benchmark::AddCustomContext("nccl", v.nccl);
  const int n = gpus_for_rows();
  benchmark::AddCustomContext("gpu_count", std::to_string(n));
  if (cush::virtual_gpus_active()) benchmark::AddCustomContext("virtual_gpus", cush::describe_devices());
  if (n > 0) {
    const cush::DeviceSet all = cush::DeviceSet(all_devices());
    std::string models;
    for (std::size_t i = 0; i < all.size(); ++i) models += (i ? ", " : "") + all.topology().device(i).name;
    benchmark::AddCustomContext("gpus", models);
    benchmark::AddCustomContext("peer_access", all.topology().all_peer_access() ? "all pairs" : "not all pairs");
  }
}

detail::Kept& detail::kept_slot() {
  static Kept slot;
  return slot;
}

void forget_kept() {
  detail::Kept& slot = detail::kept_slot();
  slot.thing.reset();
  slot.key.clear();
}

namespace {

std::atomic<const char*> current_row{nullptr};

void write_text(const char* text) {
  if (text != nullptr) (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

// A crash (a segmentation fault in a row, an abort) says which row and where before the process
// ends as it would have (the default action, raised again). write() is async-signal-safe;
// backtrace() is not guaranteed to be, which is why run() calls it once before any row (it loads
// the unwinder then, not inside the handler) -- good enough for a process that is dying anyway.
extern "C" void on_crash(int sig) {
  write_text("\n*** benchmark crashed (");
  write_text(sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGBUS ? "SIGBUS" : "SIGFPE");
  write_text(") in row ");
  const char* row = current_row.load();
  write_text(row != nullptr ? row : "(none: outside the add_timed rows)");
  write_text("; stack (addr2line -e <binary> -f -C <offset> names an offset):\n");
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void entering_row(const char* name) { current_row.store(name); }

int run(int argc, char** argv, const char* program, void (*register_benchmarks)()) {
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE}) std::signal(sig, on_crash);
  void* warm[1];
  ::backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;  // it names them
  int gpus = 0;
  try {
    gpus = cush::DeviceSet::available();
  } catch (const cush::Error& e) {  // a malformed CUSH_VIRTUAL_GPUS
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
  if (gpus == 0) {
    std::printf("%s: no GPU on this machine (%s); nothing to measure.\n", program,
                cush::DeviceSet::unavailable_reason().c_str());
    return 0;
  }
  if (cush::virtual_gpus_active())
    std::printf("%s: virtual GPUs (%s): rows on one GPU only; multi-GPU rows are left out, since logical "
                "devices sharing a GPU cannot show what several GPUs do\n",
                program, cush::describe_devices().c_str());
  add_context();
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  forget_kept();  // while CUDA is still up
  benchmark::Shutdown();
  return 0;
}

}  // namespace cush_bench
