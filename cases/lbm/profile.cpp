// Case "lbm": the steady velocity profile of a duct against the analytic series, for the README's
// plot. Runs the duct from rest to steady state (1.2 M^2 / nu + 200 steps) on one GPU with the
// cush variant, then writes the centre row y = ny / 2 and the centre column x = nx / 2 of
// cross-section z = 0 as CSV (axis, coordinate, u_z, analytic u_z), and prints the L2 error.
//
// Usage: cush_lbm_profile [M=32] [tau=0.8] [storage=fp32|fp16s] > profile.csv

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cush/device_set.hpp"
#include "lbm.hpp"

int main(int argc, char** argv) {
  namespace lbm = cases::lbm;
  if (cush::DeviceSet::available() == 0) {
    std::fprintf(stderr, "  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
    return 0;
  }
  try {
    const std::size_t m = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 32;
    const double tau = argc > 2 ? std::strtod(argv[2], nullptr) : 0.8;
    const bool half = argc > 3 && std::string(argv[3]) == "fp16s";
    lbm::Duct d{m + 2, m + 2, 4, tau, 0.0};
    d.force = lbm::force_for(d, 0.05);
    const auto steps = static_cast<std::size_t>(1.2 * static_cast<double>(m * m) / d.viscosity()) + 200;
    lbm::MultiCush v(d, cases::Devices::first(1),
                     {lbm::Pattern::esoteric, half ? lbm::Storage::fp16s : lbm::Storage::fp32, true, 0.0f});
    v.run(steps);
    const lbm::Moments out = v.moments();
    std::printf("axis,coordinate,uz,analytic\n");
    for (std::size_t x = 1; x + 1 < d.nx; ++x)
      std::printf("x,%.4f,%.9g,%.9g\n", static_cast<double>(x) - 0.5 * static_cast<double>(d.nx - 1),
                  out.uz[x + d.nx * (d.ny / 2)], lbm::analytic_uz(d, x, d.ny / 2));
    for (std::size_t y = 1; y + 1 < d.ny; ++y)
      std::printf("y,%.4f,%.9g,%.9g\n", static_cast<double>(y) - 0.5 * static_cast<double>(d.ny - 1),
                  out.uz[d.nx / 2 + d.nx * y], lbm::analytic_uz(d, d.nx / 2, y));
    std::fprintf(stderr, "duct %zu x %zu fluid, tau %.3f, %s, %zu steps: L2 error %.4e (2 C / M^2 = %.4e at C(0.8) = 0.95)\n", m, m,
                 tau, half ? "fp16s" : "fp32", steps, lbm::l2_error(d, out, 0), 2 * 0.95 / static_cast<double>(m * m));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cush_lbm_profile: %s\n", e.what());
    return 1;
  }
}
