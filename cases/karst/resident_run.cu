// Case "karst": runs the resident kernel (resident.cu, compiled into this program) once in a
// shape chosen on the command line, not the one resident_shape() picks, so that a tool such as
// compute-sanitizer can be pointed at one configuration (bench/probes/racecheck/repro/run.sh):
//   karst_resident_run N M STEPS MEMBERS CLUSTER [REGISTERS [PERIOD]]
// dt takes PERIOD values in turn (default 3), so the factors are redone at most steps.
// Prints the shape and a checksum of the curves.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cush/device_buffer.hpp"
#include "resident.cu"

namespace karst = cases::karst;

template <class T>
cush::DeviceBuffer upload(const std::vector<T>& v) {
  cush::DeviceBuffer d(0, v.size() * sizeof(T));
  CUSH_CUDA_CHECK(cudaMemcpy(d.data(), v.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

int main(int argc, char** argv) try {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s N M STEPS MEMBERS CLUSTER [REGISTERS [PERIOD]]\n", argv[0]);
    return 2;
  }
  karst::Grid grid{std::strtoul(argv[1], nullptr, 10), std::strtoul(argv[2], nullptr, 10), 0.05};
  const std::size_t steps = std::strtoul(argv[3], nullptr, 10), count = std::strtoul(argv[4], nullptr, 10);
  const std::optional<karst::ResidentShape> fits = karst::shape_of(grid, std::atoi(argv[5]), argc > 6 ? std::atoi(argv[6]) : 1);
  if (!fits) {
    std::fprintf(stderr, "karst_resident_run: no shape with clusters of %s blocks for N %zu\n", argv[5], grid.n);
    return 2;
  }
  const karst::ResidentShape& shape = *fits;
  const std::size_t period = argc > 7 ? std::strtoul(argv[7], nullptr, 10) : 3;

  std::vector<karst::Groups> members(count);
  for (std::size_t k = 0; k < count; ++k) members[k] = karst::Groups{900.0 + 10.0 * k, 3.0 + 0.1 * k, 2.0, 2.235, 0.0};
  std::vector<double> forcing(3 * steps);
  for (std::size_t s = 0; s < steps; ++s) {
    forcing[s] = (0.25 + 0.125 * static_cast<double>(s % period)) / static_cast<double>(grid.n);
    forcing[steps + s] = 1.0 + 0.01 * static_cast<double>(s % 5);
    forcing[2 * steps + s] = 1.0 + 0.3 * static_cast<double>(s % 7) / 7.0;
  }
  const cush::DeviceBuffer d_members = upload(members), d_forcing = upload(forcing);
  const cush::DeviceBuffer curves_buffer(0, count * steps * sizeof(double));
  const cush::DeviceBuffer rock(0, count * grid.m * grid.n * sizeof(double)), water(0, count * grid.n * sizeof(double));
  karst::ResidentRun run;
  run.members = static_cast<const karst::Groups*>(d_members.data());
  run.count = count;
  run.forcing = static_cast<const double*>(d_forcing.data());
  run.steps = steps;
  run.grid = grid;
  run.curves = static_cast<double*>(curves_buffer.data());
  run.rock = static_cast<double*>(rock.data());
  run.water = static_cast<double*>(water.data());
  karst::launch_resident(run, shape, nullptr);
  CUSH_CUDA_CHECK(cudaGetLastError());
  CUSH_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> curves(count * steps);
  CUSH_CUDA_CHECK(cudaMemcpy(curves.data(), run.curves, curves.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double sum = 0.0;
  for (double c : curves) sum += c;
  std::printf("N %zu M %zu steps %zu members %zu: cluster %d, %d columns, %d threads, %zu B shared, R %d; curves sum %.17g\n",
              grid.n, grid.m, steps, count, shape.cluster, shape.columns, shape.threads, shape.shared, shape.registers, sum);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "karst_resident_run: %s\n", e.what());
  return 1;
}
