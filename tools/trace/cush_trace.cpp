// cush_trace: a record of every copy, kernel and memset that a CUDA program runs on the GPUs,
// written as CSV. It stands in for Nsight Systems (nsys) where that is not installed.
//
// What it is: a shared library that the CUDA driver loads into any CUDA program when the
// environment variable CUDA_INJECTION64_PATH names it. The driver calls InitializeInjection()
// below once, inside cuInit (the program's first CUDA call); that turns on CUPTI's activity
// records. CUPTI fills 8 MiB buffers with records and hands each full buffer to
// buffer_completed(), which appends one CSV line per record. At exit the last, partly filled
// buffers are flushed and the file is closed. The program needs no change and no rebuild.
//
// Use (from the repository root, after `cmake --build build`):
//
//   CUDA_INJECTION64_PATH=build/tools/trace/libcush_trace.so CUSH_TRACE_OUT=t.csv ./program
//   PYTHONPATH=tools python3 -m cushreport trace t.csv      # a typical operation's copies and kernels
//
// CUSH_TRACE_OUT is the CSV file to write; "%p" in it becomes the process id (for programs that
// start other CUDA processes, which inherit the environment). Without it nothing is traced.
// Only a normal exit (return from main, exit()) writes the last records; a crash or _exit() loses
// them.
//
// The CSV, one line per record, times in ns on CUPTI's clock (the same for all GPUs):
//
//   kind,start_ns,end_ns,device,stream,bytes,src_device,dst_device,copy_kind,name
//
//   kind       "copy", "kernel" or "memset"; with CUSH_TRACE_API=1 also "api": the host's time in
//              one CUDA runtime call (its name in `name`, the calling thread's id in `stream`, no
//              device), to see where a program's host time goes between the GPUs' work
//   device     the CUDA device ordinal that ran it; stream: CUPTI's stream id
//   bytes      bytes copied or set (0 for kernels)
//   src_device, dst_device  copies only: the source and destination device; for a copy to or from
//              host memory, or within one device, both are `device`
//   copy_kind  copies only: CUPTI's CUpti_ActivityMemcpyKind number (1 HtoD, 2 DtoH, 8 DtoD,
//              10 PtoP, ...)
//   name       kernels: the demangled kernel name (the raw one if it does not demangle), in
//              double quotes, inner quotes doubled; api: the runtime function (cudaMemcpyAsync_v3020)
//
// Record types read (CUPTI of CUDA 13): CUpti_ActivityMemcpy6 (CUPTI_ACTIVITY_KIND_MEMCPY),
// CUpti_ActivityMemcpyPtoP4 (CUPTI_ACTIVITY_KIND_MEMCPY2: copies between two GPUs),
// CUpti_ActivityKernel10 (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which does not serialize kernels),
// CUpti_ActivityMemset4 (CUPTI_ACTIVITY_KIND_MEMSET), CUpti_ActivityAPI (CUPTI_ACTIVITY_KIND_RUNTIME).
//
// Errors never stop the program: every failed CUPTI call prints
// "cush_trace: <call> failed: <reason>" to stderr, and tracing goes on with what works.

#include <cupti.h>
#include <cxxabi.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;  // one activity buffer: 8 MiB
constexpr std::size_t kBufferAlign = 8;         // CUPTI needs 8-byte aligned buffers

// The output file and what was written to it; all guarded by g_mutex (CUPTI calls
// buffer_completed from its own thread, and from the thread that flushes).
std::mutex g_mutex;
std::FILE* g_out = nullptr;
std::string g_path;
std::uint64_t g_records = 0;
std::size_t g_dropped = 0;

// True on success; otherwise prints "cush_trace: <call> failed: <reason>".
bool cupti_ok(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI error";
  std::fprintf(stderr, "cush_trace: %s failed: %s\n", call, text);
  return false;
}
#define CUSH_CUPTI(call) cupti_ok((call), #call)

// A kernel name as a CSV field: demangled where it demangles, in double quotes, inner quotes doubled.
std::string kernel_name_field(const char* mangled) {
  if (mangled == nullptr) return "\"?\"";
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  const std::string name = status == 0 && demangled != nullptr ? demangled : mangled;
  std::free(demangled);
  std::string field = "\"";
  for (const char c : name) {
    if (c == '"') field += '"';
    field += c;
  }
  return field + '"';
}

