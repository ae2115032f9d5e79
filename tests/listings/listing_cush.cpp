// Seed 002, Listing 2.2, with cush: the same job as listing_cuda.cpp.

#include "cush/cush.hpp"
#include "listing_kernel.hpp"

namespace listing {

void listing_cush(const float* host_buf, float* host_recv_buf, std::size_t host_size, int gpu_n) {
  cush::Plan<float> unif_plan(cush::DeviceSet::first(gpu_n), host_size, cush::Distribution::uniform());
  unif_plan.scatter(host_buf);
  exec_kernel(unif_plan);
  unif_plan.gather(host_recv_buf);
  unif_plan.wait();
}

}  // namespace listing
