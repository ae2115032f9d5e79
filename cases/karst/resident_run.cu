// Case "karst": runs the resident kernel (resident.cu, compiled into this program) once in a
// shape chosen on the command line, not the one resident_shape() picks, so that a tool such as
// compute-sanitizer can be pointed at one configuration (scripts/racecheck_repro/run.sh):
//   karst_resident_run N M STEPS MEMBERS CLUSTER [REGISTERS [PERIOD]]
// dt takes PERIOD values in turn (default 3), so the factors are redone at most steps.
// Prints the shape and a checksum of the curves.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "resident.cu"

namespace karst = cases::karst;

#define CHECK(call)                                                                 \
  do {                                                                              \
    const cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));              \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

template <class T>
T* upload(const std::vector<T>& v) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, v.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s N M STEPS MEMBERS CLUSTER [REGISTERS [PERIOD]]\n", argv[0]);
    return 2;
  }
  karst::Grid grid{std::strtoul(argv[1], nullptr, 10), std::strtoul(argv[2], nullptr, 10), 0.05};
  const std::size_t steps = std::strtoul(argv[3], nullptr, 10), count = std::strtoul(argv[4], nullptr, 10);
  karst::ResidentShape shape;
  shape.cluster = std::atoi(argv[5]);
  shape.registers = argc > 6 ? std::atoi(argv[6]) : 1;
  const std::size_t period = argc > 7 ? std::strtoul(argv[7], nullptr, 10) : 3;
  shape.columns = static_cast<int>((grid.n + shape.cluster - 1) / shape.cluster);
  shape.threads = std::max(karst::device::kWaterThreads, (shape.columns + 31) / 32 * 32);
  shape.shared = karst::shared_bytes(grid.n, grid.m, static_cast<std::size_t>(shape.columns), shape.registers);

  std::vector<karst::Groups> members(count);
  for (std::size_t k = 0; k < count; ++k) members[k] = karst::Groups{900.0 + 10.0 * k, 3.0 + 0.1 * k, 2.0, 2.235, 0.0};
  std::vector<double> forcing(3 * steps);
  for (std::size_t s = 0; s < steps; ++s) {
    forcing[s] = (0.25 + 0.125 * static_cast<double>(s % period)) / static_cast<double>(grid.n);
    forcing[steps + s] = 1.0 + 0.01 * static_cast<double>(s % 5);
    forcing[2 * steps + s] = 1.0 + 0.3 * static_cast<double>(s % 7) / 7.0;
  }
  karst::ResidentRun run;
  run.members = upload(members);
  run.count = count;
  run.forcing = upload(forcing);
  run.steps = steps;
  run.grid = grid;
  CHECK(cudaMalloc(&run.curves, count * steps * sizeof(double)));
  CHECK(cudaMalloc(&run.rock, count * grid.m * grid.n * sizeof(double)));
  CHECK(cudaMalloc(&run.water, count * grid.n * sizeof(double)));
  karst::launch_resident(run, shape, nullptr);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<double> curves(count * steps);
  CHECK(cudaMemcpy(curves.data(), run.curves, curves.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double sum = 0.0;
  for (double c : curves) sum += c;
  std::printf("N %zu M %zu steps %zu members %zu: cluster %d, %d columns, %d threads, %zu B shared, R %d; curves sum %.17g\n",
              grid.n, grid.m, steps, count, shape.cluster, shape.columns, shape.threads, shape.shared, shape.registers, sum);
  CHECK(cudaFree(const_cast<karst::Groups*>(run.members)));
  CHECK(cudaFree(const_cast<double*>(run.forcing)));
  CHECK(cudaFree(run.curves));
  CHECK(cudaFree(run.rock));
  CHECK(cudaFree(run.water));
  return 0;
}
