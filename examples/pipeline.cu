// A pipeline of slices: a vector too large to wait for is uploaded, transformed and downloaded
// in k slices of every segment, so that slice i + 1 crosses the host link while slice i is
// transformed and slice i - 1 comes back. Two plans give each GPU two streams (the lanes): the
// upload lane (`in`) and the compute-and-download lane (`out`), joined by out.after(in).
//
// Usage: cush_pipeline [MiB=512] [slices=8]

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cush/cush.hpp"

namespace {

__global__ void transform(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 3.0F * x[i] * x[i] - 1.0F;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Moves `host_in` through the GPUs into `host_out`, in `k` slices; returns the seconds taken.
double run(cush::Plan<float>& in, cush::Plan<float>& out, const float* host_in, float* host_out, std::size_t k) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < k; ++i) {
    const cush::Slice slice{i, k};
    in.scatter(host_in, slice);
    out.after(in);  // slice i's transform waits for slice i's upload, not for later ones
    out.for_each([&](cush::Segment<float> s) {
      const cush::Segment<float> x = in.segment(s.pos(), slice);
      const cush::Segment<float> y = out.segment(s.pos(), slice);
      if (x.empty()) return;
      transform<<<static_cast<unsigned>((x.size() + 255) / 256), 256, 0, s.stream()>>>(x.data(), y.data(), x.size());
    });
    out.gather(host_out, slice);
  }
  in.after(out);  // the next run's uploads must not overwrite what is still being read
  out.wait();
  return seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
    const std::size_t slices = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 8;
    const std::size_t n = (mib << 20) / sizeof(float) + 5;
    const cush::DeviceSet gpus = cush::DeviceSet::all();
    cush::PinnedBuffer<float> host_in(n), host_out(n);
    for (std::size_t i = 0; i < n; ++i) host_in[i] = static_cast<float>(i % 1024) / 512.0F;
    cush::Plan<float> in(gpus, n);
    cush::Plan<float> out(gpus, n);
    run(in, out, host_in.data(), host_out.data(), 1);  // warm-up: contexts and modules

    const double whole = run(in, out, host_in.data(), host_out.data(), 1);
    const double piped = run(in, out, host_in.data(), host_out.data(), slices);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += host_out[i] != 3.0F * host_in[i] * host_in[i] - 1.0F ? 1 : 0;
    std::printf("cush pipeline: %zu MiB on %zu GPU(s): one piece %.2f ms, %zu slices %.2f ms; %s\n", mib, gpus.size(),
                whole * 1e3, slices, piped * 1e3, wrong == 0 ? "all elements correct" : "WRONG ELEMENTS");
    return wrong == 0 ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_pipeline: %s\n", e.what());
    return 1;
  }
}
