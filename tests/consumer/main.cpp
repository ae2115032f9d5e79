// Links cush through find_package(cush) and moves a buffer through every GPU if there are any.

#include <cush/cush.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

int main() {
  const cush::RuntimeVersions v = cush::runtime_versions();
  std::printf("cush %s, CUDA runtime %s, NCCL %s\n", v.cush.c_str(), v.cuda_runtime.c_str(), v.nccl.c_str());
  if (cush::DeviceSet::available() == 0) {
    std::printf("no GPU (%s): linked and ran the host part only\n", cush::DeviceSet::unavailable_reason().c_str());
    return 0;
  }
  std::vector<int> in(1001), out(1001, -1);
  std::iota(in.begin(), in.end(), 0);
  cush::Plan<int> plan(cush::DeviceSet::all(), in.size());
  plan.scatter(in);
  plan.gather(out);
  plan.wait();
  if (out != in) {
    std::printf("round trip through the GPUs changed the data\n");
    return 1;
  }
  std::printf("round trip through %zu GPU(s): ok\n", plan.devices().size());
  return 0;
}