// One CSV line for a record of the kinds enabled below; other kinds are skipped.
void write_record(std::FILE* out, const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      std::fprintf(out, "copy,%" PRIu64 ",%" PRIu64 ",%u,%u,%" PRIu64 ",%u,%u,%u,\n", r->start, r->end, r->deviceId,
                   r->streamId, r->bytes, r->deviceId, r->deviceId, static_cast<unsigned>(r->copyKind));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      std::fprintf(out, "copy,%" PRIu64 ",%" PRIu64 ",%u,%u,%" PRIu64 ",%u,%u,%u,\n", r->start, r->end, r->deviceId,
                   r->streamId, r->bytes, r->srcDeviceId, r->dstDeviceId, static_cast<unsigned>(r->copyKind));
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* r = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      std::fprintf(out, "kernel,%" PRIu64 ",%" PRIu64 ",%u,%u,0,,,,%s\n", r->start, r->end, r->deviceId, r->streamId,
                   kernel_name_field(r->name).c_str());
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      // Host time in a CUDA runtime call: no device; the stream column holds the calling thread.
      const auto* r = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const char* name = nullptr;
      if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, r->cbid, &name) != CUPTI_SUCCESS || name == nullptr)
        name = "?";
      std::fprintf(out, "api,%" PRIu64 ",%" PRIu64 ",,%u,0,,,,%s\n", r->start, r->end, r->threadId, name);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      std::fprintf(out, "memset,%" PRIu64 ",%" PRIu64 ",%u,%u,%" PRIu64 ",,,,\n", r->start, r->end, r->deviceId,
                   r->streamId, r->bytes);
      break;
    }
    default:
      return;
  }
  ++g_records;
}

// CUPTI asks for an empty buffer to fill.
void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;  // no buffer: CUPTI drops records and counts them
  *max_records = 0;                               // as many as fit
  if (*buffer == nullptr) std::fprintf(stderr, "cush_trace: out of host memory for an activity buffer\n");
}

// CUPTI hands back a filled buffer (full, or flushed): write its records, free it.
void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t /*size*/,
                               std::size_t valid_size) {
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    CUpti_Activity* record = nullptr;
    for (;;) {
      const CUptiResult result = cuptiActivityGetNextRecord(buffer, valid_size, &record);
      if (result == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the end of the buffer's records
      if (!cupti_ok(result, "cuptiActivityGetNextRecord")) break;
      if (g_out != nullptr) write_record(g_out, record);
    }
    std::size_t dropped = 0;
    if (CUSH_CUPTI(cuptiActivityGetNumDroppedRecords(context, stream, &dropped))) g_dropped += dropped;
  }
  std::free(buffer);
}

// At exit: the records still in CUPTI's buffers, then the file.
void at_exit() {
  CUSH_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  const std::lock_guard<std::mutex> lock(g_mutex);
  std::size_t dropped = 0;
  if (CUSH_CUPTI(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped))) g_dropped += dropped;
  if (g_dropped > 0) {
    std::fprintf(stderr, "cush_trace: %zu activity records were dropped (CUPTI had no buffer space for them)\n",
                 g_dropped);
  }
  if (g_out == nullptr) return;
  const bool write_failed = std::ferror(g_out) != 0;
  if (std::fclose(g_out) != 0 || write_failed) {
    std::fprintf(stderr, "cush_trace: writing %s failed: %s\n", g_path.c_str(), std::strerror(errno));
  } else {
    std::fprintf(stderr, "cush_trace: %" PRIu64 " records written to %s\n", g_records, g_path.c_str());
  }
  g_out = nullptr;
}

// CUSH_TRACE_OUT with "%p" replaced by the process id.
std::string output_path(const char* pattern) {
  std::string path = pattern;
  const std::string pid = std::to_string(static_cast<long>(getpid()));
  for (std::size_t at = path.find("%p"); at != std::string::npos; at = path.find("%p", at + pid.size())) {
    path.replace(at, 2, pid);
  }
  return path;
}

}  // namespace

// The CUDA driver's entry point for libraries named by CUDA_INJECTION64_PATH, called once at
// cuInit. It returns 1 (success, as in CUPTI's injection samples) also when it traces nothing:
// tracing must never stop the program.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* out = std::getenv("CUSH_TRACE_OUT");
    if (out == nullptr || *out == '\0') {
      std::fprintf(stderr, "cush_trace: set CUSH_TRACE_OUT to the CSV file to write\n");
      return;
    }
    {
      const std::lock_guard<std::mutex> lock(g_mutex);
      g_path = output_path(out);
      g_out = std::fopen(g_path.c_str(), "w");
      if (g_out == nullptr) {
        std::fprintf(stderr, "cush_trace: cannot open %s: %s\n", g_path.c_str(), std::strerror(errno));
        return;
      }
      std::fputs("kind,start_ns,end_ns,device,stream,bytes,src_device,dst_device,copy_kind,name\n", g_out);
    }
    if (!CUSH_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed))) {
      const std::lock_guard<std::mutex> lock(g_mutex);
      std::fclose(g_out);  // the header alone: the reader sees an empty trace, stderr says why
      g_out = nullptr;
      return;
    }
    CUSH_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    CUSH_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
    CUSH_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CUSH_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    const char* api = std::getenv("CUSH_TRACE_API");
    if (api != nullptr && std::strcmp(api, "1") == 0) CUSH_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    if (std::atexit(at_exit) != 0) std::fprintf(stderr, "cush_trace: atexit failed: the last records will be lost\n");
  });
  return 1;
}
