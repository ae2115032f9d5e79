// A CUDA application that uses an installed cush through find_package(cush): it launches its own
// kernel on the segments of a plan. It builds anywhere (no GPU needed to compile and link) and,
// where there are GPUs, moves a buffer through all of them and checks every element.

#include <cush/cush.hpp>

#include <cstdio>
#include <vector>

namespace {

__global__ void affine(float* x, std::size_t n, std::size_t offset) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = 2.0F * x[i] + static_cast<float>(offset + i);
}

}  // namespace

int main() {
  const cush::RuntimeVersions v = cush::runtime_versions();
  std::printf("cush %s, CUDA runtime %s, NCCL %s\n", v.cush.c_str(), v.cuda_runtime.c_str(), v.nccl.c_str());
  if (cush::DeviceSet::available() == 0) {
    std::printf("no GPU (%s): built, linked and ran the host part only\n", cush::DeviceSet::unavailable_reason().c_str());
    return 0;
  }
  const std::size_t n = 100'003;
  std::vector<float> in(n), out(n, -1.0F);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1000);
  cush::Plan<float> plan(cush::DeviceSet::all(), n);
  plan.scatter(in);
  plan.for_each([](cush::Segment<float> s) {
    const unsigned blocks = static_cast<unsigned>((s.size() + 255) / 256);
    affine<<<blocks, 256, 0, s.stream()>>>(s.data(), s.size(), s.offset());
  });
  plan.gather(out);
  plan.wait();
  for (std::size_t i = 0; i < n; ++i) {
    if (out[i] != 2.0F * in[i] + static_cast<float>(i)) {
      std::printf("element %zu: %g, expected %g\n", i, out[i], 2.0F * in[i] + static_cast<float>(i));
      return 1;
    }
  }
  std::printf("a kernel on %zu GPU(s) through a plan: all %zu elements right\n", plan.devices().size(), n);
  return 0;
}
