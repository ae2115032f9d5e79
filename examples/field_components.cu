// A field of several components whose exchange moves only what crosses each face: two
// populations on a periodic 1D lattice split over every GPU, one streaming right and one
// streaming left (the smallest lattice-Boltzmann-like model, D1Q2 without collisions). Each step
// pulls component 0 from the left neighbour and component 1 from the right one, so a block's
// low ghost needs only component 0 and its high ghost only component 1: half the bytes of a full
// exchange. The interior is updated while the ghosts cross (Field::exchange_overlapped). After
// `steps` steps each component is its start shifted by `steps` cells, which is checked exactly.
//
// Usage: cush_field_components [n=1000003] [steps=25]

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "cush/cush.hpp"

namespace {

// Pull streaming over the cells [x0, x0 + count) of block `in` into `out` (same layout).
__global__ void stream(cush::Block<float> in, cush::Block<float> out, std::ptrdiff_t x0, std::ptrdiff_t count) {
  const std::ptrdiff_t x = x0 + static_cast<std::ptrdiff_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (x >= x0 + count) return;
  out.data(0)[in.index(x, 0, 0)] = in.data(0)[in.index(x - 1, 0, 0)];  // moves right
  out.data(1)[in.index(x, 0, 0)] = in.data(1)[in.index(x + 1, 0, 0)];  // moves left
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000003;
    const std::size_t steps = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 25;
    cush::GridOptions options;
    options.periodic = {true, false, false};
    cush::Field<float> a(cush::DeviceSet::all(), cush::Extent3{n, 1, 1}, 1, options, 2);  // 2 components
    cush::Field<float> b = cush::Field<float>::alike(a);
    cush::HaloComponents crossing;
    crossing.fill(0, +1, {0}).fill(0, -1, {1});  // component 0 crosses faces rightwards, 1 leftwards
    std::printf("cush field components: %zu cells x 2 components on %zu GPU(s), %zu steps\n", n, a.devices().size(), steps);

    std::vector<float> start(2 * n);  // component 0's n values, then component 1's
    for (std::size_t i = 0; i < 2 * n; ++i) start[i] = static_cast<float>(i % 8191);
    a.scatter(start.data());
    cush::Field<float>* u = &a;
    cush::Field<float>* v = &b;
    for (std::size_t s = 0; s < steps; ++s) {
      u->exchange_overlapped(crossing, 1, [&](const cush::Block<float>& in, const cush::Box& box) {
        const auto blocks = static_cast<unsigned>((box.size[0] + 255) / 256);
        stream<<<blocks, 256, 0, in.stream()>>>(in, v->block(in.pos()), box.lo[0], static_cast<std::ptrdiff_t>(box.size[0]));
      });
      std::swap(u, v);
    }
    std::vector<float> out(2 * n);
    u->gather(out.data());
    u->wait();
    std::size_t wrong = 0;
    for (std::size_t x = 0; x < n; ++x) {
      wrong += out[x] != start[(x + n - steps % n) % n] ? 1 : 0;          // shifted right
      wrong += out[n + x] != start[n + (x + steps) % n] ? 1 : 0;          // shifted left
    }
    std::printf("  %zu of %zu values wrong\n", wrong, 2 * n);
    return wrong == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cush_field_components: %s\n", e.what());
    return 1;
  }
}
