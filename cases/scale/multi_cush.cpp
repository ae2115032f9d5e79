// Case "scale", multi-GPU cush: seed 002 Listing 2.2. The same job as multi_cuda.cpp.

#include "cush/cush.hpp"
#include "scale.hpp"

namespace cases {
namespace scale {

void multi_cush(const float* host_buf, float* host_recv_buf, std::size_t host_size, const Devices& gpus) {
  cush::Plan<float> unif_plan(cush::DeviceSet(gpus.cush), host_size, cush::Distribution::uniform());
  unif_plan.scatter(host_buf);
  unif_plan.for_each([](cush::Segment<float> s) { launch_scale(s.data(), s.size(), s.stream()); });
  unif_plan.gather(host_recv_buf);
  unif_plan.wait();
}

}  // namespace scale
}  // namespace cases
