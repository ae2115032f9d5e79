// The cush demo: scatter a host buffer over every GPU, run a kernel on each segment, gather it
// back, check every element and print what each step achieved.
//
// Usage: cush_demo [MiB]   (cush_demo --help says more)

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cush/cush.hpp"
#include "demo_kernel.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double seconds(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Moves in.size() floats through the plan and returns the number of wrong elements. An untimed
// first round trip pays the one-time set-up (staging buffers, copy threads, module loading).
std::size_t round_trip(cush::Plan<float>& plan, std::span<const float> in, std::span<float> out, const char* label) {
  const double bytes = static_cast<double>(in.size_bytes());
  plan.scatter(in);
  plan.gather(out);
  plan.wait();
  const double t_scatter = seconds([&] { plan.scatter(in); plan.wait(); });
  const double t_kernel = seconds([&] {
    plan.for_each([](cush::Segment<float> s) { demo_axpb(s, 2.0F, 1.0F); });
    plan.wait();
  });
  const double t_gather = seconds([&] { plan.gather(out); plan.wait(); });
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < in.size(); ++i) wrong += out[i] != 2.0F * in[i] + 1.0F ? 1 : 0;
  std::printf("  %-9s scatter %7.1f GB/s | kernel %8.1f GB/s (read+write) | gather %7.1f GB/s | %s\n", label,
              bytes / t_scatter / 1e9, 2 * bytes / t_kernel / 1e9, bytes / t_gather / 1e9,
              wrong == 0 ? "all elements correct" : "WRONG ELEMENTS");
  return wrong;
}

constexpr const char* usage =
    "usage: cush_demo [MiB]\n"
    "  Scatters MiB mebibytes of floats (default 1024) from host memory over every GPU, runs a kernel\n"
    "  on each GPU's segment, gathers the result back, checks every element and prints the rates.\n"
    "  Without a GPU it says so and exits 0. CUSH_VIRTUAL_GPUS=<n> runs it on n logical GPUs.\n";

// The size argument in MiB (1 to 1 TiB's worth), or 0 if it is not one.
std::size_t parse_mib(std::string_view text) {
  std::size_t mib = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), mib);
  if (error != std::errc() || end != text.data() + text.size() || mib > (std::size_t{1} << 20)) return 0;
  return mib;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 1024;
  if (argc > 1) {
    const std::string_view arg = argv[1];
    if (arg == "-h" || arg == "--help") {
      std::printf("%s", usage);
      return 0;
    }
    mib = parse_mib(arg);
    if (argc > 2 || mib == 0) {
      std::fprintf(stderr, "cush_demo: %s\n%s", argc > 2 ? "one argument at most" : "MiB must be a whole number from 1 to 1048576", usage);
      return 2;
    }
  }
  const cush::RuntimeVersions v = cush::runtime_versions();
  std::printf("cush %s demo (CUDA runtime %s, driver %s, NCCL %s)\n", v.cush.c_str(), v.cuda_runtime.c_str(),
              v.cuda_driver.c_str(), v.nccl.c_str());
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("No CUDA GPU on this machine (%s).\nThe demo moves data through GPUs, so there is nothing to run here; "
                  "the library and its host tests work without one.\n",
                  cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t n = (mib << 20) / sizeof(float) + 7;  // odd on purpose: segments are uneven
    const cush::DeviceSet gpus = cush::DeviceSet::all();
    std::printf("%zu GPU(s):\n%s", gpus.size(), gpus.topology().describe().c_str());
    cush::Plan<float> plan(gpus, n);
    std::printf("plan: %zu floats (%.1f MiB), %s:", n, static_cast<double>(n * sizeof(float)) / (1 << 20),
                plan.distribution().name().c_str());
    for (std::size_t i = 0; i < gpus.size(); ++i) std::printf(" GPU %d gets %zu", gpus[i], plan.segment(i).size());
    std::printf("\n");

    std::size_t wrong = 0;
    {
      cush::PinnedBuffer<float> in(n), out(n);
      for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1000) * 0.5F;
      wrong += round_trip(plan, in, out, "pinned");
    }
    {
      std::vector<float> in(n), out(n);
      for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 777) * 0.25F;
      wrong += round_trip(plan, in, out, "pageable");
      plan.pin_host(in);
      plan.pin_host(out);
      wrong += round_trip(plan, in, out, "pin_host");
    }
    return wrong == 0 ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_demo: %s\n", e.what());
    return 1;
  }
}
